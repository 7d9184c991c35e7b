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
///   and retried (map growth) runs publish nothing.
/// - Commits publish in commit order: `publishLock` is taken before `mdb_txn_commit`
///   (`beginCommit`) and released after the handlers ran (`publish`), and writers are
///   serialised before that.
/// - Commits of other processes on the same file are found by LMDB's last transaction id:
///   `toldThrough` is the id up to which observers were told of every commit. A commit of
///   this process that wrote takes one id; any other id past `toldThrough` (found at this
///   process's next commit or at `checkExternal`) is another process's, and its change set is
///   `ChangeSet.external` (no ids: observers look again from scratch). While nobody observes,
///   nothing is tracked: the first handler's registration reads the id to start from (before
///   the observer's first look). Where it is not known (a race with a commit, the store
///   closing), the next check reports "external" once: a needless look, never a missed one.
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
    /// See the rules above; nil while not known. Read and written under `handlerLock`,
    /// advanced only by holders of `publishLock`.
    private var toldThrough: UInt64?
    /// Whether the task checking for other processes' commits runs (`Store.startCheckingExternalCommits`).
    private var isCheckingExternal = false

    /// Registers a receiver; returns its token for `remove(_:)`. After `close()`, `closed`
    /// runs at once and nothing is kept. `lastCommitted`: LMDB's last transaction id, read
    /// just before (nil when it could not be read), where tracking starts when nothing
    /// tracked it.
    func add(_ handler: ChangeHandler, lastCommitted: UInt64?) -> Int {
        handlerLock.lock()
        lastToken += 1
        let token = lastToken
        let closedAlready = isClosed
        if !closedAlready {
            handlers[token] = handler
            if toldThrough == nil { toldThrough = lastCommitted }
        }
        handlerLock.unlock()
        if closedAlready { handler.closed() }
        return token
    }

    func remove(_ token: Int) {
        handlerLock.lock(); defer { handlerLock.unlock() }
        handlers[token] = nil
        if handlers.isEmpty { toldThrough = nil }
    }

    /// Claims the running of the check for other processes' commits: true when someone
    /// observes and no check runs yet (the caller starts it).
    func claimExternalCheck() -> Bool {
        handlerLock.lock(); defer { handlerLock.unlock() }
        guard !isCheckingExternal, !handlers.isEmpty, !isClosed else { return false }
        isCheckingExternal = true
        return true
    }

    /// Whether the running check should stop (nobody observes, or the store closed); when
    /// true it is no longer claimed.
    func releaseExternalCheckIfIdle() -> Bool {
        handlerLock.lock(); defer { handlerLock.unlock() }
        guard handlers.isEmpty || isClosed else { return false }
        isCheckingExternal = false
        return true
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
    /// `publishLock` (taken by `beginCommit`). `committed`: whether the transaction wrote
    /// (took a transaction id) and LMDB's last transaction id read right after the commit;
    /// nil when nobody observed as it committed.
    func publish(_ changes: ChangeLog, committed: (wrote: Bool, last: UInt64)?) {
        defer { publishLock.unlock() }
        handlerLock.lock()
        let receivers = handlers
        var external = false
        if let committed, !receivers.isEmpty {
            external = toldThrough.map { committed.last != $0 &+ (committed.wrote ? 1 : 0) } ?? true
            toldThrough = committed.last
        }
        handlerLock.unlock()
        guard !receivers.isEmpty, !changes.isEmpty || external else { return }
        var set = changes.folded()
        if external { set.append(.external) }
        guard !set.isEmpty else { return }
        for handler in receivers.values { handler.committed(set) }
    }

    /// Tells the handlers of other processes' commits when LMDB's last transaction id is
    /// past `toldThrough` (the caller holds `publishLock` and read `last` holding the
    /// store's gate), then releases `publishLock`.
    func publishExternal(last: UInt64) {
        defer { publishLock.unlock() }
        handlerLock.lock()
        let receivers = handlers
        let external = !receivers.isEmpty && toldThrough != last
        if !receivers.isEmpty { toldThrough = last }
        handlerLock.unlock()
        guard external else { return }
        for handler in receivers.values { handler.committed(.external) }
    }

    /// Marks the publisher closed and returns the handlers it held, to be told.
    func close() -> [ChangeHandler] {
        handlerLock.lock(); defer { handlerLock.unlock() }
        isClosed = true
        let closing = Array(handlers.values)
        handlers.removeAll()
        toldThrough = nil
        return closing
    }
}
