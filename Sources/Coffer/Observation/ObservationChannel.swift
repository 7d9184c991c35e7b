import Foundation

/// The hand-over from a store's commit handler (on the committing thread) to one observer
/// task: a single pending value that later sends merge into, and at most one waiting task.
///
/// Invariants: memory stays bounded however slow the consumer is, because sends merge into
/// the one pending value (a union of changed ids) instead of queueing; once finished, the
/// channel stays finished and `wait()` returns false at once; at most one task waits (a
/// second concurrent waiter is answered with `false`, ending its sequence).
///
/// `@unchecked Sendable`: all mutable state is behind `lock` (an `NSLock`, not
/// `Synchronization.Mutex`, which needs macOS 15).
final class ObservationChannel<Pending: Sendable>: @unchecked Sendable {
    private struct State {
        var pending: Pending?
        var isFinished = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let lock = NSLock()
    private var state = State()
    private let merge: @Sendable (inout Pending, Pending) -> Void

    /// `merge(&pending, later)` folds a later value into the pending one.
    init(merge: @escaping @Sendable (inout Pending, Pending) -> Void) {
        self.merge = merge
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock(); defer { lock.unlock() }
        return body(&state)
    }

    /// Merges `value` into the pending value and wakes the waiting task.
    func send(_ value: Pending) {
        let waiter = withState { state -> CheckedContinuation<Bool, Never>? in
            guard !state.isFinished else { return nil }
            // `take()` leaves the value uniquely referenced, so merging does not copy it.
            if var pending = state.pending.take() {
                merge(&pending, value)
                state.pending = pending
            } else {
                state.pending = value
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Ends the channel: the waiting task and every later `wait()` get false.
    func finish() {
        let waiter = withState { state -> CheckedContinuation<Bool, Never>? in
            state.isFinished = true
            state.pending = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    var isFinished: Bool { withState { $0.isFinished } }

    /// Takes the pending value, if any.
    func take() -> Pending? {
        withState { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// Suspends until a value is pending (true) or the channel is finished (false).
    /// Cancelling the waiting task finishes the channel.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer = withState { state -> Bool? in
                    if state.isFinished || Task.isCancelled { return false }
                    if state.pending != nil { return true }
                    if state.waiter != nil { return false }
                    state.waiter = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            finish()
        }
    }
}
