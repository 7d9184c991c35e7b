import Foundation

/// The replica's id toward sync servers, and the data file it was taken for: kept in the
/// catalog under `sync/replica` (32 bytes: the UUID, then the device and inode of
/// `data.mdb`, both 64-bit big-endian).
///
/// A server skips the mutation ids it has applied for a client id, so one id must never
/// count mids twice: a copy of the store (a copied directory, a backup, a restore) holds the
/// same outbox counter as the original and would resend or reuse mids under the original's
/// id. A copy is a different file, so its (device, inode) differ from the recorded ones and
/// it takes a new id at its first use.
struct ReplicaIdentity: Equatable {
    static let catalogKey = "sync/replica"
    static let size = 32

    var clientId: UUID
    var device: UInt64
    var inode: UInt64

    init(clientId: UUID, device: UInt64, inode: UInt64) {
        self.clientId = clientId
        self.device = device
        self.inode = inode
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count == Self.size, let clientId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: bytes[0..<16])) else {
            throw CofferError.damagedStore(part: .sync, reason: "the replica identity has \(bytes.count) bytes, not \(Self.size)")
        }
        self.clientId = clientId
        device = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        inode = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    func encoded() -> [UInt8] {
        var bytes = clientId.syncBytes
        bytes.reserveCapacity(Self.size)
        withUnsafeBytes(of: device.bigEndian) { bytes += $0 }
        withUnsafeBytes(of: inode.bigEndian) { bytes += $0 }
        return bytes
    }

    /// Whether the identity was taken for the file with this device and inode.
    func belongs(to file: (device: UInt64, inode: UInt64)) -> Bool {
        device == file.device && inode == file.inode
    }

    /// The device and inode of the data file in the store directory `path`.
    ///
    /// - Throws: ``CofferError/storage(code:message:)`` when the file cannot be examined.
    static func dataFile(of path: String) throws -> (device: UInt64, inode: UInt64) {
        var info = stat()
        let file = path + "/data.mdb"
        guard stat(file, &info) == 0 else {
            let code = errno
            throw CofferError.storage(code: .system(CofferError.SystemCode(rawValue: code)),
                                      message: "cannot examine \(file) for the replica's sync identity: \(String(cString: strerror(code)))")
        }
        return (UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino))
    }
}
