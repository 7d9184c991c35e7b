import CLMDB
import Foundation

/// One open LMDB transaction and the per-transaction state Coffer keeps beside it.
///
/// Transactions are closure-scoped: `Store.read`/`Store.write` push one on the calling
/// thread's stack, and nested calls (and every `Box` call inside them) find and join it
/// through ``current(for:)`` instead of opening another.
///
/// A transaction belongs to one thread (LMDB's rule for writes, Coffer's for reads), so its
/// mutable state is marked `@exclusivity(unchecked)`: the runtime's access tracking would
/// check, on every put, an exclusivity that the one-thread rule already guarantees.
final class Transaction {
    unowned(unsafe) let store: Store
    /// The store's record buffer, held here so that a put reaches it without a retain.
    unowned(unsafe) let recordBuffer: RecordBuffer
    let txn: OpaquePointer
    let isWrite: Bool
    /// LMDB's id of the snapshot (read) or of the transaction being written.
    let snapshotId: Int

    /// Set when LMDB reported MDB_MAP_FULL: the transaction is dead and the outermost
    /// `write` grows the map and runs the closure again, even if user code caught the error.
    @exclusivity(unchecked) var needsLargerMap = false
    /// Id allocation state per entity id (see `Transaction+Sequences`).
    @exclusivity(unchecked) var ids = IdStates()
    /// The catalog generation of this transaction's snapshot (set when it begins), and for a
    /// write, the one it wrote when it changed the schema: bindings of another generation
    /// are not used (see `EntityBinding.catalogGeneration`).
    @exclusivity(unchecked) var catalogGeneration: UInt64?
    /// Whether this write transaction changed the catalog's entity entries (and wrote a new
    /// generation).
    @exclusivity(unchecked) var changedSchema = false
    /// Set by every record this write transaction stored or removed: such a transaction
    /// commits as transaction `snapshotId` (one that wrote nothing commits no transaction).
    @exclusivity(unchecked) var wroteRecords = false
    /// Set when a read met an entity whose table this store had not opened (another process
    /// created it after the snapshot's handles were opened): the outermost `read` opens the
    /// new tables and runs its closure again, even if user code caught the error.
    @exclusivity(unchecked) var needsNewTables = false
    /// What this transaction changed, handed to the store's commit handlers after commit.
    @exclusivity(unchecked) var changes: ChangeLog
    /// Entity bindings created by this transaction; they become the store's on commit.
    @exclusivity(unchecked) var newBindings: [ObjectIdentifier: EntityBinding] = [:]
    /// Bindings this transaction already looked up: repeated box calls inside one
    /// `read`/`write` skip the store's lock.
    @exclusivity(unchecked) var bindingCache: [ObjectIdentifier: EntityBinding] = [:]
    /// The last entry of `bindingCache` asked for (entries are never replaced).
    @exclusivity(unchecked) var lastCachedBinding: (key: ObjectIdentifier, binding: EntityBinding)?
    /// Reusable index keys (old and new value per index), so puts and removes build keys
    /// without allocating: `keyPairCapacity` pairs (see `prepareKeyBuffers`, `keyPair`),
    /// freed with the transaction.
    @exclusivity(unchecked) var keyPairs: UnsafeMutablePointer<IndexKeyPair>?
    @exclusivity(unchecked) var keyPairCapacity = 0
    /// The key of a remembered look-up (`QueryExecutor.first`), rebuilt for each look-up in
    /// memory the transaction keeps.
    @exclusivity(unchecked) var lookUpKey = IndexKeyBytes()
    /// Where index entries (`key ‖ id`) are assembled for LMDB; grows to the longest key.
    @exclusivity(unchecked) var entryScratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Indexes that received an out-of-order key in this transaction (no more append attempts).
    @exclusivity(unchecked) var unorderedIndexes: [MDB_dbi] = []  // a few at most: searched, not hashed
    /// Relations pointing at each entity, as this transaction's catalog has them.
    @exclusivity(unchecked) var incomingRelations: [String: IncomingRelations] = [:] {
        didSet { lastIncomingRelations = nil }
    }
    /// The last entry of `incomingRelations` asked for (forgotten whenever it changes).
    @exclusivity(unchecked) var lastIncomingRelations: (target: String, relations: IncomingRelations)?
    /// Full-text index changes not written yet, per index database (see `TextIndexBuffer`).
    @exclusivity(unchecked) var textBuffers: [MDB_dbi: TextIndexBuffer] = [:]
    /// Cursors on entity tables kept open for updates (see `writeCursor`); LMDB closes a
    /// write transaction's cursors when it ends.
    @exclusivity(unchecked) var writeCursors: [MDB_dbi: OpaquePointer] = [:]
    /// The last entry of `writeCursors` used: a run of puts to one box skips the hashing.
    @exclusivity(unchecked) var lastWriteCursor: (table: MDB_dbi, cursor: OpaquePointer)?
    /// The record a write walk is visiting (see `WalkVisit`), while its body runs.
    @exclusivity(unchecked) var walkVisit: WalkVisit?
    /// Counts what may move an entity table's write cursor or change a stored record: every
    /// write to an entity table except a rewrite in place through a cursor already on the
    /// record, and every step of a write walk (see `WalkVisit`). Wraps; only compared.
    @exclusivity(unchecked) var cursorMoves: UInt64 = 0
    /// Read cursors no walk is using (see `withCursor`), closed when the transaction object
    /// goes away (LMDB allows closing a read-only cursor after its transaction ended).
    @exclusivity(unchecked) var idleReadCursors: [(database: MDB_dbi, cursor: OpaquePointer)] = []

