import CLMDB
import Foundation

/// Capture: the hooks the mutation path calls for synced entities only (`binding.syncTables`
/// set). Each records, in the same transaction as the write, the object's sync id and an
/// outbox entry naming the fields that changed.
///
/// Order within a put: `collectSyncedChanges` before the record is written (the previous
/// record's bytes are valid only until then), `recordSyncedPut` after it.
extension Transaction {
    /// Notes which stored fields of `record` differ from `previous` (all of them for an
    /// insert or a damaged previous record), by their bytes.
    func collectSyncedChanges(previous: RecordFields?, previousIsDamaged: Bool, record: RecordFields) throws {
        sync.changedFields.removeAll(keepingCapacity: true)
        sync.previousFields.removeAll(keepingCapacity: true)
        if let previous, !previousIsDamaged {
            try previous.forEach { id, field in sync.previousFields.append((id, field)) }
        }
        try record.forEach { id, field in
            if let old = sync.previousFields.firstIndex(where: { $0.id == id }) {
                let before = sync.previousFields[old]
                sync.previousFields[old].id = 0  // matched: not a removed field
                if RecordFields.Field.sameStoredValue(before.field, field) { return }
            }
            sync.changedFields.append(id)
        }
        // Fields the new record no longer holds (set to nil) changed too.
        for field in sync.previousFields where field.id != 0 { sync.changedFields.append(field.id) }
        sync.previousFields.removeAll(keepingCapacity: true)
    }

    /// After the record of `id` was written: its sync id (a new one for an insert) and its
    /// outbox entry, unless the put changed no field or remote changes are being applied.
    func recordSyncedPut(_ id: Id, binding: EntityBinding, isInsert: Bool) throws {
        guard let tables = binding.syncTables else { return }
        do {
            if sync.isApplyingRemote {
                if try isInsert || syncId(of: id, in: tables) == nil {
                    try mapSyncId(try arrivingOrNewSyncId(for: binding), to: id, in: tables, entity: binding.schema.name)
                }
                return
            }
            var isCreation = isInsert
            var known = isInsert ? nil : try syncId(of: id, in: tables)
            if known == nil {
                // An insert, or an object stored before its entity was synced that the
                // registration did not reach: it becomes known to sync now, whole.
                isCreation = true
                let syncId = try arrivingOrNewSyncId(for: binding)
                try mapSyncId(syncId, to: id, in: tables, entity: binding.schema.name)
                known = syncId
            }
            guard let syncId = known, isCreation || !sync.changedFields.isEmpty else { return }
            try enqueue(.upsert, isCreation: isCreation, entityId: binding.entityId, syncId: syncId, fields: sync.changedFields)
        } catch {
            throw syncFailed(error)
        }
    }

    /// After the record of `id` was removed: its delete entry (unless remote changes are
    /// being applied), then both identity mappings are removed.
    func recordSyncedRemove(_ id: Id, binding: EntityBinding) throws {
        guard let tables = binding.syncTables else { return }
        do {
            guard let syncId = try syncId(of: id, in: tables) else { return }  // never known to sync
            if !sync.isApplyingRemote {
                try enqueue(.delete, isCreation: false, entityId: binding.entityId, syncId: syncId, fields: [])
            }
            try unmapSyncId(syncId, of: id, in: tables, entity: binding.schema.name)
        } catch {
            throw syncFailed(error)
        }
    }

    /// The sync id an insert of `binding`'s entity takes: the one it arrives with, or a new
    /// UUIDv7 of the transaction's clock.
    private func arrivingOrNewSyncId(for binding: EntityBinding) throws -> UUID {
        if let arriving = sync.arrivingSyncId, arriving.entityId == binding.entityId {
            sync.arrivingSyncId = nil
            return arriving.syncId
        }
        return SyncIdGenerator.make(milliseconds: HybridClock.milliseconds(of: try syncTick()))
    }

