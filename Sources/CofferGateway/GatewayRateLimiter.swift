import Foundation
import Synchronization

/// Each user's requests as a token bucket: `burst` requests at once, refilled at `rate` per
/// second. A request over the limit is refused (429), not queued, so one device cannot hold
/// the gateway's connections. Buckets of users idle long enough to be full again are dropped.
final class GatewayRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: ContinuousClock.Instant
    }

    private struct State {
        var buckets: [String: Bucket] = [:]
        var lastSweep: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    let rate: Double
    let burst: Double

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Whether `user` may make a request now (taking one token when so).
    func admit(_ user: String, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            var bucket = state.buckets[user] ?? Bucket(tokens: burst, at: now)
            let elapsed = now - bucket.at
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * rate)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                state.buckets[user] = bucket
                return false
            }
            bucket.tokens -= 1
            state.buckets[user] = bucket
            // Full buckets say nothing a new bucket would not: dropped, at most once a minute.
            if state.buckets.count > 100_000, state.lastSweep.map({ now - $0 > .seconds(60) }) ?? true {
                let refill = Duration.seconds(burst / rate)
                state.buckets = state.buckets.filter { now - $0.value.at < refill }
                state.lastSweep = now
            }
            return true
        }
    }
}
