import Foundation

/// How commits reach observers.
///
/// Rules (the guarantees `box.changes()`, `query.results()` and `QueryController` build on):
/// - A write transaction that commits through this `Store` publishes its folded change set
///   once, after the commit, on the committing thread, outside the writer lock. Rolled-back
///   and retried (map growth) runs publish nothing. Commits of other processes are not seen.
/// - Commits publish in commit order: `publishLock` is taken before `mdb_txn_commit` and
///   released after the handlers ran, and writers are serialised before that.
/// - An observer takes its pending changes and begins its read snapshot under the same lock
///   (`performObservedRead`), so the snapshot holds exactly the commits it has received.
/// - Ids are recorded only by transactions that began while a handler was registered; a
///   transaction that began earlier and commits later publishes `ChangeSet.unknown`, after
///   which observers look again from scratch.
/// - Handlers must be quick and must not call the store: they only hand the set over to
///   the observer's own task.
struct ChangeHandler: Sendable {
    let committed: @Sendable (ChangeSet) -> Void
    let closed: @Sendable () -> Void
}

extension Store {
    /// Registers a receiver of every commit's change set (and of the store's closing);
    /// returns a token for ``removeChangeHandler(_:)``.
    func addChangeHandler(_ committed: @escaping @Sendable (ChangeSet) -> Void,
                          onClose closed: @escaping @Sendable () -> Void = {}) -> Int {
        stateLock.lock()
        nextChangeHandler += 1
        let token = nextChangeHandler
        // `close()` sets isClosed before it takes stateLock to collect the handlers, so a
        // handler registered after that collection sees it here.
        let closedAlready = isClosed
        if !closedAlready { changeHandlers[token] = ChangeHandler(committed: committed, closed: closed) }
        stateLock.unlock()
        if closedAlready { closed() }
        return token
    }

    /// Whether anyone receives change sets (read as each write transaction begins).
    var hasChangeHandlers: Bool {
        stateLock.lock(); defer { stateLock.unlock() }
        return !changeHandlers.isEmpty
    }

    /// The number of registered receivers (tests check that observers unsubscribe).
    var changeHandlerCount: Int {
        stateLock.lock(); defer { stateLock.unlock() }
        return changeHandlers.count
    }

    func removeChangeHandler(_ token: Int) {
        stateLock.lock(); defer { stateLock.unlock() }
        changeHandlers[token] = nil
    }

    /// Hands a committed transaction's changes to the registered handlers, then releases
    /// `publishLock` (taken by `runWriteTransaction` before the commit).
    func publish(_ changes: ChangeLog) {
        defer { publishLock.unlock() }
        guard !changes.isEmpty else { return }
        stateLock.lock()
        let handlers = changeHandlers
        stateLock.unlock()
        guard !handlers.isEmpty else { return }
        let set = changes.folded()
        guard !set.isEmpty else { return }
        for handler in handlers.values { handler.committed(set) }
    }

    /// Runs `body` in a new read transaction whose snapshot holds exactly the commits
    /// published before `taking` ran: `taking` (an observer collecting its pending change
    /// sets) and the start of the snapshot happen together under `publishLock`.
    func performObservedRead<T>(taking: () -> Void, _ body: (Transaction) throws -> T) throws -> T {
        guard Transaction.current(for: self) == nil else {
            throw CofferError.misuse(.observeInsideTransaction(path: path))
        }
        return try performNewRead(observing: true, atSnapshot: taking, body)
    }
}
