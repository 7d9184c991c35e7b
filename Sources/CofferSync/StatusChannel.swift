import Foundation

/// Holds a replica's current ``SyncStatus`` and hands every change of it to each subscriber
/// (a slow subscriber gets the newest value, never a backlog).
final class StatusChannel: Sendable {
    private struct State {
        var current: SyncStatus
        var subscribers: [Int: AsyncStream<SyncStatus>.Continuation] = [:]
        var nextId = 0
    }

    private let state: LockedState<State>

    init(_ initial: SyncStatus) {
        state = LockedState(State(current: initial))
    }

    var current: SyncStatus { state.withLock { $0.current } }

    /// A stream that starts with the current status and yields each later one.
    func subscribe() -> AsyncStream<SyncStatus> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let id = state.withLock { state -> Int in
                state.nextId += 1
                state.subscribers[state.nextId] = continuation
                continuation.yield(state.current)
                return state.nextId
            }
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
        }
    }

    /// Changes the status and publishes it (inside the lock, so that every subscriber sees the
    /// changes in the order they were made).
    @discardableResult
    func update(_ change: (inout SyncStatus) -> Void) -> SyncStatus {
        state.withLock { state in
            change(&state.current)
            for continuation in state.subscribers.values { continuation.yield(state.current) }
            return state.current
        }
    }

    /// Ends every subscriber's stream.
    func finish() {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
