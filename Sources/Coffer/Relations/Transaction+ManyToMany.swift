import CLMDB

extension Transaction {
    /// The ids paired with `id` in a relation table (`id ‖ other` keys), in id order.
    func relatedIds(_ table: MDB_dbi, of id: Id) throws -> [Id] {
        var ids: [Id] = []
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, table, &cursor), "reading a relation")
        defer { mdb_cursor_close(cursor) }
        var start = IdKey(id)
        try start.withVal { key in
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            while rc == 0 {
                let bytes = key.bytes
                guard bytes.count == 16, IdKey(UnsafeRawBufferPointer(rebasing: bytes[..<8]))?.id == id,
                      let other = IdKey(UnsafeRawBufferPointer(rebasing: bytes[8...]))?.id else { break }
                ids.append(other)
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != 0 && rc != MDB_NOTFOUND { try check(rc, "reading a relation") }
        }
        return ids
    }

    /// Records that `owner` is related to `target` (both directions).
    func addRelation(_ tables: RelationTables, owner: Id, target: Id) throws {
        try putPair(tables.forward, owner, target)
        try putPair(tables.reverse, target, owner)
    }

    /// Removes the pair `owner`, `target` (both directions; absent pairs are ignored).
    func removeRelation(_ tables: RelationTables, owner: Id, target: Id) throws {
        try deletePair(tables.forward, owner, target)
        try deletePair(tables.reverse, target, owner)
    }

    /// Removes every pair of `owner` (when the owner is removed).
    func removeRelations(_ tables: RelationTables, owner: Id) throws {
        for target in try relatedIds(tables.forward, of: owner) { try removeRelation(tables, owner: owner, target: target) }
    }

    /// Removes every pair pointing at `target` (when the target is removed).
    func removeRelations(_ tables: RelationTables, target: Id) throws {
        for owner in try relatedIds(tables.reverse, of: target) { try removeRelation(tables, owner: owner, target: target) }
    }

    private func withPair<T>(_ first: Id, _ second: Id, _ body: (inout MDB_val) throws -> T) rethrows -> T {
        var pair = (first.bigEndian, second.bigEndian)
        return try withUnsafeMutableBytes(of: &pair) { raw in
            var key = MDB_val(mv_size: 16, mv_data: raw.baseAddress)
            return try body(&key)
        }
    }

    private func putPair(_ table: MDB_dbi, _ first: Id, _ second: Id) throws {
        try withPair(first, second) { key in
            var empty = MDB_val(mv_size: 0, mv_data: nil)
            try check(mdb_put(txn, table, &key, &empty, 0), "storing a relation")
        }
    }

    private func deletePair(_ table: MDB_dbi, _ first: Id, _ second: Id) throws {
        try withPair(first, second) { key in
            let rc = mdb_del(txn, table, &key, nil)
            if rc != MDB_NOTFOUND { try check(rc, "removing a relation") }
        }
    }
}
