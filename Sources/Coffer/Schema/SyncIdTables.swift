import CLMDB

/// The two identity tables of a synced entity, created when the entity is first registered
/// as synced; an entity without them is not synced and its writes never look at them.
///
/// - `syncIds`: local id (8 bytes big-endian) -> sync id (16 bytes) ‖ the mid (8 bytes
///   big-endian) of the object's newest outbox entry, 0 when it has none. That entry takes
///   the object's next change (coalescing) while its mid is above the send floor; once a
///   pusher took it (the floor reached it) the next change gets a new entry. So taking a
///   batch raises the floor and touches no entry of this table.
/// - `localIds`: sync id -> local id (the reverse, for changes arriving by sync id).
///
/// Objects this replica created with a fresh id have neither entry: their sync id is derived
/// (see ``SyncIdDerivation`` and `Transaction+SyncDerivedIds`), and `syncIds` gets an entry
/// only when their newest outbox entry is no longer their creation. `localIds` holds only
/// sync ids that are not derived.
struct SyncIdTables: Sendable {
    /// Local id -> sync id ‖ newest mid.
    let syncIds: MDB_dbi
    /// Sync id -> local id.
    let localIds: MDB_dbi
    /// The catalog id of the entity, and its records (a derived id names an object only
    /// while it is stored).
    let entityId: UInt32
    let records: MDB_dbi

    /// The tables of the synced entity `entityId` the catalog lists, in any transaction.
    static func listed(entityId: UInt32, entity: @autoclosure () -> String, in transaction: Transaction) throws -> SyncIdTables {
        let names = names(entity: entityId)
        let store = transaction.store
        let what = "the sync ids of \(entity())"
        return SyncIdTables(syncIds: try store.listedDatabase(names.syncIds, in: transaction, what),
                            localIds: try store.listedDatabase(names.localIds, in: transaction, what),
                            entityId: entityId,
                            records: try store.listedDatabase(Catalog.tableName(entityId), in: transaction, entity()))
    }

    /// The size of a `syncIds` value.
    static let syncIdValueSize = 24

    static func names(entity: UInt32) -> (syncIds: String, localIds: String) {
        ("sync.ids.\(entity)", "sync.ids.\(entity).reverse")
    }

    /// The store-wide outbox (mid -> entry).
    static let outboxName = "sync.outbox"
    /// Format 1's map of sync id -> mid of the newest untaken entry, folded into the
    /// `syncIds` values by format 2 (see ``SyncState/format``): its presence marks a store to
    /// convert.
    static let legacyPendingName = "sync.pending"
}
