import CLMDB
import Foundation

/// Capture: the hooks the mutation path calls for synced entities only (`binding.syncTables`
/// set). Each records, in the same transaction as the write, the object's sync id and an
/// outbox entry naming the fields that changed.
///
/// Order within an update: `collectSyncedChanges` before the record is written (the previous
/// record's bytes are valid only until then), `recordSyncedPut` after it.
extension Transaction {
    /// Before the record of the synced object `id` is replaced by `record`: looks up how
    /// sync knows the object (for `recordSyncedPut`), and unless its newest entry is an
    /// untaken whole creation, which every change joins as it is, notes which stored fields
    /// of `record` differ from `previous` (all of them for a damaged previous record), by
    /// their bytes, in `sync.changedFields` (ascending).
    func collectSyncedChanges(_ id: Id, binding: EntityBinding, previous: RecordFields?, previousIsDamaged: Bool,
                              record: RecordFields) throws {
        sync.updatedObject = nil
        if !sync.isApplyingRemote, let tables = binding.syncTables {
            let identity: SyncedUpdateIdentity
            do { identity = try syncedUpdateIdentity(of: id, tables: tables) } catch { throw syncFailed(error) }
            sync.updatedObject = (id, identity)
            if case .absorbed = identity {
                sync.changedFields.removeAll(keepingCapacity: true)
                return
            }
        }
        try collectChangedFields(previous: previous, previousIsDamaged: previousIsDamaged, record: record)
    }

    /// How sync knows the stored object `id`: its `syncIds` entry first, then a run naming it.
    @inline(__always)
    private func syncedUpdateIdentity(of id: Id, tables: SyncIdTables) throws -> SyncedUpdateIdentity {
        let cursors = try syncIdentityCursors(tables)
        if let known = try syncIdEntry(of: id, cursors: cursors) { return .stored(syncId: known.syncId, newestMid: known.mid) }
        guard let derived = try derivedIdentity(of: id, entityId: tables.entityId) else { return .unknown }
        return try isUntakenWholeCreation(derived.creationMid, syncId: derived.syncId, entityId: tables.entityId)
            ? .absorbed : .derived(syncId: derived.syncId, creationMid: derived.creationMid)
    }

    /// Notes which stored fields of `record` differ from `previous` (all of them for a
    /// damaged previous record), by their bytes, in `sync.changedFields` (ascending).
    ///
    /// The records are compared as bytes first: a field lying wholly in the stretch both
    /// share at the start holds the same bytes at the same place in both, and so does every
    /// field after the point where both (of one length) agree to the end. Only the fields
    /// in between are read from both records and compared.
    private func collectChangedFields(previous: RecordFields?, previousIsDamaged: Bool, record: RecordFields) throws {
        if !sync.changedFields.isEmpty { sync.changedFields.removeAll(keepingCapacity: true) }
        guard let previous, !previousIsDamaged else { return try collectAllFields(of: record) }
        let old = previous.bytes, new = record.bytes
        guard let oldBase = old.baseAddress, let newBase = new.baseAddress, old.count > 0, new.count > 0 else {
            return try collectChangedFieldsByLookUp(previous: previous, record: record)
        }
        let sameLength = old.count == new.count
        let head = Self.commonPrefix(oldBase, newBase, count: min(old.count, new.count))
        if sameLength && head == new.count { return }  // the same bytes: nothing changed
        // From `tail` on, both records hold the same bytes (0 when their lengths differ).
        let tail = sameLength ? new.count &- Self.commonSuffix(oldBase, newBase, count: new.count) : Int.max
        let newCompact = try record.walk().compact
        let oldCompact = try previous.walk().compact
        var newOffset = 1
        // Fields of the new record wholly inside the shared start: unchanged.
        while newOffset < head {
            let header: FieldHeader
            switch FieldHeader.parse(newBase, at: newOffset, end: new.count, compact: newCompact) {
            case .failure(let problem): throw record.damage(problem)
            case .success(let parsed): header = parsed
            }
            if header.payloadEnd > head { break }
            newOffset = header.payloadEnd
        }
        // Both records have the same bytes up to `newOffset`, so a field starts there in both.
        var oldOffset = newOffset
        var ascending = true
        var last = -1
        while true {
            if newOffset == oldOffset && newOffset >= tail { break }  // the same bytes to the end
            if newOffset >= new.count || oldOffset >= old.count {
                // A field set or cleared (nil): rare enough to look each field up.
                if newOffset < new.count || oldOffset < old.count {
                    return try collectChangedFieldsByLookUp(previous: previous, record: record)
                }
                break
            }
            let after: FieldHeader, before: FieldHeader
            switch FieldHeader.parse(newBase, at: newOffset, end: new.count, compact: newCompact) {
            case .failure(let problem): throw record.damage(problem)
            case .success(let header): after = header
            }
            switch FieldHeader.parse(oldBase, at: oldOffset, end: old.count, compact: oldCompact) {
            case .failure(let problem): throw previous.damage(problem)
            case .success(let header): before = header
            }
            guard before.fieldId == after.fieldId else { return try collectChangedFieldsByLookUp(previous: previous, record: record) }
            if before.kind != after.kind || before.payloadLength != after.payloadLength
                || memcmp(oldBase + before.payloadStart, newBase + after.payloadStart, after.payloadLength) != 0 {
                sync.changedFields.append(UInt16(truncatingIfNeeded: after.fieldId))
                if after.fieldId <= last { ascending = false }
                last = after.fieldId
            }
            newOffset = after.payloadEnd
            oldOffset = before.payloadEnd
        }
        if !ascending { sortChangedFields() }
    }

