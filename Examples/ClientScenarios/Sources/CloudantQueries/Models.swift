import Coffer
import Foundation

/// The documents of Cloudant Query's guide: people with pets and a comment, and the
/// orders of the guide's join-like example, linked to customers.
struct Person: Entity {
    var id: Id = 0
    var name: String
    var age: Int
    var pets: [String] = []
    var town: String?
    @FullText(.porter) var comment: String = ""
}

struct Customer: Entity {
    var id: Id = 0
    @Index var name: String
}

struct Order: Entity {
    var id: Id = 0
    var total: Double
    var customer: ToOne<Customer> = nil
}
