import Synchronization

/// Fans the gateway's one LISTEN out to the requests waiting for changes (`GET /v1/wait`):
/// each notification, and each re-established LISTEN (notifications sent while it was down
/// are lost), wakes every request waiting at that moment and moves the generation on. A
/// client passes the generation its last wait returned, so a change between two of its
/// waits is not missed: a wait from an older generation (or another run of the gateway)
/// returns at once. A wait ends with `true` when woken, `false` at its timeout or when
/// cancelled (the client went away), and with nil at once when too many wait already.
final class GatewayWakeHub: Sendable {
    private struct State {
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextId: UInt64 = 0
        var generation: UInt64 = 0
        /// Waits that ended (timeout, cancellation) before they were registered.
        var ended: Set<UInt64> = []
    }

    private let state = Mutex(State())
    let limit: Int
    /// This run of the gateway, so that a generation of an earlier run never matches.
    let epoch = UInt64.random(in: 1...UInt64.max)

    init(limit: Int) {
        self.limit = limit
    }

    /// How many requests wait now (for the metrics).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Wakes every waiting request.
    func signal() {
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            let woken = Array(state.waiters.values)
            state.waiters.removeAll()
            state.generation &+= 1
            return woken
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// The generation as clients pass it back: `<epoch>-<count>`.
    var generation: String { "\(epoch)-\(state.withLock { $0.generation })" }

    /// Whether a change came after generation `after` (nil: the client has none yet), waiting
    /// for the next one at most `timeout`; and the generation to pass next time.
    func wait(after: String?, timeout: Duration) async -> (changed: Bool, generation: String)? {
        let seen = state.withLock { $0.generation }
        let current = "\(epoch)-\(seen)"
        if after != current { return (true, current) }
        guard let changed = await wait(timeout: timeout, seen: seen) else { return nil }
        return (changed, generation)
    }

    /// Waits for the next signal after generation `seen` (nil: the next one), at most
    /// `timeout`; nil at once when `limit` requests wait already.
    func wait(timeout: Duration, seen: UInt64? = nil) async -> Bool? {
        let id = state.withLock { state -> UInt64? in
            guard state.waiters.count < limit else { return nil }
            state.nextId += 1
            return state.nextId
        }
        guard let id else { return nil }
        let timer = Task {
            // Cancelled when the wait ended otherwise: then there is nothing to end.
            do {
                try await Task.sleep(for: timeout)
                self.end(id)
            } catch {}
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> Bool? in
                    if state.ended.remove(id) != nil { return false }
                    // A signal between reading the generation and waiting.
                    if let seen, state.generation != seen { return true }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.end(id)
        }
    }

    private func end(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            state.ended.insert(id)
            return nil
        }
        waiter?.resume(returning: false)
    }
}
