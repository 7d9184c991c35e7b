import CLMDB

extension Transaction {
    /// The ids paired with `id` in a relation table (`id ‖ other` keys), in id order. A key
    /// of the wrong size is damage of the relation of `owner`.
    func relatedIds(_ table: MDB_dbi, of id: Id, owner: @autoclosure () -> String) throws -> [Id] {
        var ids: [Id] = []
        try withCursor(table, "reading a relation") { cursor in
            var current = try cursor.seek(IdKey(id))
            while let entry = current, entry.key.count >= 8,
                  IdKey(UnsafeRawBufferPointer(rebasing: entry.key[..<8]))?.id == id {
                guard entry.key.count == 16, let other = IdKey(UnsafeRawBufferPointer(rebasing: entry.key[8...]))?.id else {
                    throw CofferError.damagedStore(part: .relation(entity: owner()), reason: "a key of \(entry.key.count) bytes is not two ids")
                }
                ids.append(other)
                current = try cursor.next()
            }
        }
        return ids
    }

    /// Every owner id in a relation's forward table (each once).
    func relationOwners(_ tables: RelationTables) throws -> Set<Id> {
        var owners = Set<Id>()
        try withCursor(tables.forward, "reading a relation") { cursor in
            var current = try cursor.first()
            while let entry = current {
                guard entry.key.count == 16, let owner = IdKey(UnsafeRawBufferPointer(rebasing: entry.key[..<8]))?.id else {
                    throw CofferError.damagedStore(part: .relation(entity: tables.owner), reason: "a key of \(entry.key.count) bytes is not two ids")
                }
                owners.insert(owner)
                current = try cursor.next()
            }
        }
        return owners
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
        for target in try relatedIds(tables.forward, of: owner, owner: tables.owner) { try removeRelation(tables, owner: owner, target: target) }
    }

    /// Removes every pair pointing at `target` (when the target is removed).
    func removeRelations(_ tables: RelationTables, target: Id) throws {
        for owner in try relatedIds(tables.reverse, of: target, owner: tables.owner) {
            try removeRelation(tables, owner: owner, target: target)
            changes.recordPut(tables.owner, owner, isInsert: false)
            try recordSyncedRewrite(owner, entity: tables.owner, field: tables.field)
        }
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