    /// How many bytes at the start of two buffers of at least `count` bytes are equal.
    @inline(__always)
    private static func commonPrefix(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Int {
        var offset = 0
        while count &- offset >= 8,
              a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
            offset &+= 8
        }
        while offset < count, a.load(fromByteOffset: offset, as: UInt8.self) == b.load(fromByteOffset: offset, as: UInt8.self) {
            offset &+= 1
        }
        return offset
    }

    /// How many bytes at the end of two buffers of `count` bytes are equal.
    @inline(__always)
    private static func commonSuffix(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Int {
        var length = 0
        while count &- length >= 8,
              a.loadUnaligned(fromByteOffset: count &- length &- 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: count &- length &- 8, as: UInt64.self) {
            length &+= 8
        }
        while length < count,
              a.load(fromByteOffset: count &- length &- 1, as: UInt8.self) == b.load(fromByteOffset: count &- length &- 1, as: UInt8.self) {
            length &+= 1
        }
        return length
    }

    /// `collectSyncedChanges` for records whose fields are not in the same order: each field
    /// looked up in the other record.
    private func collectChangedFieldsByLookUp(previous: RecordFields, record: RecordFields) throws {
        sync.changedFields.removeAll(keepingCapacity: true)
        var new = try record.walk()
        while let (id, field) = try new.next() {
            if !RecordFields.Field.sameStoredValue(try previous.field(id), field) { sync.changedFields.append(id) }
        }
        // Fields the new record no longer holds (set to nil) changed too.
        var old = try previous.walk()
        while let (id, _) = try old.next() {
            if try record.field(id) == nil { sync.changedFields.append(id) }
        }
        sortChangedFields()
    }

    /// Every stored field of `record`, in `sync.changedFields` (ascending). The ids are
    /// gathered in stack memory (a field takes at least two bytes) and appended at once.
    func collectAllFields(of record: RecordFields) throws {
        sync.changedFields.removeAll(keepingCapacity: true)
        let compact = try record.walk().compact
        guard let base = record.bytes.baseAddress else { return }
        let end = record.bytes.count
        let ascending = try withUnsafeTemporaryAllocation(of: UInt16.self, capacity: end / 2 + 1) { ids in
            var count = 0
            var ascending = true
            var last = -1
            var offset = 1
            while offset < end {
                switch FieldHeader.parse(base, at: offset, end: end, compact: compact) {
                case .failure(let problem): throw record.damage(problem)
                case .success(let header):
                    guard count < ids.count else { throw record.damage("more fields than its size allows") }
                    ids[count] = UInt16(truncatingIfNeeded: header.fieldId)
                    count &+= 1
                    if header.fieldId <= last { ascending = false }
                    last = header.fieldId
                    offset = header.payloadEnd
                }
            }
            sync.changedFields.append(contentsOf: UnsafeBufferPointer(rebasing: ids[0..<count]))
            return ascending
        }
        if !ascending { sortChangedFields() }
    }

    private func sortChangedFields() {
        sync.changedFields.sort()
        var unique: [UInt16] = []
        for id in sync.changedFields where unique.last != id { unique.append(id) }
        sync.changedFields = unique
    }

    /// After the record of `id` was written: its sync id (a new one for an insert) and its
    /// outbox entry, unless the put changed no field or remote changes are being applied.
    /// `record` is the record just written; `idAscends`: `id` is above every stored id of the
    /// entity (an insert appended it); `isFresh`: no object of the entity ever had the id
    /// before (an insert's id above every id handed out), so its sync id can be derived.
    func recordSyncedPut(_ id: Id, binding: EntityBinding, record: RecordFields, isInsert: Bool, idAscends: Bool, isFresh: Bool) throws {
        guard let tables = binding.syncTables else { return }
        do {
            if sync.isApplyingRemote {
                if try isInsert || syncIdentity(of: id, in: tables) == nil {
                    let arriving = try arrivingOrNewSyncId(for: binding)
                    try reserveIdDerivedAs(arriving, binding: binding)
                    try mapSyncId(arriving, to: id, in: tables, entity: binding.schema.name)
                }
                return
            }
            if isInsert && isFresh && sync.arrivingSyncId == nil {
                // A new object of this replica: a derived id, no identity entry, a whole
                // creation.
                let clock = try syncTick()
                let mid = try nextSyncMid()
                let epoch = try derivationEpoch()
                try appendWholeCreationEntry(mid: mid, entityId: binding.entityId, syncId: epoch.syncId(of: id, entityId: binding.entityId),
                                             clock: clock)
                try noteDerivedCreation(id, mid: mid, entityId: binding.entityId, prefix: epoch.prefix)
                return
            }
            let cursors = try syncIdentityCursors(tables)
            if !isInsert {
                let identity: SyncedUpdateIdentity
                if let looked = sync.updatedObject, looked.id == id {
                    identity = looked.identity
                } else {
                    identity = try syncedUpdateIdentity(of: id, tables: tables)
                }
                sync.updatedObject = nil
                switch identity {
                case .absorbed:
                    return
                case .stored(let syncId, let newestMid):
                    let forward = sync.identityCursors[cursors].forward
                    guard !sync.changedFields.isEmpty else { return }
                    try recordSyncedUpdate(id, syncId: syncId, newestMid: newestMid, binding: binding, forward: forward)
                    if !binding.linkFieldIds.isEmpty { try dropPendingLinksSupersededByLocalEdit(of: id, binding: binding) }
                    return
                case .derived(let syncId, let creationMid):
                    guard !sync.changedFields.isEmpty else { return }
                    let mid = try sync.changedFields.withUnsafeBufferPointer { fields in
                        try enqueue(.upsert, isCreation: false, entityId: binding.entityId, syncId: syncId,
                                    newestMid: creationMid, fields: fields)
                    }
                    if mid != creationMid { try storeDerivedIdEntry(syncId, of: id, newestMid: mid, cursors: cursors) }
                    if !binding.linkFieldIds.isEmpty { try dropPendingLinksSupersededByLocalEdit(of: id, binding: binding) }
                    return
                case .unknown:
                    // An object stored before its entity was synced that the registration did
                    // not reach: it becomes known to sync now, whole.
                    break
                }
            }
            let clock = try syncTick()
            let mid = try nextSyncMid()
            let syncId = try arrivingOrNewSyncId(for: binding)
            try appendCreationEntry(mid: mid, entityId: binding.entityId, syncId: syncId, clock: clock, record: record)
            try mapSyncId(syncId, to: id, newestMid: mid, cursors: cursors, idAscends: isInsert && idAscends, entity: binding.schema.name)
        } catch {
            throw syncFailed(error)
        }
    }

    /// A pulled object keeps the sync id it arrives with. When that id reads as one this
    /// store instance's epoch would derive for a local id not handed out yet (a foreign id
    /// that happens to look derived), no local object may ever be derived to it: a local id
    /// near the entity's sequence is never handed out fresh; one further above (a random
    /// lookalike, whose reservation would use up the entity's ids) instead retires the epoch,
    /// and this instance derives under a new one from now on.
    private func reserveIdDerivedAs(_ syncId: UUID, binding: EntityBinding) throws {
        guard let prefix = SyncIdDerivation.prefix(of: syncId), let epoch = sync.epoch ?? store.syncEpochs.existing,
              epoch.prefix == prefix, let id = epoch.id(of: syncId, entityId: binding.entityId) else { return }
        if try reserveIds(through: id, for: binding, within: Self.lookalikeReservationReach) { return }
        _ = store.syncEpochs.replace(epoch, milliseconds: store.syncClock.now())
        if sync.epoch == epoch { sync.epoch = nil }
    }

    /// How far above an entity's last id a lookalike sync id may reserve local ids.
    static let lookalikeReservationReach: Id = 1 << 20

    /// An update of an object known to sync: merged into its untaken entry, or a new entry
    /// that its `syncIds` value then names (written through `forward`, which stands on it).
    private func recordSyncedUpdate(_ id: Id, syncId: UUID, newestMid: UInt64, binding: EntityBinding, forward: OpaquePointer) throws {
        let mid = try sync.changedFields.withUnsafeBufferPointer { fields in
            try enqueue(.upsert, isCreation: false, entityId: binding.entityId, syncId: syncId, newestMid: newestMid, fields: fields)
        }
        if mid != newestMid { try renameNewestMid(of: id, syncId: syncId, to: mid, at: forward) }
    }

    /// The `syncIds` value of `id`, read through the forward cursor at `cursors` (left on
    /// it), or nil.
    ///
    /// Puts that visit objects in id order (`modifyEach`, a put of stored objects sorted by
    /// id) find each entry right after the previous one: when the cursor stands on a lower
    /// id, the next entry is tried first, and taken only when its key is `id` (keys are
    /// unique, so that is the entry), else the tree is searched as usual. A search that
    /// finds no entry notes the next stored id, so later look-ups below it (objects with
    /// derived ids, visited in id order) need no search.
    @inline(__always)
    private func syncIdEntry(of id: Id, cursors: Int) throws -> (syncId: UUID, mid: UInt64)? {
        if id > sync.identityCursors[cursors].missFrom && id < sync.identityCursors[cursors].missUpTo { return nil }
        let cursor = sync.identityCursors[cursors].forward
        let standsOn = sync.identityCursors[cursors].forwardId
        sync.identityCursors[cursors].forwardId = 0
        var value = MDB_val()
        if standsOn != 0 && id > standsOn {
            var nextKey = MDB_val()
            if mdb_cursor_get(cursor, &nextKey, &value, MDB_NEXT) == 0, let next = IdKey(nextKey.bytes), next.id == id {
                sync.identityCursors[cursors].forwardId = id
                return try Self.decodeSyncIdValue(value.bytes, of: id)
            }
        }
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var found = keyVal
            let rc = mdb_cursor_get(cursor, &found, &value, MDB_SET_RANGE)
            if rc == MDB_NOTFOUND {
                sync.identityCursors[cursors].missFrom = id
                sync.identityCursors[cursors].missUpTo = .max
                return nil
            }
            try check(rc, "reading the sync id of \(id)")
            guard let stored = IdKey(found.bytes)?.id else {
                throw CofferError.damagedStore(part: .sync, reason: "the sync ids hold a key of \(found.mv_size) bytes, not 8")
            }
            sync.identityCursors[cursors].forwardId = stored
            guard stored == id else {
                sync.identityCursors[cursors].missFrom = id
                sync.identityCursors[cursors].missUpTo = stored
                return nil
            }
            return try Self.decodeSyncIdValue(value.bytes, of: id)
        }
    }

