import Foundation

/// A receiver of committed change sets and of the store's closing.
struct ChangeHandler: Sendable {
    let committed: @Sendable (ChangeSet) -> Void
    let closed: @Sendable () -> Void
}

/// How a store's commits reach observers: the registered change handlers and the lock that
/// orders publishing.
///
/// Rules (the guarantees `box.changes()`, `query.results()` and `QueryController` build on):
/// - A write transaction that commits through the `Store` publishes its folded change set
///   once, after the commit, on the committing thread, outside the writer lock. Rolled-back
///   and retried (map growth) runs publish nothing. Commits of other processes are not seen.
/// - Commits publish in commit order: `publishLock` is taken before `mdb_txn_commit`
///   (`beginCommit`) and released after the handlers ran (`publish`), and writers are
///   serialised before that.
/// - An observer takes its pending changes and begins its read snapshot under the same lock
///   (`Store.performObservedRead`), so the snapshot holds exactly the commits it has received.
/// - Ids are recorded only by transactions that began while a handler was registered; a
///   transaction that began earlier and commits later publishes `ChangeSet.unknown`, after
///   which observers look again from scratch.
/// - Handlers must be quick and must not call the store: they only hand the set over to
///   the observer's own task.
/// - Once closed, no handler is kept: one registered later is told at once.
///
/// Lock order: the store's gate, then `publishLock`, then `handlerLock` (a leaf).
final class CommitPublisher: @unchecked Sendable {
    /// Held from just before a commit until its change set is published, and by observers
    /// while they take their pending changes and begin their snapshot.
    let publishLock = NSLock()
    /// Guards `handlers`, `lastToken` and `isClosed`.
    private let handlerLock = NSLock()
    /// Receivers of committed change sets, by registration token.
    private var handlers: [Int: ChangeHandler] = [:]
    private var lastToken = 0
    private var isClosed = false

    /// Registers a receiver; returns its token for `remove(_:)`. After `close()`, `closed`
    /// runs at once and nothing is kept.
    func add(_ handler: ChangeHandler) -> Int {
        handlerLock.lock()
        lastToken += 1
        let token = lastToken
        let closedAlready = isClosed
        if !closedAlready { handlers[token] = handler }
        handlerLock.unlock()
        if closedAlready { handler.closed() }
        return token
    }

    func remove(_ token: Int) {
        handlerLock.lock(); defer { handlerLock.unlock() }
        handlers[token] = nil
    }

    /// Whether anyone receives change sets (read as each write transaction begins).
    var hasHandlers: Bool {
        handlerLock.lock(); defer { handlerLock.unlock() }
        return !handlers.isEmpty
    }

    /// The number of registered receivers.
    var handlerCount: Int {
        handlerLock.lock(); defer { handlerLock.unlock() }
        return handlers.count
    }

    /// Takes `publishLock` just before a commit; `publish` or `abandonCommit` releases it.
    func beginCommit() {
        publishLock.lock()
    }

    /// Releases `publishLock` after a commit that failed (nothing to publish).
    func abandonCommit() {
        publishLock.unlock()
    }

    /// Hands a committed transaction's changes to the registered handlers, then releases
    /// `publishLock` (taken by `beginCommit`).
    func publish(_ changes: ChangeLog) {
        defer { publishLock.unlock() }
        guard !changes.isEmpty else { return }
        handlerLock.lock()
        let receivers = handlers
        handlerLock.unlock()
        guard !receivers.isEmpty else { return }
        let set = changes.folded()
        guard !set.isEmpty else { return }
        for handler in receivers.values { handler.committed(set) }
    }

    /// Marks the publisher closed and returns the handlers it held, to be told.
    func close() -> [ChangeHandler] {
        handlerLock.lock(); defer { handlerLock.unlock() }
        isClosed = true
        let closing = Array(handlers.values)
        handlers.removeAll()
        return closing
    }
}
