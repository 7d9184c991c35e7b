import CLMDB
import Foundation

/// The one way Coffer walks an LMDB database: a cursor scoped to a closure.
///
/// Invariants: the cursor belongs to one transaction and is closed when the closure returns;
/// an `Entry`'s bytes are valid until the transaction writes or ends. Every LMDB result other
/// than success and "not found" throws (a damaged page, a dead transaction): a walk never
/// stops silently. Interpreting keys is the caller's job, and a key that does not have the
/// expected shape is damage of the table or index that throws
/// ``CofferError/damagedStore(part:reason:)`` (see `IdKey.decode` and `IndexEntry.decode`),
/// never the end of the walk.
struct Cursor {
    /// One key and value as LMDB holds them.
    struct Entry {
        let key: UnsafeRawBufferPointer
        let value: UnsafeRawBufferPointer
    }

    let handle: OpaquePointer
    let transaction: Transaction

    /// The first entry, or nil for an empty database.
    @inline(__always)
    func first() throws -> Entry? { try move(MDB_FIRST) }

    /// The last entry, or nil for an empty database.
    @inline(__always)
    func last() throws -> Entry? { try move(MDB_LAST) }

    /// The entry after the current one, or nil at the end.
    @inline(__always)
    func next() throws -> Entry? { try move(MDB_NEXT) }

    /// The entry before the current one, or nil at the start.
    @inline(__always)
    func previous() throws -> Entry? { try move(MDB_PREV) }

    /// The first entry whose key is at or after `key` in byte order, or nil.
    @inline(__always)
    func seek(_ key: UnsafeRawBufferPointer) throws -> Entry? {
        var keyVal = MDB_val(key)
        var value = MDB_val()
        let rc = mdb_cursor_get(handle, &keyVal, &value, MDB_SET_RANGE)
        return try entry(rc, keyVal, value)
    }

    /// The first entry whose key is at or after `key`, or nil.
    func seek(_ key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { try seek($0) }
    }

    /// The first entry whose id key is at or after `key`, or nil.
    @inline(__always)
    func seek(_ key: IdKey) throws -> Entry? {
        var copy = key
        return try withUnsafeBytes(of: &copy.storage) { try seek($0) }
    }

    @inline(__always)
    private func move(_ op: MDB_cursor_op) throws -> Entry? {
        var key = MDB_val()
        var value = MDB_val()
        let rc = mdb_cursor_get(handle, &key, &value, op)
        return try entry(rc, key, value)
    }

    @inline(__always)
    private func entry(_ rc: Int32, _ key: MDB_val, _ value: MDB_val) throws -> Entry? {
        if rc == MDB_NOTFOUND { return nil }
        if rc != 0 {
            if rc == MDB_MAP_FULL { transaction.needsLargerMap = true }
            throw Failure(code: rc)
        }
        return Entry(key: key.bytes, value: value.bytes)
    }

    /// A failed LMDB call of a cursor. The cursor carries no description of its walk (holding
    /// one allocated a closure context per look-up), so the code that opened it turns this
    /// into ``CofferError/storage(code:message:)`` naming the walk (`describingFailures`);
    /// it never reaches a caller of Coffer.
    struct Failure: Error {
        let code: Int32

        func described(_ what: String) -> CofferError {
            CofferError.storage(code: .init(result: code), message: "\(what): \(LMDB.message(code))")
        }
    }
}

extension Transaction {
    /// Runs `body` with a cursor on `database`, closing it afterwards.
    ///
    /// A read transaction keeps the cursors it is done with and hands them out again (a
    /// look-up loop opened and closed one per call); every walk starts by positioning the
    /// cursor (`first`, `last`, `seek`), so a reused one carries nothing over. A write
    /// transaction closes its cursors at once (LMDB tracks them while it writes). Kept small
    /// and inlined, so that the walks built on it are specialised with their bodies.
    @inline(__always)
    func withCursor<T>(_ database: MDB_dbi, _ what: @autoclosure () -> String, _ body: (Cursor) throws -> T) throws -> T {
        let handle = try acquireCursor(database, what())
        defer { releaseCursor(handle, database) }
        // `describingFailures` spelled out: calling it would turn the autoclosure
        // description into a closure again, built on every look-up instead of on failure.
        do {
            return try body(Cursor(handle: handle, transaction: self))
        } catch let failure as Cursor.Failure {
            throw failure.described(what())
        }
    }

    /// Runs `body`, turning a cursor's failure into a storage error that names the walk
    /// (`what`, spelled only then).
    func describingFailures<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as Cursor.Failure {
            throw failure.described(what())
        }
    }

    /// An idle cursor of this read transaction on `database`, or a new one.
    private func acquireCursor(_ database: MDB_dbi, _ what: @autoclosure () -> String) throws -> OpaquePointer {
        if !isWrite, let idle = idleReadCursors.take(database) { return idle }
        var opened: OpaquePointer?
        let rc = mdb_cursor_open(txn, database, &opened)
        guard rc == 0, let opened else {
            let code = rc == 0 ? EINVAL : rc
            throw CofferError.storage(code: .init(result: code), message: "\(what()): cannot open a cursor: \(LMDB.message(code))")
        }
        return opened
    }

    private func releaseCursor(_ handle: OpaquePointer, _ database: MDB_dbi) {
        if isWrite { mdb_cursor_close(handle) } else { idleReadCursors.give(handle, on: database) }
    }
}

extension IdKey {
    /// The id of a table key; a key that is not 8 bytes is damage.
    @inline(__always)
    static func decode(_ key: UnsafeRawBufferPointer, entity: @autoclosure () -> String) throws -> Id {
        guard let id = IdKey(key)?.id else {
            throw CofferError.damagedStore(part: .table(entity: entity()), reason: "a key of \(key.count) bytes is not an 8-byte id")
        }
        return id
    }
}

/// An index key split into its value part and the object id.
struct IndexEntry {
    let value: UnsafeRawBufferPointer
    let id: Id

    /// Splits an index key (`tag ‖ value ‖ id`); a key too short to hold a tag and an id is
    /// damage.
    @inline(__always)
    static func decode(_ key: UnsafeRawBufferPointer, property: @autoclosure () -> String, entity: @autoclosure () -> String) throws -> IndexEntry {
        guard key.count >= 9 else {
            throw CofferError.damagedStore(
                part: .index(entity: entity(), property: property()),
                reason: "an entry has \(key.count) bytes, too short for a value and an id")
        }
        let split = key.count - 8
        return IndexEntry(value: UnsafeRawBufferPointer(rebasing: key[..<split]),
                          id: Id(bigEndian: UnsafeRawBufferPointer(rebasing: key[split...]).loadUnaligned(as: UInt64.self)))
    }
}
