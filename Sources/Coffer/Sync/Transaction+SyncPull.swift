import CLMDB
import Foundation

/// What a pulled page needs of the outbox and the catalog: the local changes the server has
/// not acknowledged (read-your-writes), dropping a deleted object's untaken entries, and the
/// pull cursors.
extension Transaction {
    /// The unacknowledged local changes of one object: each field's latest clock, whether it
    /// was deleted, whether its creation is still untaken (the server has never seen the
    /// object), and the mids of its entries no pusher has taken.
    struct UnacknowledgedChanges {
        var fieldClocks: [UInt16: UInt64] = [:]
        /// The clock of a whole creation no pusher has taken (every field it sends at it; 0:
        /// none). A taken one protects nothing: a pulled row of the object shows the server
        /// applied it (only the creation makes the row, and its derived sync id is this
        /// store's), so the row's fields are the server's answer to it, even when its reply
        /// was lost and it is not acknowledged yet.
        var wholeClock: UInt64 = 0
        var isDeleted = false
        var isUntakenCreation = false
        var untakenMids: [UInt64] = []

        /// The latest clock of the stored field `field`, or nil when no unacknowledged
        /// change set it. `sentWhole`: a whole creation sends the field (the record holds
        /// it, or it is a to-many relation that holds targets). A field a whole creation
        /// leaves out gets no clock on the server: a value pulled for it was set there
        /// after the creation, whatever its clock.
        func clock(of field: UInt16, sentWhole: Bool) -> UInt64? {
            let listed = fieldClocks[field]
            guard wholeClock != 0, sentWhole else { return listed }
            return max(listed ?? 0, wholeClock)
        }
    }

    /// Every outbox entry of the entity `entityId` (taken or not: an entry leaves the outbox
    /// only when the server acknowledges it), by sync id.
    func unacknowledgedChanges(entityId: UInt32) throws -> [UUID: UnacknowledgedChanges] {
        guard try databaseExists(SyncIdTables.outboxName) else { return [:] }
        try prepareSyncState()
        let floor = sync.state.sendFloor
        var changes: [UUID: UnacknowledgedChanges] = [:]
        try withCursor(sync.outbox, "reading the sync outbox") { cursor in
            var current = try cursor.first()
            while let stored = current {
                guard stored.key.count == 8 else {
                    throw CofferError.damagedStore(part: .sync, reason: "the outbox holds a key of \(stored.key.count) bytes, not 8")
                }
                let mid = UInt64(bigEndian: stored.key.loadUnaligned(as: UInt64.self))
                let entry = try OutboxEntry(decoding: stored.value, mid: mid)
                if entry.entityId == entityId {
                    var object = changes[entry.syncId] ?? UnacknowledgedChanges()
                    if entry.operation == .delete { object.isDeleted = true }
                    for field in entry.fields { object.fieldClocks[field.id] = max(object.fieldClocks[field.id] ?? 0, field.clock) }
                    if entry.isWhole && mid > floor { object.wholeClock = max(object.wholeClock, entry.clock) }
                    if mid > floor {
                        object.untakenMids.append(mid)
                        if entry.isCreation { object.isUntakenCreation = true }
                    }
                    changes[entry.syncId] = object
                }
                current = try cursor.next()
            }
        }
        return changes
    }

    /// Drops the outbox entries `mids` (untaken entries of an object a pulled delete
    /// removed: the server refuses changes of a deleted object).
    func dropUntakenEntries(_ mids: [UInt64], of syncId: UUID) throws {
        guard !mids.isEmpty else { return }
        try prepareSyncState()
        // The object is removed in the same transaction, and its identity entry (which names
        // its newest entry) with it.
        for mid in mids { try deleteSyncValue(sync.outbox, key: Self.midKey(mid), "dropping the outbox entry \(mid)") }
    }
}

/// Pull cursors, one per (stream, entity), in the catalog under
/// `sync/cursor/<entity>\n<stream>` (a stream longer than a key allows is named by a hash).
extension Transaction {
    static func syncCursorKey(entity: String, stream: String) -> String {
        syncKey("cursor", entity: entity, stream: stream)
    }

    /// `sync/<kind>/<entity>\n<stream>`, with a stream longer than a key allows named by a hash.
    static func syncKey(_ kind: String, entity: String, stream: String) -> String {
        let plain = "sync/\(kind)/\(entity)\n\(stream)"
        if plain.utf8.count <= 400 { return plain }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs and builds
        for byte in stream.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var entityPart = ""
        for character in entity where (entityPart + String(character)).utf8.count <= 300 { entityPart.append(character) }
        return "sync/\(kind)/\(entityPart)\n#\(String(hash, radix: 16))/\(stream.utf8.count)"
    }

    /// The cursor stored for (stream, entity), or nil.
    func syncCursor(entity: String, stream: String) throws -> String? {
        guard let catalog = store.catalogDatabase,
              let bytes = try Catalog.raw(key: Self.syncCursorKey(entity: entity, stream: stream), dbi: catalog, in: self) else { return nil }
        guard let text = String(bytes: bytes, encoding: .utf8), !text.isEmpty else {
            throw CofferError.damagedStore(part: .sync, reason: "the pull cursor of \(entity) for \(stream) is not text (\(bytes.count) bytes)")
        }
        return text
    }

    /// Forgets the cursor of (stream, entity): the next pull starts from the beginning.
    func dropSyncCursor(entity: String, stream: String) throws {
        guard let catalog = store.catalogDatabase else {
            throw CofferError.readOnly(path: store.path, operation: "drop a pull cursor")
        }
        try Catalog.deleteRaw(key: Self.syncCursorKey(entity: entity, stream: stream), dbi: catalog, in: self)
    }

    func setSyncCursor(_ cursor: String, entity: String, stream: String) throws {
        guard let catalog = store.catalogDatabase else {
            throw CofferError.readOnly(path: store.path, operation: "store a pull cursor")
        }
        try Array(cursor.utf8).withUnsafeBytes {
            try Catalog.putRaw(key: Self.syncCursorKey(entity: entity, stream: stream), value: $0, dbi: catalog, in: self)
        }
    }
}
