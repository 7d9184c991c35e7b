import CLMDB

/// Small helpers around LMDB's C API: result codes to `CofferError`, and `MDB_val` views.
enum LMDB {
    static func message(_ code: Int32) -> String {
        guard let text = mdb_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Throws `CofferError.storage` for a non-zero LMDB result code, naming `what` failed.
    @inline(__always)
    static func check(_ code: Int32, _ what: @autoclosure () -> String) throws {
        if code != 0 { throw CofferError.storage(code: .init(result: code), message: "\(what()): \(message(code))") }
    }
}

extension MDB_val {
    /// A view of `bytes`, valid only while `bytes` is.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer) {
        self.init(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }

    /// The bytes LMDB points to; valid until the transaction ends or writes.
    @inline(__always)
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_size) }
}

/// An object id as an 8-byte big-endian key, so that LMDB's byte order is id order.
struct IdKey {
    var storage: UInt64

    init(_ id: Id) { storage = id.bigEndian }

    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 8 else { return nil }
        storage = bytes.loadUnaligned(as: UInt64.self)
    }

    var id: Id { Id(bigEndian: storage) }

    /// Runs `body` with an `MDB_val` pointing at the key bytes.
    @inline(__always)
    mutating func withVal<T>(_ body: (inout MDB_val) throws -> T) rethrows -> T {
        try withUnsafeMutableBytes(of: &storage) { raw in
            var val = MDB_val(mv_size: 8, mv_data: raw.baseAddress)
            return try body(&val)
        }
    }
}
