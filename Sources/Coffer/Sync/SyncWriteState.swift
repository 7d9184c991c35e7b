import CLMDB
import Foundation

/// What one write transaction knows of sync, stored inline in `Transaction`: the persisted
/// counters once a synced change loaded them, the transaction's clock tick, the mode, and
/// scratch space for the put being stored. A transaction that touches no synced entity never
/// fills it.
struct SyncWriteState {
    /// The counters read from the catalog at the transaction's first synced change; written
    /// back (when `isDirty`) before the transaction commits.
    var state: SyncState?
    var isDirty = false
    /// The transaction's one clock value: every change it records carries it.
    var tick: UInt64?
    /// Handles of `sync.outbox` and `sync.pending`, valid once `state` is set.
    var outbox: MDB_dbi = 0
    var pending: MDB_dbi = 0
    /// Set while remote changes are applied: writes go through the whole mutation path but
    /// record no outbox entry (a pulled change is not sent back).
    var isApplyingRemote = false
    /// The sync id the next insert of the entity takes (a remote object arriving with its id).
    var arrivingSyncId: (entityId: UInt32, syncId: UUID)?
    /// The first failure of sync bookkeeping after a record was written: the transaction
    /// then refuses to commit, even if the caller caught the error, so that no committed
    /// change misses its outbox entry.
    var failure: Error?
    /// The stored field ids whose bytes the put being stored changes (scratch, reused).
    var changedFields: [UInt16] = []
    /// The previous record's fields while they are compared (scratch, reused).
    var previousFields: [(id: UInt16, field: RecordFields.Field)] = []
    /// Whether the store has an outbox at all (looked up once, for rewrites found through the
    /// catalog).
    var storeHasOutbox: Bool?
}