    /// Rewrites the `syncIds` value of `id`, on which `cursor` stands, to name `mid`.
    private func renameNewestMid(of id: Id, syncId: UUID, to mid: UInt64, at cursor: OpaquePointer) throws {
        var key = IdKey(id)
        try key.withVal { keyVal in
            try Self.withSyncIdValue(syncId, newestMid: mid) { valueVal in
                try check(mdb_cursor_put(cursor, &keyVal, &valueVal, UInt32(MDB_CURRENT)), "storing the sync id of \(id)")
            }
        }
    }

    /// After the record of `id` was removed: its delete entry (unless remote changes are
    /// being applied), then its identity entries are removed (a derived id has none; its run
    /// stays, and names no stored object from now on).
    func recordSyncedRemove(_ id: Id, binding: EntityBinding) throws {
        guard let tables = binding.syncTables else { return }
        do {
            let cursors = try syncIdentityCursors(tables)
            let forward = sync.identityCursors[cursors].forward
            guard let known = try syncIdEntry(of: id, cursors: cursors) else {
                guard !sync.isApplyingRemote, let derived = try derivedIdentity(of: id, entityId: binding.entityId) else { return }
                _ = try enqueue(.delete, isCreation: false, entityId: binding.entityId, syncId: derived.syncId, newestMid: derived.creationMid,
                                fields: UnsafeBufferPointer(start: nil, count: 0))
                return
            }
            if !sync.isApplyingRemote {
                _ = try enqueue(.delete, isCreation: false, entityId: binding.entityId, syncId: known.syncId, newestMid: known.mid,
                                fields: UnsafeBufferPointer(start: nil, count: 0))
            }
            // The outbox has its own cursor: `forward` still stands on the entry. After the
            // delete it stands between `id` and the next entry, which its next step reaches
            // (`forwardId` stays: a run of removals in id order keeps the shortcut).
            try check(mdb_cursor_del(forward, 0), "removing the sync id of \(binding.schema.name) \(id)")
            try removeLocalIdEntry(of: known.syncId, cursors: cursors, "removing the sync id of \(binding.schema.name) \(id)")
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
        return sync.ids.next(milliseconds: HybridClock.milliseconds(of: try syncTick()))
    }

    /// Before every object of a synced entity is removed at once: a delete entry for each
    /// object with a sync id, and the identity tables emptied (the runs stay: their ids are
    /// never derived again).
    func recordSyncedRemoveAll(binding: EntityBinding) throws {
        guard let tables = binding.syncTables else { return }
        do {
            if !sync.isApplyingRemote {
                for object in try syncIdentities(in: tables, entity: binding.schema.name) {
                    _ = try enqueue(.delete, isCreation: false, entityId: binding.entityId, syncId: object.syncId, newestMid: object.mid,
                                    fields: UnsafeBufferPointer(start: nil, count: 0))
                }
            }
            try check(mdb_drop(txn, tables.syncIds, 0), "clearing the sync ids of \(binding.schema.name)")
            try check(mdb_drop(txn, tables.localIds, 0), "clearing the sync ids of \(binding.schema.name)")
            if let last = sync.identityCursors.indices.last, sync.identityCursors[last].syncIds == tables.syncIds {
                sync.identityCursors[last].missUpTo = 0
                sync.identityCursors[last].forwardId = 0
            }
        } catch {
            throw syncFailed(error)
        }
    }

    /// Every stored object of the entity that has a sync id, in id order, with its sync id
    /// and the mid of its newest outbox entry (see ``syncIdentity(of:in:)``).
    func syncIdentities(in tables: SyncIdTables, entity: @autoclosure () -> String) throws -> [(id: Id, syncId: UUID, mid: UInt64)] {
        var ids: [Id] = []
        try withCursor(tables.records, "reading \(entity())") { cursor in
            var current = try cursor.first()
            while let entry = current {
                guard let id = IdKey(entry.key)?.id else {
                    throw CofferError.damagedStore(part: .table(entity: entity()), reason: "a key of \(entry.key.count) bytes is not an id")
                }
                ids.append(id)
                current = try cursor.next()
            }
        }
        var identities: [(id: Id, syncId: UUID, mid: UInt64)] = []
        for id in ids {
            if let stored = try syncIdEntry(of: id, in: tables) {
                identities.append((id, stored.syncId, stored.mid))
            } else if let derived = try derivedIdentity(of: id, entityId: tables.entityId) {
                identities.append((id, derived.syncId, derived.creationMid))
            }
        }
        return identities
    }

    /// After a link owner found through the catalog lost its link or a relation row (its
    /// target was removed): when the owner's entity is synced, that field changed.
    func recordSyncedRewrite(_ id: Id, entity storedName: String, field: UInt16) throws {
        if sync.storeHasOutbox == nil {
            sync.storeHasOutbox = try databaseExists(SyncIdTables.outboxName)
        }
        guard sync.storeHasOutbox == true, !sync.isApplyingRemote, let catalog = store.catalogDatabase else { return }
        do {
            guard let owner = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(storedName), dbi: catalog, in: self),
                  owner.synced == true else { return }
            try recordSyncedFieldChange(id, field: field, entityId: owner.id,
                                        tables: SyncIdTables.listed(entityId: owner.id, entity: storedName, in: self))
        } catch {
            throw syncFailed(error)
        }
    }

