import Coffer
import Foundation

/// Synced entities for the sync tests.
enum Synced {
    @Sync
    struct Task: Entity {
        var id: Id = 0
        @Index var title: String
        var done = false
        var priority = 0
        var note: String?
        var folder: ToOne<Synced.Folder> = nil
    }

    @Sync
    struct Folder: Entity {
        var id: Id = 0
        var name: String
    }

    /// A second build's view of `Task` without `note` (which it retires).
    @Sync
    @StoredAs("Task")
    struct TaskWithoutNote: Entity {
        var id: Id = 0
        @Index var title: String
        var done = false
        var priority = 0
        var folder: ToOne<Synced.Folder> = nil
    }

    /// Links to objects of its own entity (removing one rewrites others of the same entity).
    @Sync
    struct Category: Entity {
        var id: Id = 0
        var name: String
        var parent: ToOne<Synced.Category> = nil
    }

    /// Not synced: its writes must leave no trace of sync.
    struct Plain: Entity {
        var id: Id = 0
        var title: String
    }
}
