import Foundation

/// Where a store reads physical time for its hybrid clock: the system clock, or a function
/// tests install to move time backwards and forwards.
final class SyncClock: @unchecked Sendable {
    private let lock = NSLock()
    private var source: (@Sendable () -> UInt64)?

    /// Milliseconds since 1970.
    func now() -> UInt64 {
        let custom = lock.withLock { source }
        return custom?() ?? HybridClock.systemMilliseconds()
    }

    /// Replaces the system clock (nil restores it).
    func use(_ source: (@Sendable () -> UInt64)?) {
        lock.withLock { self.source = source }
    }
}