    init(store: Store, txn: OpaquePointer, isWrite: Bool, recordsChanges: Bool = false) {
        self.store = store
        self.recordBuffer = store.recordBuffer
        self.txn = txn
        self.isWrite = isWrite
        self.snapshotId = mdb_txn_id(txn)
        self.changes = ChangeLog(isRecording: recordsChanges)
    }

    deinit {
        for idle in idleReadCursors { mdb_cursor_close(idle.cursor) }
        entryScratch.deallocate()
        lookUpKey.deallocate()
        if let keyPairs {
            for position in 0..<keyPairCapacity {
                keyPairs[position].old.deallocate()
                keyPairs[position].new.deallocate()
            }
            keyPairs.deinitialize(count: keyPairCapacity)
            keyPairs.deallocate()
        }
    }

    /// Turns an LMDB result code into an error, remembering MAP_FULL for a retry.
    @inline(__always)
    func check(_ code: Int32, _ what: @autoclosure () -> String) throws {
        if code == 0 { return }
        if code == MDB_MAP_FULL { needsLargerMap = true }
        throw CofferError.storage(code: code, message: "\(what()): \(LMDB.message(code))")
    }

    /// Opens the named database in this (write) transaction, creating it when `create`;
    /// returns its handle and whether it existed before. A new handle is kept by LMDB when
    /// the transaction commits and closed when it aborts.
    func openDatabase(_ name: String, create: Bool, _ what: @autoclosure () -> String) throws -> (MDB_dbi, existed: Bool) {
        var database: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, 0, &database)
        if rc == 0 { return (database, true) }
        guard rc == MDB_NOTFOUND, create else {
            try check(rc, "cannot open \(what())")
            return (database, true)
        }
        try check(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &database), "cannot create \(what())")
        return (database, false)
    }

    /// Whether the named database exists in this (write) transaction's snapshot.
    func databaseExists(_ name: String) throws -> Bool {
        var database: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, 0, &database)
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "cannot open \(name)")
        return true
    }

    // MARK: The calling thread's transaction stack

    /// The innermost transaction of `store` open on the calling thread.
    @inline(__always)
    static func current(for store: Store) -> Transaction? {
        guard let raw = pthread_getspecific(threadStackKey) else { return nil }
        // The slot keeps the stack alive for the thread's life, and only this thread changes
        // it, so the stack and its array are borrowed, not retained: every box call comes
        // through here (three retain/release pairs saved per call).
        return Unmanaged<ThreadTransactionStack>.fromOpaque(raw)._withUnsafeGuaranteedRef { stack in
            stack.transactions.withUnsafeBufferPointer { open in
                var position = open.count
                while position > 0 {
                    position &-= 1
                    if open[position].store === store { return open[position] }
                }
                return nil
            }
        }
    }

    static func push(_ transaction: Transaction) {
        let stack: ThreadTransactionStack
        if let raw = pthread_getspecific(threadStackKey) {
            stack = Unmanaged<ThreadTransactionStack>.fromOpaque(raw).takeUnretainedValue()
        } else {
            stack = ThreadTransactionStack()
            pthread_setspecific(threadStackKey, Unmanaged.passRetained(stack).toOpaque())
        }
        stack.transactions.append(transaction)
    }

    static func pop() {
        guard let raw = pthread_getspecific(threadStackKey) else { return }
        let stack = Unmanaged<ThreadTransactionStack>.fromOpaque(raw).takeUnretainedValue()
        _ = stack.transactions.popLast()
    }
}

/// The transactions open on one thread, innermost last.
final class ThreadTransactionStack {
    // Only its own thread reaches it (through the thread-local slot): no runtime access
    // checks, which every box call would otherwise pay.
    @exclusivity(unchecked) var transactions: [Transaction] = []
}

/// Thread-local slot for the stack. A pthread key (not Foundation's thread dictionary)
/// because every `Box` call looks it up.
private let threadStackKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { raw in
        #if os(Linux)
        guard let raw else { return }
        #endif
        Unmanaged<ThreadTransactionStack>.fromOpaque(raw).release()
    }
    return key
}()
