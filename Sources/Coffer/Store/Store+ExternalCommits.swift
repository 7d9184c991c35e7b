import Foundation

extension Store {
    /// Tells this store's observers now if another process committed to the same directory
    /// since they last heard (an app extension, a widget, a background helper, a second
    /// server process). Observers look again from scratch: ``Query/results(offset:limit:)``,
    /// ``QueryController`` and the live objects (``LiveResults`` and the others) deliver what
    /// changed; ``Box/changes()`` delivers a change whose ``ObjectChanges/isComplete`` is
    /// false, as another process's ids are not known.
    ///
    /// While anything observes, the store checks by itself every
    /// ``StoreOptions/externalCommitCheckInterval``; call this when the app knows sooner
    /// (a notification from the extension, the app coming to the foreground). A check reads
    /// one number from LMDB's meta page and does nothing when nobody observes or nothing
    /// changed.
    ///
    /// ```swift
    /// // The share extension wrote; the app returns to the foreground.
    /// try store.checkForExternalCommits()
    /// ```
    ///
    /// - Throws: ``CofferError/storeClosed(path:)``; ``CofferError/misuse(_:)``
    ///   (`.observeInsideTransaction`) inside `store.read { }` or `store.write { }`.
    public func checkForExternalCommits() throws {
        guard Transaction.current(for: self) == nil else {
            throw CofferError.misuse(.observeInsideTransaction(path: path))
        }
        guard publisher.hasHandlers else { return }
        // Lock order: the gate, then the publish lock (see `StoreEnvironment`).
        environment.gate.lockShared()
        defer { environment.gate.unlock() }
        guard !environment.isClosed else { throw CofferError.storeClosed(path: path) }
        publisher.beginCommit()
        publisher.publishExternal(last: environment.lastCommittedTransactionId())
    }

    /// The shortest interval between periodic checks, whatever the options say.
    static let shortestExternalCommitCheck = Duration.milliseconds(10)

    /// Starts the periodic check for other processes' commits unless it runs or is off;
    /// called when an observer registers. It ends by itself once nobody observes (or the
    /// store closed) and starts again with the next observer. It holds the store weakly.
    func startCheckingExternalCommits() {
        guard let configured = options.externalCommitCheckInterval, publisher.claimExternalCheck() else { return }
        // A zero or negative interval would make the check spin.
        let interval = max(configured, Self.shortestExternalCommitCheck)
        Task.detached(priority: .utility) { [weak self] in
            while true {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return  // cancelled: nothing started it to be cancelled, but end cleanly
                }
                guard let store = self else { return }
                if store.publisher.releaseExternalCheckIfIdle() { return }
                do {
                    try store.checkForExternalCommits()
                } catch {
                    // Closed meanwhile: the next round sees it and ends.
                    continue
                }
            }
        }
    }
}
