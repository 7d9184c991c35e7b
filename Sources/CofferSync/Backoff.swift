import Foundation

/// Exponential backoff with jitter, bounded: each failure (or quiet poll) doubles the wait up
/// to a ceiling, and each wait is drawn between half and all of it, so that replicas that
/// failed together do not retry together.
struct Backoff: Sendable {
    let first: Duration
    let longest: Duration
    private(set) var current: Duration

    init(first: Duration, longest: Duration) {
        self.first = first
        self.longest = max(first, longest)
        current = first
    }

    /// The next wait, and the one after it doubled.
    mutating func next() -> Duration {
        let wait = Self.jittered(current)
        current = min(current * 2, longest)
        return wait
    }

    mutating func reset() {
        current = first
    }

    /// A wait drawn uniformly between half of `duration` and all of it.
    static func jittered(_ duration: Duration) -> Duration {
        duration * Double.random(in: 0.5...1.0)
    }
}
