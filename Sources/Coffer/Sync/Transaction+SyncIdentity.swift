import CLMDB
import Foundation

/// The identity tables of synced entities: local id <-> sync id, both written and removed in
/// the same transaction as the object. A `syncIds` value also names the object's newest
/// outbox entry (see ``SyncIdTables``). Bytes read from them are checked (a damaged store,
/// never a trap).
extension Transaction {
    /// The sync id of the object `id`, or nil when it has none (or is not stored).
    func syncId(of id: Id, in tables: SyncIdTables) throws -> UUID? {
        try syncIdentity(of: id, in: tables)?.syncId
    }

    /// The sync id of the stored object `id` and the mid of its newest outbox entry (0:
    /// none; a derived id's creation mid, which may be taken already), or nil when it has no
    /// sync id. `isStoredEntry`: the identity is a `syncIds` entry.
    func syncIdentity(of id: Id, in tables: SyncIdTables) throws -> (syncId: UUID, mid: UInt64, isStoredEntry: Bool)? {
        if let stored = try syncIdEntry(of: id, in: tables) { return (stored.syncId, stored.mid, true) }
        guard let derived = try derivedIdentity(of: id, entityId: tables.entityId), try recordExists(id, in: tables) else { return nil }
        return (derived.syncId, derived.creationMid, false)
    }

