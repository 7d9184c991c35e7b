import Foundation

/// How commits reach observers: see `CommitPublisher` for the rules.
extension Store {
    /// Registers a receiver of every commit's change set (and of the store's closing);
    /// returns a token for ``removeChangeHandler(_:)``.
    func addChangeHandler(_ committed: @escaping @Sendable (ChangeSet) -> Void,
                          onClose closed: @escaping @Sendable () -> Void = {}) -> Int {
        let token = publisher.add(ChangeHandler(committed: committed, closed: closed), lastCommitted: lastCommittedIfOpen())
        startCheckingExternalCommits()
        return token
    }

    /// LMDB's last committed transaction id, or nil when the store is closed. A thread in a
    /// transaction of this store holds the gate already and must not take it again.
    private func lastCommittedIfOpen() -> UInt64? {
        if Transaction.current(for: self) != nil { return environment.lastCommittedTransactionId() }
        environment.gate.lockShared()
        defer { environment.gate.unlock() }
        return environment.isClosed ? nil : environment.lastCommittedTransactionId()
    }

    /// Whether anyone receives change sets (read as each write transaction begins).
    var hasChangeHandlers: Bool { publisher.hasHandlers }

    /// The number of registered receivers (tests check that observers unsubscribe).
    var changeHandlerCount: Int { publisher.handlerCount }

    func removeChangeHandler(_ token: Int) {
        publisher.remove(token)
    }

    /// Runs `body` in a new read transaction whose snapshot holds exactly the commits
    /// published before `taking` ran: `taking` (an observer collecting its pending change
    /// sets) and the start of the snapshot happen together under the publisher's
    /// `publishLock`.
    func performObservedRead<T>(taking: () -> Void, _ body: (Transaction) throws -> T) throws -> T {
        guard Transaction.current(for: self) == nil else {
            throw CofferError.misuse(.observeInsideTransaction(path: path))
        }
        return try performNewRead(observing: true, atSnapshot: taking, body)
    }
}
