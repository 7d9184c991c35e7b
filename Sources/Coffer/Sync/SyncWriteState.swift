import CLMDB
import Foundation

/// What one write transaction knows of sync, stored inline in `Transaction`: the persisted
/// counters once a synced change loaded them, the transaction's clock tick, the mode, the
/// cursors of the sync tables and scratch space for the put being stored. A transaction that
/// touches no synced entity never fills it.
struct SyncWriteState {
    /// Whether `state` was loaded and the outbox opened (at the transaction's first synced
    /// change).
    var isPrepared = false
    /// The counters; written back (when `isDirty`) before the transaction commits.
    var state = SyncState()
    var isDirty = false
    /// Whether `finishSync` wrote the counters (the transaction then commits as its id).
    var wroteState = false
    /// The transaction's one clock value: every change it records carries it (0: not taken).
    var tick: UInt64 = 0
    /// Handle of `sync.outbox`, valid once prepared, and a write cursor on it, opened when a
    /// change first needs one (LMDB closes a write transaction's cursors when it ends).
    var outbox: MDB_dbi = 0
    var outboxCursor: OpaquePointer?
    /// Whether an entry was appended with no cursor (a transaction's first append: most
    /// one-object transactions need no cursor at all; later appends open one).
    var appendedWithoutCursor = false
    /// The mid of the entry a look-up left `outboxCursor` on (0: unknown): a later look-up of
    /// a higher mid tries the next entry before searching (see `Transaction.outboxEntryAt`).
    var outboxCursorMid: UInt64 = 0
    /// Write cursors on the identity tables of the synced entities this transaction wrote;
    /// the last one used first (a run of puts to one box).
    var identityCursors: [SyncIdentityCursors] = []
    /// The random sync ids this transaction makes (objects whose ids are not derived).
    var ids = SyncIdGenerator()
    /// The store instance's epoch once this transaction made sure it is recorded (see
    /// ``SyncIdDerivation``), and whether this transaction recorded it.
    var epoch: SyncIdDerivation?
    var recordedEpoch = false
    /// The store instance's epoch as the transaction first read it (see
    /// `Transaction.instanceEpoch()`), once read.
    var instanceEpoch: SyncIdDerivation?
    var instanceEpochRead = false
    /// The epoch of another prefix a look-up used last (objects derived by earlier epochs).
    var lastEpoch: SyncIdDerivation?
    /// The derived creations this transaction made that `sync.runs` does not hold yet.
    var openRun: CreationRun?
    /// The stored run a look-up found last (puts and removals in id order meet it again).
    var cachedRun: CreationRun?
    /// Handles of `sync.runs` and `sync.epochs` (0: not opened in this transaction) and a
    /// write cursor on the runs.
    var runs: MDB_dbi = 0
    var runsCursor: OpaquePointer?
    var epochs: MDB_dbi = 0
    /// The handles were opened by this transaction (not known to the store yet).
    var runsOpenedHere = false
    /// Set while remote changes are applied: writes go through the whole mutation path but
    /// record no outbox entry (a pulled change is not sent back).
    var isApplyingRemote = false
    /// The sync id the next insert of the entity takes (a remote object arriving with its id).
    var arrivingSyncId: (entityId: UInt32, syncId: UUID)?
    /// The first failure of sync bookkeeping after a record was written: the transaction
    /// then refuses to commit, even if the caller caught the error, so that no committed
    /// change misses its outbox entry.
    var failure: Error?
    /// The stored field ids whose bytes the put being stored changes, ascending (scratch,
    /// reused).
    var changedFields: [UInt16] = []
    /// What an update's look-up before its record was written found of the object (see
    /// `Transaction.collectSyncedChanges`), for `recordSyncedPut` after it.
    var updatedObject: (id: Id, identity: SyncedUpdateIdentity)?
    /// Whether the store has an outbox at all (looked up once, for rewrites found through the
    /// catalog).
    var storeHasOutbox: Bool?
    /// Whether the store holds pending links (looked up once, at the first local edit of a
    /// synced link field).
    var storeHasPendingLinks: Bool?
    /// Set while an app's merge decodes its local or remote view: the targets that view's
    /// to-many relations hold, by schema position (nil otherwise).
    var mergeRelationViews: [Int: [Id]]?
}

/// Objects of one entity created one after another with derived sync ids: local ids
/// `firstId ..< firstId + count` of the epoch `prefix`, whose creation entries have mids
/// `firstMid ..< firstMid + count`. Stored in `sync.runs` under (entity id, first id), both
/// big-endian, as (prefix, first mid, count), all big-endian.
struct CreationRun: Equatable {
    var entityId: UInt32
    var prefix: UInt64
    var firstId: Id
    var firstMid: UInt64
    var count: UInt64

    static let keySize = 12
    static let valueSize = 24

    /// The mid of the creation entry of `id`, when the run holds it.
    @inline(__always)
    func creationMid(of id: Id, entityId: UInt32) -> UInt64? {
        guard entityId == self.entityId, id >= firstId, id &- firstId < count else { return nil }
        return firstMid &+ (id &- firstId)
    }
}

/// Write cursors on one synced entity's identity tables, opened once per transaction.
struct SyncIdentityCursors {
    let syncIds: MDB_dbi
    let forward: OpaquePointer
    let reverse: OpaquePointer
    /// Cleared when a sync id arrived below the table's last one (ids from other replicas):
    /// later puts in this transaction insert by key instead of trying to append first.
    var reverseAscends = true
    /// The local id of the entry a look-up left `forward` on (0: unknown): a later look-up
    /// of a higher id tries the next entry before searching (see `Transaction.syncIdEntry`).
    var forwardId: Id = 0
    /// After a look-up found no entry: no entry lies in `missFrom ..< missUpTo` (both 0:
    /// unknown), so later look-ups in id order between them need no search.
    var missFrom: Id = 0
    var missUpTo: Id = 0
    /// The sync id (its bytes as two big-endian words, which order as the bytes do) of the
    /// entry a removal left `reverse` next to (nil: unknown), for the same shortcut.
    var reverseKey: (UInt64, UInt64)?
}

/// How sync knows an object an update stores, looked up before its record is written.
enum SyncedUpdateIdentity {
    /// Its `syncIds` entry: the sync id and the mid of its newest entry (the identity's
    /// forward cursor was left on the entry, and nothing moves it before `recordSyncedPut`).
    case stored(syncId: UUID, newestMid: UInt64)
    /// A derived sync id whose newest entry is its creation (`creationMid`, when it is not
    /// an untaken whole creation of this instance's) or a later one the outbox holds.
    case derived(syncId: UUID, creationMid: UInt64)
    /// A derived sync id whose newest entry is an untaken whole creation this store instance
    /// made: the update needs no outbox write.
    case absorbed
    /// None: an object stored before its entity was synced, which sync learns of now.
    case unknown
}
