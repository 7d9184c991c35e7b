import CLMDB

/// Index maintenance of the mutation path: the old keys of a stored record, and the
/// entries (`key ‖ id`) added, moved and removed as records are stored and removed.
extension Transaction {
    /// The fields of a stored record that belong to properties `binding` does not declare
    /// (retired here, or added by a newer build), to be carried into the record that
    /// replaces it. Walks the whole record, so it throws `damagedRecord` at any damage.
    func fieldsToCarry(from record: RecordFields, binding: EntityBinding) throws -> [(UInt16, RecordFields.Field)] {
        var carried: [(UInt16, RecordFields.Field)] = []
        var walk = try record.walk()
        while let (fieldId, field) = try walk.next() {
            if !binding.declares(fieldId) { carried.append((fieldId, field)) }
        }
        return carried
    }

    /// Writes the index key of each of `binding`'s indexes for a stored record into
    /// `oldKeys`, before the record is removed. Each look-up stops at its field, so it throws
    /// `damagedRecord` at damage that could make a key wrong: in or before an indexed field,
    /// or anywhere when an indexed field is missing (see `RecordFields.field`).
    func readOldKeys(of record: RecordFields, binding: EntityBinding) throws {
        let indexes = binding.indexes
        writes.prepareKeyBuffers(count: indexes.count)
        for (position, index) in indexes.enumerated() {
            let pair = writes.keyPair(position)
            pair.pointee.old.removeAll()
            try index.writeKey(of: try record.field(index.storedId), in: record, to: &pair.pointee.old)
        }
    }
}

extension Transaction {
    /// Adds `key ‖ id` to an index.
    ///
    /// Values often arrive in ascending order (sequential names, timestamps), so the entry is
    /// first appended without a search; when that fails once (`MDB_KEYEXIST`, which leaves the
    /// transaction intact), this transaction stops trying for that index.
    func insertIndexEntry(_ index: IndexBinding, key: [UInt8], id: Id) throws {
        try key.withUnsafeBytes { try insertIndexEntry(index, key: $0, id: id) }
    }

    /// The same, for a key in raw memory (a transaction's key slot).
    func insertIndexEntry(_ index: IndexBinding, key: UnsafeRawBufferPointer, id: Id) throws {
        var entry = writes.entryKey(key, id)
        var empty = MDB_val(mv_size: 0, mv_data: nil)
        if !writes.unorderedIndexes.contains(index.database) {
            let rc = mdb_put(txn, index.database, &entry, &empty, UInt32(MDB_APPEND))
            if rc != MDB_KEYEXIST { return try check(rc, "updating the index on \(index.property.name)") }
            writes.unorderedIndexes.append(index.database)
        }
        try check(mdb_put(txn, index.database, &entry, &empty, 0), "updating the index on \(index.property.name)")
    }

    /// Adds the entries of `keys` (one key, or an element index's key set) for `id`.
    func insertIndexEntries(_ index: IndexBinding, keys: UnsafeRawBufferPointer, id: Id) throws {
        guard index.isElementIndex else { return try insertIndexEntry(index, key: keys, id: id) }
        for key in IndexKeySet.keys(Array(keys)) { try insertIndexEntry(index, key: key, id: id) }
    }

    /// Removes the entries of `keys` (one key, or an element index's key set) for `id`.
    func deleteIndexEntries(_ index: IndexBinding, keys: UnsafeRawBufferPointer, id: Id) throws {
        guard index.isElementIndex else { return try deleteIndexEntry(index, key: keys, id: id) }
        for key in IndexKeySet.keys(Array(keys)) { try deleteIndexEntry(index, key: key, id: id) }
    }

    /// Moves `id`'s entries from `old` keys to `new` ones, touching only what changed.
    func updateIndexEntries(_ index: IndexBinding, old: UnsafeRawBufferPointer, new: UnsafeRawBufferPointer, id: Id) throws {
        guard index.isElementIndex else {
            try deleteIndexEntry(index, key: old, id: id)
            return try insertIndexEntry(index, key: new, id: id)
        }
        let before = Set(IndexKeySet.keys(Array(old))), after = Set(IndexKeySet.keys(Array(new)))
        for key in before.subtracting(after) { try deleteIndexEntry(index, key: key, id: id) }
        for key in after.subtracting(before) { try insertIndexEntry(index, key: key, id: id) }
    }

    /// Removes `key ‖ id` from an index (absent entries are ignored).
    func deleteIndexEntry(_ index: IndexBinding, key: [UInt8], id: Id) throws {
        try key.withUnsafeBytes { try deleteIndexEntry(index, key: $0, id: id) }
    }

    /// The same, for a key in raw memory (a transaction's key slot).
    func deleteIndexEntry(_ index: IndexBinding, key: UnsafeRawBufferPointer, id: Id) throws {
        var entry = writes.entryKey(key, id)
        let rc = mdb_del(txn, index.database, &entry, nil)
        if rc != MDB_NOTFOUND { try check(rc, "updating the index on \(index.property.name)") }
    }

    /// Removes every entry of object `id` from an index, whatever its key: for records too
    /// damaged to say which key they were indexed under. Walks the whole index.
    func deleteIndexEntries(_ index: IndexBinding, of id: Id, entity: String) throws {
        var keys: [[UInt8]] = []
        try withCursor(index.database, "repairing the index on \(entity).\(index.property.name)") { cursor in
            var current = try cursor.first()
            while let raw = current {
                // A key too short to name an object cannot be this object's: leave it to `verify`.
                if raw.key.count >= 9 {
                    let entry = try IndexEntry.decode(raw.key, property: index.property.name, entity: entity)
                    if entry.id == id { keys.append(Array(entry.value)) }
                }
                current = try cursor.next()
            }
        }
        for key in keys { try deleteIndexEntry(index, key: key, id: id) }
    }
}
