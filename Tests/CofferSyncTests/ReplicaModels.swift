import Coffer
import Foundation

/// The synced model of the replica tests: one entity with fields of several kinds, so that
/// concurrent writers change different fields of the same objects.
enum Replicated {
    @Sync
    struct Card: Entity {
        var id: Id = 0
        var title = ""
        var count = 0
        var done = false
        var note: String?
    }

    /// Not synced: a replica refuses it.
    struct Scratch: Entity {
        var id: Id = 0
        var text = ""
    }
}
