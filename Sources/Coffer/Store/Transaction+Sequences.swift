import CLMDB

extension Transaction {
    /// Hands out the next id of an entity. Ids ascend and are never reused, even after
    /// removals, because the last one handed out is kept in the catalog.
    func nextId(for binding: EntityBinding) throws -> Id {
        let last = try lastId(for: binding)
        guard last < Id.max else {
            throw CofferError.invalidOperation(message: "\(binding.schema.name) has used up every id")
        }
        sequences[binding.entityId] = last + 1
        return last + 1
    }

    /// Records that `id` was stored explicitly, so later ids are handed out above it.
    func noteStoredId(_ id: Id, for binding: EntityBinding) throws {
        if id > (try lastId(for: binding)) { sequences[binding.entityId] = id }
    }

    /// The highest id handed out or stored: the catalog's sequence, but never below the
    /// table's last key, so appends stay valid even if the sequence entry were lost.
    private func lastId(for binding: EntityBinding) throws -> Id {
        if let cached = sequences[binding.entityId] { return cached }
        var last: Id = 0
        if let catalog = store.catalogDatabase {
            last = try Catalog.sequence(binding.entityId, dbi: catalog, in: self)
        }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, binding.table, &cursor), "reading the last id of \(binding.schema.name)")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        let rc = mdb_cursor_get(cursor, &key, &value, MDB_LAST)
        if rc == 0, let lastKey = IdKey(key.bytes)?.id { last = max(last, lastKey) }
        sequences[binding.entityId] = last
        return last
    }
}

extension Transaction {
    /// Makes room for `count` old and new index keys.
    @inline(__always)
    func prepareKeyBuffers(count: Int) {
        while oldKeys.count < count { oldKeys.append([]) }
        while newKeys.count < count { newKeys.append([]) }
    }
}