    /// Before every object of a synced entity is removed at once: a delete entry for each
    /// object with a sync id, and the identity tables emptied.
    func recordSyncedRemoveAll(binding: EntityBinding) throws {
        guard let tables = binding.syncTables else { return }
        do {
            if !sync.isApplyingRemote {
                var known: [UUID] = []
                try withCursor(tables.syncIds, "reading the sync ids of \(binding.schema.name)") { cursor in
                    var current = try cursor.first()
                    while let entry = current {
                        guard IdKey(entry.key) != nil, let syncId = UUID(syncBytes: entry.value) else {
                            throw CofferError.damagedStore(part: .sync, reason: "the sync id table of \(binding.schema.name) holds an entry of \(entry.key.count) + \(entry.value.count) bytes")
                        }
                        known.append(syncId)
                        current = try cursor.next()
                    }
                }
                for syncId in known {
                    try enqueue(.delete, isCreation: false, entityId: binding.entityId, syncId: syncId, fields: [])
                }
            }
            try check(mdb_drop(txn, tables.syncIds, 0), "clearing the sync ids of \(binding.schema.name)")
            try check(mdb_drop(txn, tables.localIds, 0), "clearing the sync ids of \(binding.schema.name)")
        } catch {
            throw syncFailed(error)
        }
    }

    /// After a link owner found through the catalog was rewritten without a link (its
    /// target was removed): when the owner's entity is synced, the link field changed.
    func recordSyncedRewrite(_ id: Id, entity storedName: String, field: UInt16) throws {
        if sync.storeHasOutbox == nil {
            sync.storeHasOutbox = try databaseExists(SyncIdTables.outboxName)
        }
        guard sync.storeHasOutbox == true, !sync.isApplyingRemote, let catalog = store.catalogDatabase else { return }
        do {
            guard let owner = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(storedName), dbi: catalog, in: self),
                  owner.synced == true else { return }
            let names = SyncIdTables.names(entity: owner.id)
            let (syncIds, _) = try openDatabase(names.syncIds, create: false, "the sync ids of \(storedName)")
            let (localIds, _) = try openDatabase(names.localIds, create: false, "the sync ids of \(storedName)")
            guard let syncId = try syncId(of: id, in: SyncIdTables(syncIds: syncIds, localIds: localIds)) else { return }
            try enqueue(.upsert, isCreation: false, entityId: owner.id, syncId: syncId, fields: [field])
        } catch {
            throw syncFailed(error)
        }
    }

    /// Remembers a sync failure after a record was written (the transaction will not commit)
    /// and returns the error to throw.
    func syncFailed(_ error: Error) -> Error {
        if sync.failure == nil { sync.failure = error }
        return error
    }

    /// Before commit: refuses a transaction whose sync bookkeeping failed, then writes the
    /// counters it advanced.
    func finishSync() throws {
        if let failure = sync.failure { throw failure }
        guard sync.isDirty, let state = sync.state, let catalog = store.catalogDatabase else { return }
        try state.encoded().withUnsafeBytes { try Catalog.putRaw(key: SyncState.catalogKey, value: $0, dbi: catalog, in: self) }
        sync.isDirty = false
    }
}

extension Transaction {
    /// Gives every object already stored in an entity that has just become synced its sync
    /// id and a creation entry with all its fields (a damaged record: the fields read before
    /// the damage; the pusher meets the damage when it reads the record).
    func syncStoredObjects(of binding: EntityBinding) throws {
        guard let tables = binding.syncTables else { return }
        var objects: [(Id, [UInt16])] = []
        try withCursor(binding.table, "reading \(binding.schema.name)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                guard let id = IdKey(entry.key)?.id else {
                    throw CofferError.damagedStore(part: .table(entity: binding.schema.name), reason: "a key of \(entry.key.count) bytes is not an id")
                }
                var fields: [UInt16] = []
                do {
                    try RecordFields(bytes: entry.value, layout: binding, id: id).forEach { fieldId, _ in fields.append(fieldId) }
                } catch CofferError.damagedRecord {
                    // Keeps the fields read so far; the record itself is reported when read.
                }
                objects.append((id, fields))
                current = try cursor.next()
            }
        }
        do {
            for (id, fields) in objects where try syncId(of: id, in: tables) == nil {
                let syncId = SyncIdGenerator.make(milliseconds: HybridClock.milliseconds(of: try syncTick()))
                try mapSyncId(syncId, to: id, in: tables, entity: binding.schema.name)
                try enqueue(.upsert, isCreation: true, entityId: binding.entityId, syncId: syncId, fields: Array(Set(fields)))
            }
        } catch {
            throw syncFailed(error)
        }
    }
}
