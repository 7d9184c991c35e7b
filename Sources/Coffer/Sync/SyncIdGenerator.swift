import Foundation

/// Makes UUIDv7 sync ids (RFC 9562): 48 bits of Unix milliseconds, the version, 74 random
/// bits. Ids made later sort after earlier ones, which keeps the identity tables appending.
enum SyncIdGenerator {
    static func make(milliseconds: UInt64) -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        let time = min(milliseconds, HybridClock.maximumMilliseconds)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: time >> (8 * (5 - UInt64(index)))) }
        let random = generator.next() as UInt64
        let more = generator.next() as UInt64
        for index in 6..<8 { bytes[index] = UInt8(truncatingIfNeeded: random >> (8 * UInt64(index))) }
        for index in 8..<16 { bytes[index] = UInt8(truncatingIfNeeded: more >> (8 * UInt64(index - 8))) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)  // version 7
        bytes[8] = 0x80 | (bytes[8] & 0x3F)  // RFC 9562 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
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
}