    /// The `syncIds` entry of the object `id`: its sync id and the mid of its newest outbox
    /// entry (0: none), or nil when it has none.
    func syncIdEntry(of id: Id, in tables: SyncIdTables) throws -> (syncId: UUID, mid: UInt64)? {
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var value = MDB_val()
            let rc = mdb_get(txn, tables.syncIds, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "reading the sync id of \(id)")
            return try Self.decodeSyncIdValue(value.bytes, of: id)
        }
    }

    /// Whether the entity's table holds the object `id`.
    func recordExists(_ id: Id, in tables: SyncIdTables) throws -> Bool {
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var value = MDB_val()
            let rc = mdb_get(txn, tables.records, &keyVal, &value)
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "reading object \(id)")
            return true
        }
    }

    /// A `syncIds` value: the sync id and the newest entry's mid.
    @inline(__always)
    static func decodeSyncIdValue(_ bytes: UnsafeRawBufferPointer, of id: Id) throws -> (syncId: UUID, mid: UInt64) {
        guard bytes.count == SyncIdTables.syncIdValueSize,
              let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: bytes[0..<16])) else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync id of \(id) has \(bytes.count) bytes, not \(SyncIdTables.syncIdValueSize)")
        }
        return (syncId, UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
    }

    /// The local id of the stored object with `syncId`, or nil when none has it: a stored
    /// mapping, else a derived id whose object is stored and has no other sync id.
    func localId(of syncId: UUID, in tables: SyncIdTables) throws -> Id? {
        if let stored = try storedLocalId(of: syncId, in: tables) { return stored }
        guard let id = try derivedLocalId(of: syncId, entityId: tables.entityId), try recordExists(id, in: tables) else { return nil }
        if let entry = try syncIdEntry(of: id, in: tables), entry.syncId != syncId { return nil }
        return id
    }

    /// The `localIds` entry of `syncId`, or nil.
    func storedLocalId(of syncId: UUID, in tables: SyncIdTables) throws -> Id? {
        var key = syncId.uuid
        return try withUnsafeMutableBytes(of: &key) { raw in
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

    /// Gives the object `id` the sync id `syncId` (both directions), with no outbox entry to
    /// merge into (a pulled object).
    ///
    /// - Throws: ``CofferError/damagedStore(part:reason:)`` when another object holds the
    ///   sync id already (two objects must never share one).
    func mapSyncId(_ syncId: UUID, to id: Id, in tables: SyncIdTables, entity: String) throws {
        let cursors = try syncIdentityCursors(tables)
        try mapSyncId(syncId, to: id, newestMid: 0, cursors: cursors, idAscends: false, entity: entity)
    }

    /// Writes both mappings of `id` through the identity cursors at `cursors` (a position in
    /// `sync.identityCursors`). `idAscends`: `id` is above every stored id of the entity, so
    /// its `syncIds` entry is appended.
    func mapSyncId(_ syncId: UUID, to id: Id, newestMid: UInt64, cursors: Int, idAscends: Bool, entity: @autoclosure () -> String) throws {
        var idKey = IdKey(id)
        var uuid = syncId.uuid
        try idKey.withVal { idVal in
            try withUnsafeMutableBytes(of: &uuid) { uuidRaw in
                var uuidVal = MDB_val(UnsafeRawBufferPointer(uuidRaw))
                // Sync id -> local id first: a sync id another object holds is refused before
                // anything is written. Ids this replica made ascend, so the entry is appended
                // unless a sync id from another replica lies above it.
                var idValue = idVal
                let reverse = sync.identityCursors[cursors].reverse
                sync.identityCursors[cursors].reverseKey = nil
                var rc = MDB_KEYEXIST
                if sync.identityCursors[cursors].reverseAscends {
                    rc = mdb_cursor_put(reverse, &uuidVal, &idValue, UInt32(MDB_APPEND))
                    if rc == MDB_KEYEXIST { sync.identityCursors[cursors].reverseAscends = false }
                }
                if rc == MDB_KEYEXIST {
                    rc = mdb_cursor_put(reverse, &uuidVal, &idValue, UInt32(MDB_NOOVERWRITE))
                    if rc == MDB_KEYEXIST {
                        // mdb_cursor_put left the cursor on the holder's entry and its id in idValue.
                        guard let holder = IdKey(idValue.bytes)?.id else {
                            throw CofferError.damagedStore(part: .sync, reason: "the local id of \(syncId) has \(idValue.mv_size) bytes, not 8")
                        }
                        if holder != id {
                            throw CofferError.damagedStore(part: .sync, reason: "the sync id \(syncId) of \(entity()) \(id) is held by \(holder) already")
                        }
                        rc = 0
                    }
                }
                try check(rc, "storing the sync id of \(entity()) \(id)")
                // Local id -> sync id ‖ newest mid.
                try Self.withSyncIdValue(syncId, newestMid: newestMid) { valueVal in
                    let forward = sync.identityCursors[cursors].forward
                    sync.identityCursors[cursors].forwardId = 0
                    sync.identityCursors[cursors].missUpTo = 0
                    var rc = idAscends ? mdb_cursor_put(forward, &idVal, &valueVal, UInt32(MDB_APPEND)) : MDB_KEYEXIST
                    if rc == MDB_KEYEXIST { rc = mdb_cursor_put(forward, &idVal, &valueVal, 0) }
                    try check(rc, "storing the sync id of \(entity()) \(id)")
                }
            }
        }
    }

    /// Calls `body` with a `syncIds` value: the sync id's 16 bytes, then the newest entry's
    /// mid big-endian.
    @inline(__always)
    static func withSyncIdValue<R>(_ syncId: UUID, newestMid mid: UInt64, _ body: (inout MDB_val) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: SyncIdTables.syncIdValueSize, alignment: 8) { value in
            syncId.copySyncBytes(to: value.baseAddress.unsafelyUnwrapped)
            value.storeBytes(of: mid.bigEndian, toByteOffset: 16, as: UInt64.self)
            var valueVal = MDB_val(UnsafeRawBufferPointer(value))
            return try body(&valueVal)
        }
    }

    /// Gives the object `id`, whose sync id is derived, a `syncIds` entry naming its newest
    /// outbox entry `mid` (no `localIds` entry: the id is found by derivation).
    func storeDerivedIdEntry(_ syncId: UUID, of id: Id, newestMid mid: UInt64, cursors: Int) throws {
        var key = IdKey(id)
        try key.withVal { keyVal in
            try Self.withSyncIdValue(syncId, newestMid: mid) { valueVal in
                sync.identityCursors[cursors].forwardId = 0
                sync.identityCursors[cursors].missUpTo = 0
                try check(mdb_cursor_put(sync.identityCursors[cursors].forward, &keyVal, &valueVal, 0), "storing the sync id of \(id)")
            }
        }
    }

    /// Removes the `localIds` entry of `syncId` (if any) through the reverse cursor at
    /// `cursors`. Removals in sync id order (objects this replica made, removed in id order)
    /// find each entry right after the previous one: the next entry is tried first, and taken
    /// only when its key is `syncId`, else the tree is searched.
    func removeLocalIdEntry(of syncId: UUID, cursors: Int, _ what: @autoclosure () -> String) throws {
        let reverse = sync.identityCursors[cursors].reverse
        let standsBefore = sync.identityCursors[cursors].reverseKey
        sync.identityCursors[cursors].reverseKey = nil
        var uuid = syncId.uuid
        try withUnsafeMutableBytes(of: &uuid) { raw in
            let key = (UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            var value = MDB_val()
            var found = false
            if let standsBefore, standsBefore < key {
                var nextKey = MDB_val()
                if mdb_cursor_get(reverse, &nextKey, &value, MDB_NEXT) == 0, nextKey.mv_size == 16 {
                    let next = nextKey.bytes
                    found = (UInt64(bigEndian: next.loadUnaligned(as: UInt64.self)),
                             UInt64(bigEndian: next.loadUnaligned(fromByteOffset: 8, as: UInt64.self))) == key
                }
            }
            if !found {
                var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
                let rc = mdb_cursor_get(reverse, &keyVal, &value, MDB_SET)
                if rc == MDB_NOTFOUND { return }
                try check(rc, what())
            }
            try check(mdb_cursor_del(reverse, 0), what())
            // The cursor now stands between `syncId` and the next entry, which its next step
            // reaches.
            sync.identityCursors[cursors].reverseKey = key
        }
    }

    /// Removes both mappings of the object `id`.
    func unmapSyncId(_ syncId: UUID, of id: Id, in tables: SyncIdTables, entity: String) throws {
        var idKey = IdKey(id)
        var uuid = syncId.uuid
        try idKey.withVal { idVal in
            let rc = mdb_del(txn, tables.syncIds, &idVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "removing the sync id of \(entity) \(id)") }
        }
        try withUnsafeMutableBytes(of: &uuid) { raw in
            var uuidVal = MDB_val(UnsafeRawBufferPointer(raw))
            let rc = mdb_del(txn, tables.localIds, &uuidVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "removing the sync id of \(entity) \(id)") }
        }
    }

    /// The position in `sync.identityCursors` of the cursors on `tables`, opened at the
    /// transaction's first use of them.
    @inline(__always)
    func syncIdentityCursors(_ tables: SyncIdTables) throws -> Int {
        if let last = sync.identityCursors.indices.last, sync.identityCursors[last].syncIds == tables.syncIds { return last }
        return try openSyncIdentityCursors(tables)
    }

    private func openSyncIdentityCursors(_ tables: SyncIdTables) throws -> Int {
        if let known = sync.identityCursors.firstIndex(where: { $0.syncIds == tables.syncIds }) {
            // The most recently used goes last (the fast path above).
            sync.identityCursors.append(sync.identityCursors.remove(at: known))
            return sync.identityCursors.count - 1
        }
        let forward = try openWriteCursor(tables.syncIds, "the sync ids")
        let reverse = try openWriteCursor(tables.localIds, "the sync ids")
        sync.identityCursors.append(SyncIdentityCursors(syncIds: tables.syncIds, forward: forward, reverse: reverse))
        return sync.identityCursors.count - 1
    }

    /// A write cursor on `database`, which LMDB closes when the transaction ends.
    func openWriteCursor(_ database: MDB_dbi, _ what: @autoclosure () -> String) throws -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = mdb_cursor_open(txn, database, &handle)
        guard rc == 0, let handle else {
            let code = rc == 0 ? EINVAL : rc
            throw CofferError.storage(code: .init(result: code), message: "cannot open a cursor on \(what()): \(LMDB.message(code))")
        }
        return handle
    }
}
