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
    /// the publisher's `publishLock` together with the start of the snapshot (see `CommitPublisher`).
    ///
    /// When the body met an entity whose table another process created after this store
    /// opened its tables (`Transaction.needsNewTables`), the transaction ends, the new
    /// tables are opened and the body runs again (up to 8 times), as a write does after map
    /// growth: callers never see the difference. An observing read runs `atSnapshot` again
    /// too; the observer keeps what it took the first time (see `LiveQuery.look`).
    func performNewRead<T>(observing: Bool, atSnapshot: () -> Void, _ body: (Transaction) throws -> T) throws -> T {
        var reruns = 0
        while true {
            environment.gate.lockShared()
            if environment.isClosed {
                environment.gate.unlock()
                throw CofferError.storeClosed(path: path)
            }
            if observing { publisher.publishLock.lock() }
            let txn: OpaquePointer
            let known: KnownGeneration
            do {
                (txn, known) = try environment.acquireReader()
            } catch CofferError.storage(.lmdb(.mapResized), _) {
                if observing { publisher.publishLock.unlock() }
                environment.gate.unlock()
                try environment.adoptMapSizeOfOtherProcess()
                continue
            } catch {
                if observing { publisher.publishLock.unlock() }
                environment.gate.unlock()
                throw error
            }
            if observing {
                atSnapshot()
                publisher.publishLock.unlock()
            }
            let transaction = Transaction(store: self, txn: txn, isWrite: false)
            Transaction.push(transaction)
            let outcome = Result { () throws -> T in
                transaction.catalogGeneration = try catalogGeneration(of: transaction, known: known)
                return try body(transaction)
            }
            Transaction.pop()
            environment.releaseReader(txn)
            environment.gate.unlock()
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
        let rc = mdb_txn_begin(environment.env, nil, UInt32(MDB_RDONLY), &begun)
        guard rc == 0, let txn = begun else {
            let hint = rc == MDB_MAP_RESIZED ? " (another process grew the map; retry outside store.read { })" : ""
            throw CofferError.storage(code: .init(result: rc), message: "cannot begin a read transaction on \(path): \(LMDB.message(rc))\(hint)")
        }
        defer { mdb_txn_abort(txn) }
        let transaction = Transaction(store: self, txn: txn, isWrite: false)
        Transaction.push(transaction)
        defer { Transaction.pop() }
        transaction.catalogGeneration = try catalogGeneration(of: transaction, known: environment.lastKnownGeneration)
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
        environment.remember(KnownGeneration(committed: committed, generation: generation))
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
        let (value, changes, committed) = try runWriteTransaction(body)
        // After the commit and outside the writer lock: handlers never run inside a write.
        // `runWriteTransaction` returned holding the publish lock; `publish` releases it.
        publisher.publish(changes, committed: committed)
        return value
    }

    /// Begins, runs and commits one top-level write transaction under the writer lock,
    /// rerunning it after map growth; returns the body's value and what the commit changed.
    ///
    /// On success it returns holding the publisher's `publishLock`, taken before the commit,
    /// so that commits publish in commit order and an observer's snapshot never holds a
    /// commit whose change set it has not received (see `CommitPublisher`).
    private func runWriteTransaction<T>(_ body: (Transaction) throws -> T) throws -> (T, ChangeLog, (wrote: Bool, last: UInt64)?) {
        environment.writerLock.lock()
        defer { environment.writerLock.unlock() }
        while true {
            // Each phase below that cannot go on releases the gate itself.
            guard let txn = try beginWriteTransaction() else { continue }
            let transaction = Transaction(store: self, txn: txn, isWrite: true, recordsChanges: hasChangeHandlers)
            let outcome = runWriteBody(body, in: transaction)
            guard let value = try finishWriteBody(outcome, of: transaction) else { continue }
            guard let committed = try commitWriteTransaction(transaction) else { continue }
            adoptCommittedState(of: transaction)
            return (value, transaction.changes, committed)
        }
    }

    /// Takes the gate shared and begins an LMDB write transaction; nil (the gate released)
    /// when another process grew the map, which was adopted: begin again.
    private func beginWriteTransaction() throws -> OpaquePointer? {
        environment.gate.lockShared()
        if environment.isClosed {
            environment.gate.unlock()
            throw CofferError.storeClosed(path: path)
        }
        var begun: OpaquePointer?
        let rc = mdb_txn_begin(environment.env, nil, 0, &begun)
        if rc == MDB_MAP_RESIZED {
            environment.gate.unlock()
            try environment.adoptMapSizeOfOtherProcess()
            return nil
        }
        guard rc == 0, let txn = begun else {
            environment.gate.unlock()
            throw CofferError.storage(code: .init(result: rc), message: "cannot begin a write transaction on \(path): \(LMDB.message(rc))")
        }
        return txn
    }

    /// Runs the body in `transaction` as the calling thread's transaction, then writes what
    /// the transaction kept pending (full-text postings, id sequences).
    private func runWriteBody<T>(_ body: (Transaction) throws -> T, in transaction: Transaction) -> Result<T, Error> {
        Transaction.push(transaction)
        defer { Transaction.pop() }
        return Result {
            try refreshBindingsIfCatalogChanged(in: transaction)
            let value = try body(transaction)
            try transaction.flushTextIndexes()
            try flushSequences(of: transaction)
            try transaction.finishSync()
            return value
        }
    }

    /// The body's value, to be committed; nil (the transaction aborted, the gate released,
    /// the map grown) when LMDB ran out of map: run again. A failed body aborts and throws.
    private func finishWriteBody<T>(_ outcome: Result<T, Error>, of transaction: Transaction) throws -> T? {
        if transaction.needsLargerMap {
            // The rerun must hand out the same ids: reserve nothing yet.
            mdb_txn_abort(transaction.txn)
            environment.gate.unlock()
            try growMapOrGiveUp(transaction)
            return nil
        }
        switch outcome {
        case .failure(let error):
            mdb_txn_abort(transaction.txn)
            environment.gate.unlock()
            // Rolled back: the ids it handed out are still never handed out again.
            reserveIds(of: transaction)
            throw error
        case .success(let value):
            return value
        }
    }

    /// Commits, taking the publish lock first and releasing the gate; returns holding the
    /// publish lock, or nil (the map grown) when the commit ran out of map: run again. What
    /// it returns, when someone observes: whether the transaction wrote (so took a
    /// transaction id) and LMDB's last transaction id right after the commit, from which the
    /// publisher finds commits of other processes (read before the gate is released, while
    /// the environment is sure to be open).
    private func commitWriteTransaction(_ transaction: Transaction) throws -> (wrote: Bool, last: UInt64)?? {
        publisher.beginCommit()
        let commit = mdb_txn_commit(transaction.txn)
        // Where unsure, "wrote" is false: an id taken by an unnoticed write of this process
        // is then told as another process's commit (a needless look again), never the reverse.
        let wrote = transaction.wroteRecords || transaction.changedSchema || transaction.sync.wroteState
            || !transaction.changes.isEmpty
        let committed = commit == 0 && publisher.hasHandlers
            ? (wrote: wrote, last: environment.lastCommittedTransactionId()) : nil
        environment.gate.unlock()
        if commit == MDB_MAP_FULL {
            publisher.abandonCommit()
            try growMapOrGiveUp(transaction)
            return nil
        }
        reserveIds(of: transaction)
        if commit == 0 { adoptSyncDatabases(of: transaction) }
        guard commit == 0 else {
            publisher.abandonCommit()
            throw CofferError.storage(code: .init(result: commit), message: "cannot commit a write transaction on \(path): \(LMDB.message(commit))")
        }
        return .some(committed)
    }

    /// Makes what a committed transaction learned the store's: its bindings and handles, and
    /// the catalog generation of the state it committed.
    private func adoptCommittedState(of transaction: Transaction) {
        registry.adopt(transaction.bindings.created, generation: transaction.catalogGeneration)
        guard let generation = transaction.catalogGeneration else { return }
        registry.noteBoundGeneration(generation)
        // A transaction that wrote something committed as transaction `snapshotId` (reads of
        // that snapshot then skip the catalog); one that wrote nothing committed no
        // transaction, and that id may become another process's.
        if transaction.changedSchema || transaction.wroteRecords {
            environment.remember(KnownGeneration(committed: transaction.snapshotId, generation: generation))
        }
    }

    /// Records the write's catalog generation (bindings of another generation are not used,
    /// see `EntityBinding.catalogGeneration`) and, when another process changed the catalog
    /// since the store's bindings were made, drops them all (and the cached incoming links):
    /// each entity registers again, inside this transaction, against the catalog as it is
    /// now. Reads the catalog only when a commit happened since the last known generation.
    private func refreshBindingsIfCatalogChanged(in transaction: Transaction) throws {
        guard catalogDatabase != nil else { return }
        let current = try catalogGeneration(of: transaction, known: environment.lastKnownGeneration)
        transaction.catalogGeneration = current
        registry.bindAtGeneration(current)
    }

    /// Grows the map for a rerun of `transaction`; when it cannot grow, the transaction is
    /// over and its ids are reserved like those of any other rolled-back transaction.
    private func growMapOrGiveUp(_ transaction: Transaction) throws {
        do {
            try environment.growMap()
        } catch {
            reserveIds(of: transaction)
            throw error
        }
    }

    /// After a commit: the derived-id tables the transaction opened become the store's (reads
    /// cannot open handles), and an epoch it recorded is known to be recorded.
    private func adoptSyncDatabases(of transaction: Transaction) {
        // A transaction that wrote something committed as `snapshotId`: its counters are
        // the next write's, if nothing commits in between.
        if transaction.sync.isPrepared, transaction.sync.wroteState || transaction.wroteRecords || transaction.changedSchema {
            committedSyncState.remember(transaction.sync.state, committedAs: transaction.snapshotId, outbox: transaction.sync.outbox)
        }
        guard transaction.sync.runs != 0 else { return }
        let tables = (runs: transaction.sync.runs, epochs: transaction.sync.epochs)
        if transaction.sync.runsOpenedHere {
            registry.keepOpened([Transaction.syncRunsName: tables.runs, Transaction.syncEpochsName: tables.epochs])
        }
        syncEpochs.remember(recorded: transaction.sync.recordedEpoch ? transaction.sync.epoch : nil, epoch: transaction.sync.lastEpoch,
                            run: transaction.sync.cachedRun, tables: transaction.sync.runsOpenedHere ? tables : nil)
    }

    /// Remembers the ids `transaction` handed out, whatever becomes of it.
    private func reserveIds(of transaction: Transaction) {
        guard !transaction.ids.isEmpty else { return }
        registry.reserve(transaction.ids.handedOut)
    }

    /// Another process grew the map: adopt its size.
    func adoptMapSizeOfOtherProcess() throws {
        try environment.adoptMapSizeOfOtherProcess()
    }

    /// Writes the ids handed out in `transaction` back to the catalog.
    private func flushSequences(of transaction: Transaction) throws {
        guard !transaction.ids.isEmpty, let catalog = catalogDatabase else { return }
        for (entityId, state) in transaction.ids where state.isDirty {
            try Catalog.setSequence(entityId, to: state.lastHandedOut, dbi: catalog, in: transaction)
        }
    }
}
