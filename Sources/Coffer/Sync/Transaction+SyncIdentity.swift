import CLMDB
import Foundation

/// The identity tables of synced entities: local id <-> sync id, both written and removed in
/// the same transaction as the object. Bytes read from them are checked (a damaged store,
/// never a trap).
extension Transaction {
    /// The sync id of the object `id`, or nil when it has none.
    func syncId(of id: Id, in tables: SyncIdTables) throws -> UUID? {
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var value = MDB_val()
            let rc = mdb_get(txn, tables.syncIds, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "reading the sync id of \(id)")
            guard let syncId = UUID(syncBytes: value.bytes) else {
                throw CofferError.damagedStore(part: .sync, reason: "the sync id of \(id) has \(value.mv_size) bytes, not 16")
            }
            return syncId
        }
    }

    /// The local id of the object with `syncId`, or nil when none has it.
    func localId(of syncId: UUID, in tables: SyncIdTables) throws -> Id? {
        var key = syncId.syncBytes
        return try key.withUnsafeMutableBytes { raw in
            var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
            var value = MDB_val()
            let rc = mdb_get(txn, tables.localIds, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "reading the local id of \(syncId)")
            guard let id = IdKey(value.bytes)?.id else {
                throw CofferError.damagedStore(part: .sync, reason: "the local id of \(syncId) has \(value.mv_size) bytes, not 8")
            }
            return id
        }
    }

    /// Gives the object `id` the sync id `syncId` (both directions).
    ///
    /// - Throws: ``CofferError/damagedStore(part:reason:)`` when another object holds the
    ///   sync id already (two objects must never share one).
    func mapSyncId(_ syncId: UUID, to id: Id, in tables: SyncIdTables, entity: String) throws {
        if let holder = try localId(of: syncId, in: tables), holder != id {
            throw CofferError.damagedStore(part: .sync, reason: "the sync id \(syncId) of \(entity) \(id) is held by \(holder) already")
        }
        var idKey = IdKey(id)
        var uuid = syncId.syncBytes
        try idKey.withVal { idVal in
            try uuid.withUnsafeMutableBytes { raw in
                var uuidVal = MDB_val(UnsafeRawBufferPointer(raw))
                try check(mdb_put(txn, tables.syncIds, &idVal, &uuidVal, 0), "storing the sync id of \(entity) \(id)")
                var idValue = idVal
                try check(mdb_put(txn, tables.localIds, &uuidVal, &idValue, 0), "storing the sync id of \(entity) \(id)")
            }
        }
    }

    /// Removes both mappings of the object `id`.
    func unmapSyncId(_ syncId: UUID, of id: Id, in tables: SyncIdTables, entity: String) throws {
        var idKey = IdKey(id)
        var uuid = syncId.syncBytes
        try idKey.withVal { idVal in
            let rc = mdb_del(txn, tables.syncIds, &idVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "removing the sync id of \(entity) \(id)") }
        }
        try uuid.withUnsafeMutableBytes { raw in
            var uuidVal = MDB_val(UnsafeRawBufferPointer(raw))
            let rc = mdb_del(txn, tables.localIds, &uuidVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "removing the sync id of \(entity) \(id)") }
        }
    }
}
