import Foundation

/// A latch between whoever learns that something changed (a NOTIFY, a local commit) and the
/// one task that waits for it: a signal that comes while nobody waits is kept (once) for the
/// next wait, so no wake-up falls between a sync pass and the wait that follows it.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Bool, Never>)?
        var nextId: UInt64 = 0
        /// A wait whose time ran out (or that was cancelled) before it registered.
        var expired: UInt64?
    }

    private let state = LockedState(State())

    /// Wakes the waiter, or keeps the signal for the next wait.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: true)
    }

    /// Drops a kept signal (the caller is about to look at everything anyway).
    func clear() {
        state.withLock { $0.pending = false }
    }

    /// True when signalled (now or before, since the last wait), false after `timeout` or
    /// when the task is cancelled. One waiter at a time: a second one ends the first (false).
    func wait(timeout: Duration) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextId += 1
            return state.nextId
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(id, with: false)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (immediate, displaced) = state.withLock { state -> (Bool?, CheckedContinuation<Bool, Never>?) in
                    if state.pending {
                        state.pending = false
                        return (true, nil)
                    }
                    if state.expired == id { return (false, nil) }
                    let displaced = state.waiter?.continuation
                    state.waiter = (id, continuation)
                    return (nil, displaced)
                }
                displaced?.resume(returning: false)
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.resume(id, with: false)
        }
    }

    private func resume(_ id: UInt64, with value: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter, waiter.id == id else {
                state.expired = id
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: value)
    }
}
