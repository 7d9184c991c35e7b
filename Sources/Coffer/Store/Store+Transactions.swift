import CLMDB
import Foundation

extension Store {
    /// Runs `body` in one read transaction: everything it reads comes from one consistent
    /// snapshot, unaffected by writes that commit meanwhile. Inside a `write`, it joins the
    /// write transaction and sees its uncommitted changes.
    ///
    /// ```swift
    /// let (count, first) = try store.read { (try people.count(), try people.get(1)) }
    /// ```
    ///
    /// Keep the closure short: a running reader keeps old pages from being reused.
    @discardableResult
    public func read<T>(_ body: () throws -> T) throws -> T {
        try performRead { _ in try body() }
    }

    /// Runs `body` in one write transaction: all its changes commit together when it
    /// returns, and none of them do when it throws. Nested `write` calls and every `Box`
    /// call inside join this transaction.
    ///
    /// ```swift
    /// try store.write {
    ///     try people.put(&ada)
    ///     try people.remove(oldId)
    /// }
    /// ```
    ///
    /// The closure cannot suspend: an LMDB write transaction must begin and commit on one
    /// thread. If the map must grow in the middle of the transaction, the transaction is
    /// rolled back, the map grows and the closure runs once more from the start, so keep its
    /// effects inside the store.
    @discardableResult
    public func write<T>(_ body: () throws -> T) throws -> T {
        try performWrite { _ in try body() }
    }

