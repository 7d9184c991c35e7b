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
    /// An index on an array property: one entry per distinct element (as Cloudant indexes
    /// arrays), none for an empty or nil array. Its key buffers hold a key *set* (see
    /// `IndexKeySet`), and only `containsElement` conditions use it.
    let isElementIndex: Bool

    init(position: Int, storedId: UInt16, property: PropertySchema, database: MDB_dbi, createdInTransaction: Int) {
        self.position = position
        self.storedId = storedId
        self.property = property
        self.database = database
        self.createdInTransaction = createdInTransaction
        isUnique = property.flags.contains(.unique)
        isElementIndex = property.type.elementType != nil
    }

    static func databaseName(entity: UInt32, property: UInt16) -> String { "index.\(entity).\(property)" }

    /// The index key (without id) for the value in a record, or the nil key when the record
    /// holds no value.
    func key(in record: RecordFields) throws -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(24)
        try writeKey(in: record, to: &key)
        return key
    }

    /// Appends the index key of the record's value to `key` (empty so far). A damaged
    /// record, or a value whose stored kind does not fit the property, throws: it is never
    /// indexed as nil.
    func writeKey<Sink: IndexKeySink>(in record: RecordFields, to key: inout Sink) throws {
        try writeKey(of: try record.field(storedId), in: record, to: &key)
    }

    /// Appends the index key of `field` to `key` (empty so far): nil gives the nil key; an
    /// element index gives the key set of its elements, empty for nil.
    func writeKey<Sink: IndexKeySink>(of field: RecordFields.Field?, in record: RecordFields, to key: inout Sink) throws {
        if isElementIndex {
            guard let field else { return }
            guard let elementType = property.type.elementType,
                  IndexKeySet.encode(elementType, kind: field.kind, payload: field.payload, into: &key) else {
                throw record.damage("property \(property.name) holds a \(field.kind) value, which a \(property.type.rawValue) index cannot hold")
            }
            return
        }
        guard let field else {
            key.append(IndexKey.nilTag)
            return
        }
        guard IndexKey.encode(property.type, kind: field.kind, payload: field.payload, into: &key) else {
            throw record.damage("property \(property.name) holds a \(field.kind) value, which a \(property.type.rawValue) index cannot hold")
        }
    }
}

extension Transaction {
    /// The ids of index entries whose key is `prefix` followed by an id, in key order.
    func indexIds(_ index: IndexBinding, prefix: [UInt8], entity: String) throws -> [Id] {
        var ids: [Id] = []
        try forEachIndexEntry(index, prefix: prefix, entity: entity) { entry in
            if entry.value.count == prefix.count { ids.append(entry.id) }
            return true
        }
        return ids
    }

    /// Calls `body` with every index entry whose key starts with `prefix`, in key order,
    /// while it returns true. A malformed key throws.
    func forEachIndexEntry(_ index: IndexBinding, prefix: [UInt8], entity: String,
                           _ body: (IndexEntry) throws -> Bool) throws {
        try withCursor(index.database, "reading the index on \(entity).\(index.property.name)") { cursor in
            var current = try cursor.seek(prefix)
            while let raw = current, raw.key.starts(with: prefix) {
                let entry = try IndexEntry.decode(raw.key, property: index.property.name, entity: entity)
                // A shorter value whose id bytes happen to continue the prefix is not a match.
                if entry.value.count >= prefix.count {
                    guard try body(entry) else { return }
                }
                current = try cursor.next()
            }
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

    /// Ids of stored objects whose `index` value equals (`==`) the value in `record`
    /// (rechecking cut strings against the records), excluding `excluded`; none for NaN.
    func matchingIds(_ index: IndexBinding, valueOf record: RecordFields, table: MDB_dbi,
                     excluding excluded: Id? = nil) throws -> [Id] {
        guard !index.isElementIndex else {
            throw CofferError.invalidUpsertKey(entity: record.entity, property: index.property.name, problem: .array)
        }
        // NaN equals nothing, itself included (as in queries): it never clashes with a
        // stored value and an upsert by it finds no target.
        if index.property.type.indexKeyFamily == .floatingPoint, let field = try record.field(index.storedId),
           FieldValue.double(field.kind, field.payload)?.isNaN == true {
            return []
        }
        let key = try index.key(in: record)
        var candidates = try indexIds(index, prefix: key, entity: record.entity).filter { $0 != excluded }
        if let otherZero = IndexKey.otherZeroKey(key, type: index.property.type) {
            // -0.0 and 0.0 are one value with two keys: an object holding the other zero is the same value.
            candidates = Array(Set(candidates + (try indexIds(index, prefix: otherZero, entity: record.entity)).filter { $0 != excluded })).sorted()
        }
        if IndexKey.isTruncatedString(key[...]) {
            let wanted = Array(try record.field(index.storedId)?.payload ?? UnsafeRawBufferPointer(start: nil, count: 0))
            candidates = try candidates.filter { candidate in
                guard let other = try self.record(candidate, table: table, entity: record.entity) else {
                    throw CofferError.damagedStore(part: .index(entity: record.entity, property: index.property.name),
                                                   reason: "it lists the id \(candidate), which is not stored")
                }
                guard let field = try RecordFields(bytes: other, entity: record.entity, id: candidate).field(index.storedId) else { return false }
                return IndexKey.sameString(Array(field.payload), wanted)
            }
        }
        return candidates
    }
}

extension RecordFields {
    /// The value of an indexed property in the record, for error messages.
    func describe(_ index: IndexBinding) throws -> String {
        guard let field = try field(index.storedId) else { return "nil" }
        return FieldDescription.json(field, type: index.property.type)
    }
}
