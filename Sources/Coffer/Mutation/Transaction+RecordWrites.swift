import CLMDB

/// Where a record write puts the record in its entity table.
enum RecordPlacement {
    /// Over the record the cursor stands on (an update read through that cursor): no search,
    /// and LMDB leaves the cursor on the record (a write walk steps on from it).
    case atCursor(OpaquePointer)
    /// After every stored key (a new id above them all): no search.
    case appended
    /// Wherever its key belongs.
    case byKey
}

/// The one place records are written to and removed from entity tables. Every record write
/// of the mutation path ends here (`storeObject`, `removeObject`, `removeAllObjects`, the
/// rewrite of a link owner in `storeRewrittenRecord`), so the bookkeeping that must follow
/// every such write is done once: the write walk's cursor tracking (`WriteScratch`) and
/// the transaction's `wroteRecords`.
extension Transaction {
    /// Stores `bytes` as the record of `id` in `table`.
    @inline(__always)
    func putRecord(_ bytes: UnsafeRawBufferPointer, id: Id, table: MDB_dbi, placement: RecordPlacement,
                   _ what: @autoclosure () -> String) throws {
        var key = IdKey(id)
        try key.withVal { keyVal in
            var value = MDB_val(bytes)
            switch placement {
            case .atCursor(let cursor):
                try check(mdb_cursor_put(cursor, &keyVal, &value, UInt32(MDB_CURRENT)), what())
            case .appended:
                writes.noteTableChange()
                try check(mdb_put(txn, table, &keyVal, &value, UInt32(MDB_APPEND)), what())
            case .byKey:
                writes.noteTableChange()
                try check(mdb_put(txn, table, &keyVal, &value, 0), what())
            }
        }
        wroteRecords = true
    }

    /// Removes the record of `id` from `table`: the one the cursor stands on when `cursor`
    /// is given (the caller read it through that cursor), else found by key. Returns whether
    /// a record was stored.
    @inline(__always)
    func deleteRecord(_ id: Id, table: MDB_dbi, at cursor: OpaquePointer?, _ what: @autoclosure () -> String) throws -> Bool {
        writes.noteTableChange()
        let removed: Bool
        if let cursor {
            try check(mdb_cursor_del(cursor, 0), what())
            removed = true
        } else {
            var key = IdKey(id)
            removed = try key.withVal { keyVal in
                let rc = mdb_del(txn, table, &keyVal, nil)
                if rc == MDB_NOTFOUND { return false }
                try check(rc, what())
                return true
            }
        }
        if removed { wroteRecords = true }
        return removed
    }

    /// Empties an entity table (every record removed at once).
    func deleteAllRecords(of binding: EntityBinding) throws {
        writes.noteTableChange()
        try check(mdb_drop(txn, binding.table, 0), "removing all \(binding.schema.name)")
    }

    /// Stores the rewritten record of an object found through the catalog (the owner of a
    /// link being cleared, whose entity this build may not have bound): the record, its
    /// entry in the change log, and the entries of the one index the rewrite changed, from
    /// `oldKey` to `newKey`. `isBeingRemoved`: the object is removed later in the same call
    /// (its entity is emptied), so sync records no change of it (its delete is queued, and its
    /// identity entries dropped, already).
    func storeRewrittenRecord(_ bytes: UnsafeRawBufferPointer, id: Id, table: MDB_dbi, entity: String,
                              index: IndexBinding, from oldKey: [UInt8], to newKey: [UInt8], isBeingRemoved: Bool,
                              _ what: @autoclosure () -> String) throws {
        try putRecord(bytes, id: id, table: table, placement: .byKey, what())
        changes.recordPut(entity, id, isInsert: false)
        try deleteIndexEntry(index, key: oldKey, id: id)
        try insertIndexEntry(index, key: newKey, id: id)
        if !isBeingRemoved { try recordSyncedRewrite(id, entity: entity, field: index.storedId) }
    }
}