    /// After the to-many relation stored as `field` of the synced object `owner` changed
    /// locally (its rows live outside the record, so the put's comparison does not see it):
    /// the field joins the object's outbox entry, and the pusher sends the relation's targets.
    func recordSyncedRelationChange(_ owner: Id, field: UInt16, binding: EntityBinding) throws {
        guard let tables = binding.syncTables, !sync.isApplyingRemote else { return }
        do {
            try recordSyncedFieldChange(owner, field: field, entityId: binding.entityId, tables: tables)
        } catch {
            throw syncFailed(error)
        }
    }

    /// One field of the synced object `id` changed outside its record: the field joins the
    /// object's outbox entry. Nothing for an object sync does not know.
    private func recordSyncedFieldChange(_ id: Id, field: UInt16, entityId: UInt32, tables: SyncIdTables) throws {
        let cursors = try syncIdentityCursors(tables)
        let forward = sync.identityCursors[cursors].forward
        let stored = try syncIdEntry(of: id, cursors: cursors)
        guard let known = try stored ?? derivedIdentity(of: id, entityId: entityId).map({ ($0.syncId, $0.creationMid) }) else { return }
        let mid = try withUnsafePointer(to: field) { field in
            try enqueue(.upsert, isCreation: false, entityId: entityId, syncId: known.0, newestMid: known.1,
                        fields: UnsafeBufferPointer(start: field, count: 1))
        }
        guard mid != known.1 else { return }
        if stored != nil {
            try renameNewestMid(of: id, syncId: known.0, to: mid, at: forward)
        } else {
            try storeDerivedIdEntry(known.0, of: id, newestMid: mid, cursors: cursors)
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
        if sync.openRun != nil {
            do { try storeOpenRun() } catch { throw syncFailed(error) }
        }
        guard sync.isDirty, let catalog = store.catalogDatabase else { return }
        try sync.state.withEncoded { try Catalog.putRaw(key: SyncState.catalogKey, value: $0, dbi: catalog, in: self) }
        sync.isDirty = false
        sync.wroteState = true
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
                objects.append((id, Array(Set(fields)).sorted()))
                current = try cursor.next()
            }
        }
        for relation in binding.relationTables.values {
            let owners = try relationOwners(relation)
            guard !owners.isEmpty else { continue }
            for index in objects.indices where owners.contains(objects[index].0) {
                objects[index].1 = Array(Set(objects[index].1 + [relation.field])).sorted()
            }
        }
        do {
            let cursors = try syncIdentityCursors(tables)
            for (id, fields) in objects where try syncId(of: id, in: tables) == nil {
                let syncId = sync.ids.next(milliseconds: HybridClock.milliseconds(of: try syncTick()))
                let mid = try nextSyncMid()
                try fields.withUnsafeBufferPointer { fields in
                    try appendOutboxEntry(mid: mid, .upsert, isCreation: true, entityId: binding.entityId, syncId: syncId,
                                          clock: try syncTick(), fields: fields)
                }
                try mapSyncId(syncId, to: id, newestMid: mid, cursors: cursors, idAscends: true, entity: binding.schema.name)
            }
        } catch {
            throw syncFailed(error)
        }
    }
}
