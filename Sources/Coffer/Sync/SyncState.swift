/// The replica's persisted sync counters, kept in the catalog under `sync/state` (24 bytes:
/// clock, last mutation id, send floor; big-endian) and written in the same transaction as
/// the outbox entries they describe.
struct SyncState: Equatable {
    static let catalogKey = "sync/state"
    static let size = 24

    /// The last hybrid clock value handed out.
    var clock: UInt64 = 0
    /// The last mutation id handed out (0: none yet).
    var lastMid: UInt64 = 0
    /// The highest mid a pusher has taken: entries at or below it may be on their way to the
    /// server and are never merged into; later changes get new entries.
    var sendFloor: UInt64 = 0

    init() {}

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count == Self.size else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync state has \(bytes.count) bytes, not \(Self.size)")
        }
        clock = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        lastMid = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        sendFloor = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        guard sendFloor <= lastMid else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync state's send floor \(sendFloor) is above its last mutation id \(lastMid)")
        }
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.size)
        for value in [clock, lastMid, sendFloor] { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        return bytes
    }
}
