import CLMDB
import Foundation

/// One open LMDB transaction: its snapshot, what it changed, and the per-transaction state
/// of the layers above (each a type of its own layer, stored inline).
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

    // State of the layers above, each owned by its layer's type and stored inline here (no
    // allocation or indirection of its own): a transaction is the one thing every layer's
    // per-transaction work is handed.

    /// Id allocation per entity (see `Transaction+IdAllocation`).
    @exclusivity(unchecked) var ids = IdStates()
    /// Entity bindings looked up or created by this transaction (see `TransactionBindings`).
    @exclusivity(unchecked) var bindings = TransactionBindings()
    /// Buffers, cursors and bookkeeping reused by puts and removes (see `WriteScratch`).
    @exclusivity(unchecked) var writes = WriteScratch()
    /// Relations pointing at each entity, as this transaction's catalog has them.
    @exclusivity(unchecked) var incomingRelations = IncomingRelationCache()
    /// Full-text index changes not written yet (see `PendingTextIndexes`).
    @exclusivity(unchecked) var pendingText = PendingTextIndexes()
    /// The key memory of remembered look-ups (see `LookUpScratch`).
    @exclusivity(unchecked) var lookUp = LookUpScratch()
    /// Read cursors no walk is using (see `withCursor`).
    @exclusivity(unchecked) var idleReadCursors = IdleReadCursors()
    /// Sync's outbox state of a write (see `SyncWriteState`); untouched unless a synced
    /// entity changes.
    @exclusivity(unchecked) var sync = SyncWriteState()

    init(store: Store, txn: OpaquePointer, isWrite: Bool, recordsChanges: Bool = false) {
        self.store = store
        self.recordBuffer = store.recordBuffer
        self.txn = txn
        self.isWrite = isWrite
        self.snapshotId = mdb_txn_id(txn)
        self.changes = ChangeLog(isRecording: recordsChanges)
    }

    deinit {
        idleReadCursors.closeAll()
        writes.deallocate()
        lookUp.deallocate()
    }

    /// Turns an LMDB result code into an error, remembering MAP_FULL for a retry.
    @inline(__always)
    func check(_ code: Int32, _ what: @autoclosure () -> String) throws {
        if code == 0 { return }
        if code == MDB_MAP_FULL { needsLargerMap = true }
        throw CofferError.storage(code: .init(result: code), message: "\(what()): \(LMDB.message(code))")
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

    /// Whether the file holds the named database in this transaction's snapshot, read or
    /// write, without opening a handle (a read transaction cannot open one beside others):
    /// its entry in LMDB's main database (handle 1, which every transaction has).
    func fileHoldsDatabase(_ name: String) throws -> Bool {
        var bytes = Array(name.utf8)
        return try bytes.withUnsafeMutableBytes { raw in
            var key = MDB_val(mv_size: raw.count, mv_data: raw.baseAddress)
            var value = MDB_val()
            let rc = mdb_get(txn, 1, &key, &value)
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "looking for \(name)")
            return true
        }
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
