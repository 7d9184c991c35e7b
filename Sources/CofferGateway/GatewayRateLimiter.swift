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

    private let buckets = Mutex<[String: Bucket]>([:])
    let rate: Double
    let burst: Double

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Whether `user` may make a request now (taking one token when so).
    func admit(_ user: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            var bucket = buckets[user] ?? Bucket(tokens: burst, at: now)
            let elapsed = now - bucket.at
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * rate)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[user] = bucket
                return false
            }
            bucket.tokens -= 1
            buckets[user] = bucket
            if buckets.count > 100_000 {
                // Full buckets say nothing a new bucket would not.
                let refill = Duration.seconds(burst / rate)
                buckets = buckets.filter { now - $0.value.at < refill }
            }
            return true
        }
    }
}