    /// Runs `body` in a read transaction on a background thread, so the calling task
    /// suspends instead of blocking.
    ///
    /// ```swift
    /// let count = try await store.read { try people.count() }
    /// ```
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try self.read(body) })
            }
        }
    }

    /// Runs `body` in a write transaction on the store's writer queue; the calling task
    /// suspends until it has committed (or rolled back).
    ///
    /// ```swift
    /// try await store.write { try people.put(&person) }
    /// ```
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writeQueue.async {
                continuation.resume(with: Result { try self.write(body) })
            }
        }
    }

    // MARK: Transaction machinery

    /// Runs `body` with the calling thread's transaction on this store, or a new read one.
    func performRead<T>(_ body: (Transaction) throws -> T) throws -> T {
        if let current = Transaction.current(for: self) { return try body(current) }
        return try performNewRead(observing: false, atSnapshot: {}, body)
    }

    /// Runs `body` in a new read transaction. When `observing`, `atSnapshot` runs under
    /// `publishLock` together with the start of the snapshot (see `Store+Observation`).
    ///
    /// When the body met an entity whose table another process created after this store
    /// opened its tables (`Transaction.needsNewTables`), the transaction ends, the new
    /// tables are opened and the body runs again (up to 8 times), as a write does after map
    /// growth: callers never see the difference. An observing read runs `atSnapshot` again
    /// too; the observer keeps what it took the first time (see `LiveQuery.look`).
    func performNewRead<T>(observing: Bool, atSnapshot: () -> Void, _ body: (Transaction) throws -> T) throws -> T {
        var reruns = 0
        while true {
            gate.lockShared()
            if isClosed {
                gate.unlock()
                throw CofferError.storeClosed(path: path)
            }
            if observing { publishLock.lock() }
            let txn: OpaquePointer
            let known: KnownGeneration
            do {
                (txn, known) = try acquireReader()
            } catch CofferError.storage(.lmdb(.mapResized), _) {
                if observing { publishLock.unlock() }
                gate.unlock()
                try adoptMapSizeOfOtherProcess()
                continue
            } catch {
                if observing { publishLock.unlock() }
                gate.unlock()
                throw error
            }
            if observing {
                atSnapshot()
                publishLock.unlock()
            }
            let transaction = Transaction(store: self, txn: txn, isWrite: false)
            Transaction.push(transaction)
            let outcome = Result { () throws -> T in
                transaction.catalogGeneration = try catalogGeneration(of: transaction, known: known)
                return try body(transaction)
            }
            Transaction.pop()
            releaseReader(txn)
            gate.unlock()
            if transaction.needsNewTables, reruns < 8, Transaction.current(for: self) == nil {
                reruns += 1
                do {
                    try openTables()
                } catch {
                    // A body that succeeded (it caught the error itself) keeps its value;
                    // one that failed fails with why the tables could not be opened.
                    if case .success(let value) = outcome { return value }
                    throw error
                }
                continue
            }
            return try outcome.get()
        }
    }

    /// Runs `body` in a read transaction of the latest committed state: a new top-level read,
    /// or inside a read of this thread, a second LMDB read transaction beside it (the thread
    /// holds the gate already and must not take it again: see `ReadWriteGate`).
    func performLatestRead<T>(_ body: (Transaction) throws -> T) throws -> T {
        guard Transaction.current(for: self) != nil else {
            return try performNewRead(observing: false, atSnapshot: {}, body)
        }
        var begun: OpaquePointer?
        let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &begun)
        guard rc == 0, let txn = begun else {
            let hint = rc == MDB_MAP_RESIZED ? " (another process grew the map; retry outside store.read { })" : ""
            throw CofferError.storage(code: .init(result: rc), message: "cannot begin a read transaction on \(path): \(LMDB.message(rc))\(hint)")
        }
        defer { mdb_txn_abort(txn) }
        let transaction = Transaction(store: self, txn: txn, isWrite: false)
        Transaction.push(transaction)
        defer { Transaction.pop() }
        stateLock.lock()
        let known = knownGeneration
        stateLock.unlock()
        transaction.catalogGeneration = try catalogGeneration(of: transaction, known: known)
        return try body(transaction)
    }

    /// The catalog generation of the committed state `transaction` starts from: `known` when
    /// it was read in that same state, else read from the catalog and remembered.
    func catalogGeneration(of transaction: Transaction, known: KnownGeneration) throws -> UInt64 {
        // A write transaction's id is one past the state it starts from.
        let committed = transaction.isWrite ? transaction.snapshotId &- 1 : transaction.snapshotId
        if known.committed == committed { return known.generation }
        guard let catalog = catalogDatabase else { return 0 }
        let generation = try Catalog.generation(dbi: catalog, in: transaction)
        stateLock.lock()
        knownGeneration = KnownGeneration(committed: committed, generation: generation)
        stateLock.unlock()
        return generation
    }

    /// Runs `body` in the calling thread's write transaction on this store or a new one,
    /// committing a new one when `body` returns, and growing the map and retrying on
    /// MDB_MAP_FULL.
    func performWrite<T>(_ body: (Transaction) throws -> T) throws -> T {
        if let current = Transaction.current(for: self) {
            guard current.isWrite else {
                throw CofferError.misuse(.writeInsideRead(path: path))
            }
            return try body(current)
        }
        guard !options.readOnly else { throw CofferError.readOnly(path: path, operation: "write") }
        let (value, changes) = try runWriteTransaction(body)
        // After the commit and outside the writer lock: handlers never run inside a write.
        // `runWriteTransaction` returned holding `publishLock`; `publish` releases it.
        publish(changes)
        return value
    }

    /// Begins, runs and commits one top-level write transaction under the writer lock,
    /// rerunning it after map growth; returns the body's value and what the commit changed.
    ///
    /// On success it returns holding `publishLock`, taken before the commit, so that commits
    /// publish in commit order and an observer's snapshot never holds a commit whose change
    /// set it has not received (see `Store+Observation`).
    private func runWriteTransaction<T>(_ body: (Transaction) throws -> T) throws -> (T, ChangeLog) {
        writerLock.lock()
        defer { writerLock.unlock() }
        while true {
            gate.lockShared()
            if isClosed {
                gate.unlock()
                throw CofferError.storeClosed(path: path)
            }
            var begun: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, 0, &begun)
            if rc == MDB_MAP_RESIZED {
                gate.unlock()
                try adoptMapSizeOfOtherProcess()
                continue
            }
            guard rc == 0, let txn = begun else {
                gate.unlock()
                throw CofferError.storage(code: .init(result: rc), message: "cannot begin a write transaction on \(path): \(LMDB.message(rc))")
            }
            let transaction = Transaction(store: self, txn: txn, isWrite: true, recordsChanges: hasChangeHandlers)
            Transaction.push(transaction)
            let outcome = Result { () throws -> T in
                try refreshBindingsIfCatalogChanged(in: transaction)
                let value = try body(transaction)
                try transaction.flushTextIndexes()
                try flushSequences(of: transaction)
                return value
            }
            Transaction.pop()
            if transaction.needsLargerMap {
                // The rerun must hand out the same ids: reserve nothing yet.
                mdb_txn_abort(txn)
                gate.unlock()
                try growMapOrGiveUp(transaction)
                continue
            }
            let value: T
            switch outcome {
            case .failure(let error):
                mdb_txn_abort(txn)
                gate.unlock()
                // Rolled back: the ids it handed out are still never handed out again.
                reserveIds(of: transaction)
                throw error
            case .success(let result):
                value = result
            }
            publishLock.lock()
            let commit = mdb_txn_commit(txn)
            gate.unlock()
            if commit == MDB_MAP_FULL {
                publishLock.unlock()
                try growMapOrGiveUp(transaction)
                continue
            }
            reserveIds(of: transaction)
            guard commit == 0 else {
                publishLock.unlock()
                throw CofferError.storage(code: .init(result: commit), message: "cannot commit a write transaction on \(path): \(LMDB.message(commit))")
            }
            adoptBindings(of: transaction)
            if let generation = transaction.catalogGeneration {
                stateLock.lock()
                boundCatalogGeneration = generation
                // A transaction that wrote something committed as transaction `snapshotId`
                // (reads of that snapshot then skip the catalog); one that wrote nothing
                // committed no transaction, and that id may become another process's.
                if transaction.changedSchema || transaction.wroteRecords {
                    knownGeneration = KnownGeneration(committed: transaction.snapshotId, generation: generation)
                }
                stateLock.unlock()
            }
            return (value, transaction.changes)
        }
    }

    /// Records the write's catalog generation (bindings of another generation are not used,
    /// see `EntityBinding.catalogGeneration`) and, when another process changed the catalog
    /// since the store's bindings were made, drops them all (and the cached incoming links):
    /// each entity registers again, inside this transaction, against the catalog as it is
    /// now. Reads the catalog only when a commit happened since the last known generation.
    private func refreshBindingsIfCatalogChanged(in transaction: Transaction) throws {
        guard catalogDatabase != nil else { return }
        stateLock.lock()
        let known = knownGeneration
        stateLock.unlock()
        let current = try catalogGeneration(of: transaction, known: known)
        transaction.catalogGeneration = current
        stateLock.lock()
        defer { stateLock.unlock() }
        guard let bound = boundCatalogGeneration else {
            boundCatalogGeneration = current
            return
        }
        guard bound != current else { return }
        bindings.removeAll()
        readBindings.removeAll()
        catalogGeneration += 1   // the cached incoming links too
    }

    /// Grows the map for a rerun of `transaction`; when it cannot grow, the transaction is
    /// over and its ids are reserved like those of any other rolled-back transaction.
    private func growMapOrGiveUp(_ transaction: Transaction) throws {
        do {
            try growMap()
        } catch {
            reserveIds(of: transaction)
            throw error
        }
    }

    /// A read transaction from the pool (renewed) or a new one, and the last known catalog
    /// generation (taken under the same lock, so a read costs no extra lock).
    private func acquireReader() throws -> (OpaquePointer, KnownGeneration) {
        stateLock.lock()
        let pooled = readers.popLast()
        let known = knownGeneration
        stateLock.unlock()
        if let pooled {
            let rc = mdb_txn_renew(pooled)
            if rc == 0 { return (pooled, known) }
            mdb_txn_abort(pooled)
            throw CofferError.storage(code: .init(result: rc), message: "cannot renew a read transaction on \(path): \(LMDB.message(rc))")
        }
        var begun: OpaquePointer?
        let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &begun)
        guard rc == 0, let txn = begun else {
            throw CofferError.storage(code: .init(result: rc), message: "cannot begin a read transaction on \(path): \(LMDB.message(rc))")
        }
        return (txn, known)
    }

    private func releaseReader(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        stateLock.lock()
        if readers.count < 32 {
            readers.append(txn)
            stateLock.unlock()
        } else {
            stateLock.unlock()
            mdb_txn_abort(txn)
        }
    }

    /// Grows the map (doubling up to 1 GiB, then by 1 GiB) while no transaction is open.
    private func growMap() throws {
        gate.lockExclusive()
        defer { gate.unlock() }
        guard !isClosed else { throw CofferError.storeClosed(path: path) }
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        let current = info.me_mapsize
        var grown = current < 1 << 30 ? current * 2 : current + (1 << 30)
        if let limit = options.maxSize {
            guard current < limit else {
                throw CofferError.storage(
                    code: .lmdb(.mapFull),
                    message: "the store at \(path) is full: it reached its maxSize of \(limit) bytes; the transaction was rolled back")
            }
            grown = min(grown, limit)
        }
        try LMDB.check(mdb_env_set_mapsize(env, grown), "cannot grow the map of \(path) to \(grown) bytes")
    }

    /// Another process grew the map: adopt its size.
    func adoptMapSizeOfOtherProcess() throws {
        gate.lockExclusive()
        defer { gate.unlock() }
        try LMDB.check(mdb_env_set_mapsize(env, 0), "cannot adopt the new map size of \(path)")
    }

    /// Writes the ids handed out in `transaction` back to the catalog.
    private func flushSequences(of transaction: Transaction) throws {
        guard !transaction.ids.isEmpty, let catalog = catalogDatabase else { return }
        for (entityId, state) in transaction.ids where state.isDirty {
            try Catalog.setSequence(entityId, to: state.lastHandedOut, dbi: catalog, in: transaction)
        }
    }
}
