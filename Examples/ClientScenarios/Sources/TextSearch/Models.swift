import Coffer

/// Cloudant's guide indexes people's descriptions; SmartStore's match queries run on a
/// porter index.
struct Person: Entity {
    var id: Id = 0
    var name: String
    var age: Int
    @FullText(.porter) var description: String
    @FullText(.simple) var tagline: String?
}
