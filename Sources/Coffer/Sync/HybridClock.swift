import Foundation

/// The replica's hybrid logical clock: 64 bits, the upper 48 Unix milliseconds and the lower
/// 16 a logical counter, so that its values order like time and never repeat.
///
/// A tick is `max(physical now, last + 1)`: when the wall clock goes backwards (or stands
/// still) the counter goes on from the last value, and a counter overflow carries into the
/// millisecond part. Receiving a remote value advances past it. The value is persisted with
/// every write transaction that ticks, so it is monotonic across restarts too.
enum HybridClock {
    /// Bits of the logical counter.
    static let counterBits: UInt64 = 16
    /// The largest millisecond value the clock can hold (year 10889).
    static let maximumMilliseconds: UInt64 = (1 << 48) - 1

    /// The clock value of `milliseconds` with a zero counter (physical times past the 48-bit
    /// range are clamped to it).
    static func value(milliseconds: UInt64) -> UInt64 {
        min(milliseconds, maximumMilliseconds) << counterBits
    }

    /// The milliseconds part of a clock value.
    static func milliseconds(of value: UInt64) -> UInt64 { value >> counterBits }

    /// The next value after `last` at the physical time `now` (milliseconds).
    ///
    /// - Throws: ``CofferError/damagedStore(part:reason:)`` when `last` is the last value the
    ///   clock can hold (no real clock reaches it; a damaged or hostile value can): an error,
    ///   never a trap or a wrap to an earlier value.
    static func tick(after last: UInt64, now: UInt64) throws -> UInt64 {
        guard last < UInt64.max else { throw exhausted() }
        return max(value(milliseconds: now), last + 1)
    }

    /// How far ahead of the time it is measured from a received value may pull the clock:
    /// the server clamps pushed clocks the same way.
    static let maximumSkewMilliseconds: UInt64 = 5 * 60 * 1000

    /// The next value after both `last` and a `remote` value received from the server (a
    /// pulled or fetched change), and after `serverClock`, the server's own clock when it
    /// sent the value (0: not known).
    ///
    /// A remote value more than ``maximumSkewMilliseconds`` ahead of the later of `now` and
    /// the server's time counts as that far ahead only: one bad clock (a hostile peer, a
    /// damaged row) cannot make this replica win every later conflict, nor drive its clock to
    /// the end of its range. The server's time itself is taken as it is: a replica whose
    /// physical clock is slow (or jumped back) then stamps its next changes after everything
    /// it pulled and after the server's present, so that a change made after seeing another
    /// orders after it on the server as here.
    static func receive(_ remote: UInt64, after last: UInt64, now: UInt64, serverClock: UInt64 = 0) throws -> UInt64 {
        let anchor = max(now, milliseconds(of: serverClock))
        let (ahead, overflow) = anchor.addingReportingOverflow(maximumSkewMilliseconds)
        let limit = value(milliseconds: overflow ? .max : ahead) | 0xFFFF  // saturates at the clock's range
        let highest = max(last, min(remote, limit), min(serverClock, limit))
        guard highest < UInt64.max else { throw exhausted() }
        return max(value(milliseconds: now), highest + 1)
    }

    private static func exhausted() -> CofferError {
        CofferError.damagedStore(part: .sync, reason: "the hybrid clock is at its last value and cannot advance")
    }

    /// Milliseconds since 1970 of the system clock (0 before 1970).
    static func systemMilliseconds() -> UInt64 {
        let seconds = Date().timeIntervalSince1970
        guard seconds > 0 else { return 0 }
        return UInt64(min(seconds * 1000, Double(maximumMilliseconds)))
    }
}
