import Foundation

/// Makes UUIDv7 sync ids (RFC 9562): 48 bits of Unix milliseconds, the version, then 74 bits
/// that hold a counter (RFC 9562 section 6.2, method 1 with the whole random part as the
/// counter): random at the first id of a millisecond, one more for each later id of it. So
/// the ids one transaction makes ascend (its identity tables append them) and cost one draw
/// of random bits, not one per id; the random start keeps ids of different replicas apart.
struct SyncIdGenerator {
    /// The millisecond the counter belongs to (`.max`: none yet).
    private var milliseconds = UInt64.max
    /// The 74-bit counter: 12 bits in the `rand_a` field, 62 in `rand_b`.
    private var high: UInt16 = 0
    private var low: UInt64 = 0

    private static let lowLimit: UInt64 = 1 << 62
    private static let highLimit: UInt16 = 1 << 12

    /// The next id at `milliseconds` (clamped to the 48 bits of the field). Within one
    /// millisecond, each id is above the previous one.
    mutating func next(milliseconds requested: UInt64) -> UUID {
        let time = min(requested, HybridClock.maximumMilliseconds)
        if time != milliseconds {
            seed(time)
        } else {
            low &+= 1
            if low == Self.lowLimit {
                low = 0
                high &+= 1
                // 2^73 ids in one millisecond: never reached, but an id never repeats.
                if high == Self.highLimit { seed(min(time + 1, HybridClock.maximumMilliseconds)) }
            }
        }
        return Self.uuid(milliseconds: milliseconds, high: high, low: low)
    }

    /// A random start for `time`, with the counter's top bit clear (room for 2^73 ids).
    private mutating func seed(_ time: UInt64) {
        var random = SystemRandomNumberGenerator()
        milliseconds = time
        high = UInt16(truncatingIfNeeded: random.next() as UInt64) & 0x7FF
        low = (random.next() as UInt64) & (Self.lowLimit - 1)
    }

    /// A random UUIDv7 at `milliseconds` (no counter: ids made by separate calls within one
    /// millisecond are in no particular order).
    static func make(milliseconds: UInt64) -> UUID {
        var generator = SyncIdGenerator()
        return generator.next(milliseconds: milliseconds)
    }

    private static func uuid(milliseconds: UInt64, high: UInt16, low: UInt64) -> UUID {
        let first = milliseconds << 16 | 0x7000 | UInt64(high)  // time ‖ version 7 ‖ rand_a
        let second = 0x8000_0000_0000_0000 | low                // RFC 9562 variant ‖ rand_b
        // Two big-endian words are the 16 bytes in order (uuid_t is 16 bytes, no padding).
        return UUID(uuid: unsafeBitCast((first.bigEndian, second.bigEndian), to: uuid_t.self))
    }
}

extension UUID {
    /// The 16 bytes of the UUID, in order.
    var syncBytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// A UUID from 16 bytes read from the store; nil when there are not exactly 16.
    init?(syncBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 16 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
        self.init(uuid: value)
    }

    /// Copies the 16 bytes of the UUID to `destination`.
    @inline(__always)
    func copySyncBytes(to destination: UnsafeMutableRawPointer) {
        withUnsafeBytes(of: uuid) { destination.copyMemory(from: $0.baseAddress.unsafelyUnwrapped, byteCount: 16) }
    }
}
