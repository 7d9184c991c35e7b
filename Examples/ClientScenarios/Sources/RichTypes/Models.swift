import Coffer
import Foundation

/// Cloudant's documents with a `pet` sub-document.
struct Pet: Embedded, Equatable {
    @Index var species: String
    var name: String
    var age: Int? = nil
}

struct Owner: Entity {
    var id: Id = 0
    var name: String
    var pet: Pet?
    @Index var tags: [String] = []
}

/// Layer's conversations with nested metadata.
struct Conversation: Entity {
    var id: Id = 0
    @Index var title: String
    var metadata: JSONValue = [:]
}

/// A color stored as its hex text.
struct Color: PropertyConvertible, Equatable {
    typealias StoredValue = String
    var hex: String

    struct NotAColor: Error {}

    init(hex: String) { self.hex = hex }
    init(storedValue: String) throws {
        guard storedValue.hasPrefix("#"), storedValue.count == 7 else { throw NotAColor() }
        hex = storedValue
    }
    var storedValue: String { hex }
}

struct Theme: Entity {
    var id: Id = 0
    @Index var accent: Color
    var price: Decimal = 0
    var homepage: URL?
}
