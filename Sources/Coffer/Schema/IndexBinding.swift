import CLMDB

/// One property index of an entity bound to a store (a class: bindings are shared and
/// iterated on every put, and copying a struct holding the property's schema retained its strings): a plain LMDB database whose keys are
/// `IndexKey` encodings of the value followed by the 8-byte big-endian id (values empty).
///
/// Composite keys instead of LMDB's duplicate-sorted databases: 0.9.24 has DUPSORT bugs in
/// cursor deletes, and a composite key makes every entry unique and deletable by one
/// `mdb_del`.
final class IndexBinding: @unchecked Sendable {
    let position: Int
    let storedId: UInt16
    let property: PropertySchema
    let database: MDB_dbi
    /// Snapshots older than this transaction do not have the index yet.
    let createdInTransaction: Int

    let isUnique: Bool

    init(position: Int, storedId: UInt16, property: PropertySchema, database: MDB_dbi, createdInTransaction: Int) {
        self.position = position
        self.storedId = storedId
        self.property = property
        self.database = database
        self.createdInTransaction = createdInTransaction
        isUnique = property.flags.contains(.unique)
    }

    static func databaseName(entity: UInt32, property: UInt16) -> String { "index.\(entity).\(property)" }

    /// The index key (without id) for the value in a record, or the nil key when the record
    /// holds no value.
    func key(in record: UnsafeRawBufferPointer) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(24)
        writeKey(in: record, to: &key)
        return key
    }

    /// Replaces `key`'s contents with the index key of the record's value (keeps capacity).
    func writeKey(in record: UnsafeRawBufferPointer, to key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        if let field = RecordFields(bytes: record).field(storedId),
           IndexKey.encode(property.type, kind: field.kind, payload: field.payload, into: &key) {
            return
        }
        key.removeAll(keepingCapacity: true)
        key.append(IndexKey.nilTag)
    }
}

extension Transaction {
    /// Adds `key ‖ id` to an index.
    ///
    /// Values often arrive in ascending order (sequential names, timestamps), so the entry is
    /// first appended without a search; when that fails once (`MDB_KEYEXIST`, which leaves the
    /// transaction intact), this transaction stops trying for that index.
    func insertIndexEntry(_ index: IndexBinding, key: [UInt8], id: Id) throws {
        try withEntryKey(key, id) { keyVal in
            var empty = MDB_val(mv_size: 0, mv_data: nil)
            if !unorderedIndexes.contains(index.database) {
                let rc = mdb_put(txn, index.database, &keyVal, &empty, UInt32(MDB_APPEND))
                if rc != MDB_KEYEXIST { return try check(rc, "updating the index on \(index.property.name)") }
                unorderedIndexes.insert(index.database)
            }
            try check(mdb_put(txn, index.database, &keyVal, &empty, 0), "updating the index on \(index.property.name)")
        }
    }

    /// Removes `key ‖ id` from an index (absent entries are ignored).
    func deleteIndexEntry(_ index: IndexBinding, key: [UInt8], id: Id) throws {
        try withEntryKey(key, id) { keyVal in
            let rc = mdb_del(txn, index.database, &keyVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "updating the index on \(index.property.name)") }
        }
    }

    /// Calls `body` with `key ‖ id` assembled on the stack (index keys are short).
    private func withEntryKey(_ key: [UInt8], _ id: Id, _ body: (inout MDB_val) throws -> Void) throws {
        let size = key.count + 8
        try withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
            key.withUnsafeBytes { buffer.copyMemory(from: $0) }
            buffer.storeBytes(of: id.bigEndian, toByteOffset: key.count, as: UInt64.self)
            var keyVal = MDB_val(UnsafeRawBufferPointer(buffer))
            try body(&keyVal)
        }
    }

    /// The ids of index entries whose key is `prefix` followed by an id, in key order.
    func indexIds(_ index: IndexBinding, prefix: [UInt8]) throws -> [Id] {
        var ids: [Id] = []
        try forEachIndexEntry(index, prefix: prefix) { id, valuePart in
            if valuePart.count == prefix.count { ids.append(id) }
        }
        return ids
    }

    /// Calls `body` with the id and value part of every index entry whose key starts with
    /// `prefix`, in key order.
    func forEachIndexEntry(_ index: IndexBinding, prefix: [UInt8], _ body: (Id, UnsafeRawBufferPointer) throws -> Void) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, index.database, &cursor), "reading the index on \(index.property.name)")
        defer { mdb_cursor_close(cursor) }
        var start = prefix
        try start.withUnsafeMutableBytes { raw in
            var key = MDB_val(UnsafeRawBufferPointer(raw))
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            while rc == 0 {
                let bytes = key.bytes
                guard bytes.count >= prefix.count + 8, bytes.starts(with: prefix) else { break }
                let id = Id(bigEndian: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - 8)...]).loadUnaligned(as: UInt64.self))
                try body(id, UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 8)]))
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != 0 && rc != MDB_NOTFOUND { try check(rc, "reading the index on \(index.property.name)") }
        }
    }

    /// The record bytes of `id` in `table`, valid until the next write in this transaction.
    func record(_ id: Id, table: MDB_dbi, entity: @autoclosure () -> String) throws -> UnsafeRawBufferPointer? {
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var value = MDB_val()
            let rc = mdb_get(txn, table, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "reading \(entity()) \(id)")
            return value.bytes
        }
    }

    /// Ids of stored objects whose `index` value equals the value in `record` (rechecking
    /// cut strings against the records), excluding `excluded`.
    func matchingIds(_ index: IndexBinding, valueOf record: UnsafeRawBufferPointer, table: MDB_dbi,
                     entity: String, excluding excluded: Id? = nil) throws -> [Id] {
        let key = index.key(in: record)
        var candidates = try indexIds(index, prefix: key).filter { $0 != excluded }
        if IndexKey.isTruncatedString(key[...]) {
            let wanted = Array(RecordFields(bytes: record).field(index.storedId)?.payload ?? UnsafeRawBufferPointer(start: nil, count: 0))
            candidates = try candidates.filter { candidate in
                guard let other = try self.record(candidate, table: table, entity: entity),
                      let field = RecordFields(bytes: other).field(index.storedId) else { return false }
                return Array(field.payload) == wanted
            }
        }
        return candidates
    }
}
