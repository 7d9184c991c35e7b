import Foundation

extension SyncReplica {
    /// When an entity whose pull failed is tried again by ``run()``: its own backoff
    /// (``Options/entityRetry``'s waits, doubling with jitter per failure in a row), so that an
    /// entity failing for good costs no round trip per pass while the others sync.
    struct EntityBackoff: Sendable {
        var backoff: Backoff
        var retryAt: ContinuousClock.Instant
    }

    /// Whether `run()` leaves `entity` out of this pass: it failed, and its next attempt is
    /// not due yet.
    func pullIsBackingOff(_ entity: String) -> Bool {
        state.withLock { state in state.pullBackoff[entity].map { state.clock() < $0.retryAt } ?? false }
    }

    /// Schedules the next attempt of `entity` after a failure; returns when it is due.
    func schedulePullRetry(_ entity: String) -> Date {
        let options = options
        let wait = state.withLock { state -> Duration in
            var entry = state.pullBackoff[entity]
                ?? EntityBackoff(backoff: Backoff(first: options.entityRetry.first, longest: options.entityRetry.longest), retryAt: state.clock())
            let wait = entry.backoff.next()
            entry.retryAt = state.clock() + wait
            state.pullBackoff[entity] = entry
            return wait
        }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        return Date().addingTimeInterval(seconds)
    }

    /// Forgets `entity`'s backoff: it pulled to the horizon.
    func resetPullBackoff(_ entity: String) {
        state.withLock { state in _ = state.pullBackoff.removeValue(forKey: entity) }
    }
}
