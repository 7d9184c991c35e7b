import CLMDB

/// The two identity tables of a synced entity: local id -> sync id (8-byte big-endian key,
/// 16-byte UUID value) and sync id -> local id (the reverse). Created when the entity is
/// first registered as synced; an entity without them is not synced and its writes never
/// look at them.
struct SyncIdTables: Sendable {
    /// Local id -> sync id.
    let syncIds: MDB_dbi
    /// Sync id -> local id.
    let localIds: MDB_dbi

    static func names(entity: UInt32) -> (syncIds: String, localIds: String) {
        ("sync.ids.\(entity)", "sync.ids.\(entity).reverse")
    }

    /// The store-wide databases of sync: the outbox (mid -> entry) and the pending map (sync
    /// id -> mid of the object's entry no pusher has taken yet).
    static let outboxName = "sync.outbox"
    static let pendingName = "sync.pending"
}
