import Coffer

/// A to-do item, synced: every change is recorded in the store's outbox in the same
/// transaction, pushed by a `SyncReplica`, and changes from other replicas are pulled in.
@Sync
struct Todo: Entity {
    var id: Id = 0
    @Index var title: String
    var done = false
}
