import CLMDB
import Foundation

/// The timestamps a put gives an object with `@CreatedAt` / `@UpdatedAt` properties: the
/// stored creation date when the object exists (or now), and now.
struct PutStamps {
    let createdAt: Date?
    let updatedAt: Date
}

/// What a put found of the object it stores, carried from phase to phase of
/// `Transaction.storeObject`.
///
/// Trivially copyable (plain bytes and flags, no references), so handing it from phase to
/// phase copies a few words instead of calling value witnesses: the stored record is kept as
/// its bytes and viewed as `RecordFields` where a phase reads it.
struct PutTarget {
    /// The bytes of the stored record of an update; nil for an insert.
    var previousBytes: UnsafeRawBufferPointer?
    /// Whether a new id is above every stored key (LMDB may append it).
    var canAppend = false
    /// An insert's id is above every id the entity handed out before (see `noteStoredId`).
    var isFresh = false
    /// An update reads the stored record through a cursor and writes the new one at the
    /// cursor's place (MDB_CURRENT): one B-tree search instead of two. Nil once anything
    /// may have moved the cursor (a `.replace` conflict removing other objects).
    var cursorOnPrevious: OpaquePointer?
    /// The stored record is the one a write walk decoded whole, meeting no field this build
    /// does not declare: nothing to carry.
    var previousHasNothingToCarry = false
    /// The stored record cannot say which index entries it has: they are found by id.
    var previousIsDamaged = false

    /// Whether the put updates a stored object.
    var isUpdate: Bool { previousBytes != nil }

    /// The stored record of an update as fields of `layout`'s entity; nil for an insert.
    @inline(__always)
    func previous(_ layout: RecordLayout, id: Id) -> RecordFields? {
        previousBytes.map { RecordFields(bytes: $0, layout: layout, id: id) }
    }
}

/// How one attempt of a put ended.
enum PutOutcome {
    /// Stored; `replaced`: it replaced a stored object.
    case stored(replaced: Bool)
    /// A `.update` unique conflict: the put must become the object `holder`.
    case redirect(to: Id)

    /// Whether the put replaced a stored object (a redirect is never the final outcome).
    var replacedStoredObject: Bool {
        if case .stored(let replaced) = self { return replaced }
        return true
    }
}

/// The one mutation path of records. `Box.put`/`remove`/`upsert` (typed, through generated
/// code) and `Store.importObjects` (from JSON, through the catalog) both come here, so
/// ids, unique constraints, indexes, full-text postings, relation rows and change sets are
/// kept the same way whoever writes.
///
/// Rule: every check that can refuse an object (unique constraints, damaged keys) runs
/// before anything of that object is written, so a put that throws leaves the transaction
/// as it was.
extension Transaction {
    /// Encodes and stores one object in this write transaction, keeping its indexes, unique
    /// constraints, full-text postings and timestamps; returns whether it replaced a stored
    /// object (false: an insert).
    ///
    /// A `.update` unique conflict redirects the put, once, to the stored object that holds
    /// the value: the put runs again as an update of that object (same id, so references to
    /// it stay valid); a second conflict there throws.
    ///
    /// - Parameters:
    ///   - id: the object's id; 0 inserts under a new id. Set to the stored id on success
    ///     (a new id, or the id of the object a `.update` unique conflict redirected to); it
    ///     may hold anything after a throw (callers restore their own value).
    ///   - encode: writes the object's fields; called once per attempt, with the timestamps
    ///     to apply first when the entity has any.
    @discardableResult
    func storeObject(id: inout Id, binding: EntityBinding, encode: (inout RecordWriter, PutStamps?) -> Void) throws -> Bool {
        var outcome = try storeAttempt(id: &id, binding: binding, redirected: false, encode: encode)
        if case .redirect(let holder) = outcome {
            id = holder
            outcome = try storeAttempt(id: &id, binding: binding, redirected: true, encode: encode)
        }
        return outcome.replacedStoredObject
    }

    /// One attempt of `storeObject`, in phases: find the stored object, carry its unknown
    /// fields, encode, check unique constraints (which may redirect the put), work out the
    /// index keys, write the record, then its index entries and postings.
    @inline(__always)
    private func storeAttempt(id: inout Id, binding: EntityBinding, redirected: Bool,
                              encode: (inout RecordWriter, PutStamps?) -> Void) throws -> PutOutcome {
        var target = try locateStoredObject(id: &id, binding: binding)
        let indexes = binding.indexes
        writes.prepareKeyBuffers(count: indexes.count)
        let carried = try carryUnknownFields(of: &target, id: id, binding: binding)
        let stamps = try putStamps(previous: target, id: id, binding: binding)
        let record = try encodeRecord(id: id, binding: binding, stamps: stamps, carried: carried, encode: encode)
        if let holder = try checkUniqueConstraints(of: record, id: id, target: &target, indexes: indexes, binding: binding,
                                                     redirected: redirected) {
            return .redirect(to: holder)
        }
        try prepareIndexKeys(of: record, id: id, target: target, indexes: indexes, binding: binding)
        // Full-text postings and sync capture, behind one test for entities with neither.
        // Postings before and after (the stored record is read again here because a
        // `.replace` above may have moved its page); a synced update's changed fields while
        // the stored record's bytes are valid.
        let hasTextOrSync = binding.hasTextIndexesOrSync
        let hasTextIndexes = hasTextOrSync && !binding.textIndexes.isEmpty
        let oldPostings = hasTextIndexes ? try textPostings(of: target.isUpdate ? id : nil, binding: binding) : nil
        if hasTextOrSync, binding.syncTables != nil, target.isUpdate {
            try collectSyncedChanges(id, binding: binding, previous: target.previous(binding, id: id),
                                     previousIsDamaged: target.previousIsDamaged, record: record)
        }
        let placement: RecordPlacement = target.cursorOnPrevious.map { .atCursor($0) } ?? (target.canAppend ? .appended : .byKey)
        try putRecord(record.bytes, id: id, table: binding.table, placement: placement, "storing \(binding.schema.name) \(id)")
        changes.recordPut(binding, id, isInsert: !target.isUpdate)
        try applyIndexKeys(id: id, target: target, indexes: indexes, entity: binding.schema.name)
        if hasTextOrSync {
            if hasTextIndexes { try applyTextPostings(of: id, binding: binding, old: oldPostings, new: record) }
            if binding.syncTables != nil {
                try recordSyncedPut(id, binding: binding, record: record, isInsert: !target.isUpdate, idAscends: target.canAppend,
                                    isFresh: target.isFresh)
            }
        }
        return .stored(replaced: target.isUpdate)
    }

    /// Phase 1: a new id for an insert (and whether it can be appended), or for an update
    /// the stored record, read through the table's write cursor.
    @inline(__always)
    private func locateStoredObject(id: inout Id, binding: EntityBinding) throws -> PutTarget {
        var target = PutTarget()
        // The object a write walk is visiting: when its decode read the very bytes stored
        // and met nothing this build does not declare, there is nothing to carry.
        let visit = writes.walkVisit
        writes.walkVisit = nil  // consumed: only the first put of the visit may rely on it
        if id == 0 {
            (id, target.canAppend) = try nextId(for: binding)
            target.isFresh = true
        } else {
            target.isFresh = try noteStoredId(id, for: binding)
            let cursor = try writeCursor(of: binding)
            if let bytes = try seekRecord(id, cursor: cursor, of: binding) {
                target.previousBytes = bytes
                target.cursorOnPrevious = cursor
                target.previousHasNothingToCarry = visit?.hasNothingToCarry(bytes, of: id, in: binding.table, cursorMoves: writes.cursorMoves) ?? false
            }
        }
        return target
    }

    /// Phase 2: the fields of the stored record that belong to properties this build does
    /// not declare (retired here, or added by a newer build), carried into the new record so
    /// no build loses another's data. Marks a stored record too damaged to walk.
    @inline(__always)
    private func carryUnknownFields(of target: inout PutTarget, id: Id, binding: EntityBinding) throws -> [(UInt16, RecordFields.Field)] {
        guard let previous = target.previous(binding, id: id), !target.previousHasNothingToCarry else { return [] }
        do {
            // Old index keys are worked out later, only for the indexed values that changed.
            return try fieldsToCarry(from: previous, binding: binding)
        } catch CofferError.damagedRecord {
            // The damaged record's index entries are found by id instead, so overwriting
            // damage repairs the indexes too.
            target.previousIsDamaged = true
            return []
        }
    }

    /// Phase 3: the timestamps to set, when the entity has any: the stored creation date of
    /// an update (or now), and now.
    @inline(__always)
    private func putStamps(previous target: PutTarget, id: Id, binding: EntityBinding) throws -> PutStamps? {
        guard binding.hasTimestamps else { return nil }
        let now = Date()
        var created: Date? = now
        if let previous = target.previous(binding, id: id), !target.previousIsDamaged, let storedId = binding.createdAtStoredId,
           let field = try previous.field(storedId),
           let seconds = FieldValue.double(field.kind, field.payload) {
            created = Date(timeIntervalSinceReferenceDate: seconds)
        }
        return PutStamps(createdAt: created, updatedAt: now)
    }

    /// Phase 4: the new record, encoded into the store's record buffer with the carried
    /// fields; what the reader would refuse (a too deep document) is never stored.
    @inline(__always)
    private func encodeRecord(id: Id, binding: EntityBinding, stamps: PutStamps?, carried: [(UInt16, RecordFields.Field)],
                              encode: (inout RecordWriter, PutStamps?) -> Void) throws -> RecordFields {
        var writer = RecordWriter(buffer: recordBuffer, storedIds: binding.storedIds)
        encode(&writer, stamps)
        for (fieldId, field) in carried { writer.appendRaw(fieldId, field) }
        recordBuffer.adopt(writer)
        // Every document writer notes a document deeper than the reader accepts.
        if let (field, depth) = writer.tooDeepDocument {
            throw CofferError.documentTooDeep(entity: binding.schema.name, property: binding.propertyName(field),
                                              depth: depth, limit: DocumentCodec.maximumDepth)
        }
        return RecordFields(bytes: writer.bytes, layout: binding, id: id)
    }

    /// Phase 5: the unique constraints, checked before anything of the object is written.
    /// `.fail` throws; `.replace` removes the other holders (the stored record is read again,
    /// as removing moved pages); `.update` returns the holder the put must become, unless
    /// the put was redirected already.
    @inline(__always)
    private func checkUniqueConstraints(of record: RecordFields, id: Id, target: inout PutTarget, indexes: [IndexBinding],
                                        binding: EntityBinding, redirected: Bool) throws -> Id? {
        let uniqueCandidates = binding.hasUniqueIndex ? indexes : []  // empty: no retain per index
        for index in uniqueCandidates where index.isUnique {
            guard try record.field(index.storedId) != nil else { continue }  // nil never collides
            let clashes = try matchingIds(index, valueOf: record, table: binding.table, excluding: id)
            guard let clash = clashes.first else { continue }
            switch index.property.onConflict ?? .fail {
            case .fail:
                throw CofferError.uniqueViolation(entity: binding.schema.name, property: index.property.name, value: try record.describe(index))
            case .replace:
                try replaceHolders(clashes, of: id, target: &target, binding: binding)
            case .update:
                guard !redirected else {
                    throw CofferError.uniqueViolation(entity: binding.schema.name, property: index.property.name,
                                                      value: try record.describe(index) + " (held by another object than the one being updated)")
                }
                return clash
            }
        }
        return nil
    }

    /// Removes the objects holding a unique value a `.replace` put takes over, and reads the
    /// put's stored record again (removing moved pages, and the cursor).
    private func replaceHolders(_ holders: [Id], of id: Id, target: inout PutTarget, binding: EntityBinding) throws {
        for other in holders { _ = try removeObject(other, binding: binding) }
        target.cursorOnPrevious = nil
        guard target.isUpdate, !target.previousIsDamaged else { return }
        guard let again = try record(id, table: binding.table, entity: binding.schema.name) else {
            throw CofferError.damagedRecord(entity: binding.schema.name, id: id, reason: "the object disappeared while a unique conflict was replaced")
        }
        target.previousBytes = again
    }

    /// Phase 6: each index's new key, and for an update its old key, into the transaction's
    /// key pairs, unless the indexed field holds the same bytes as before (the usual
    /// update): then the pair is marked unchanged and its entries stay as they are.
    @inline(__always)
    private func prepareIndexKeys(of record: RecordFields, id: Id, target: PutTarget, indexes: [IndexBinding], binding: EntityBinding) throws {
        for position in indexes.indices {
            // Borrowed: `indexes` holds every index for the whole call (a retain and a
            // release per index and put otherwise).
            unowned(unsafe) let index = indexes[position]
            let newField = try record.field(index.storedId)
            let pair = writes.keyPair(position)
            pair.pointee.isUnchanged = false
            if let previous = target.previous(binding, id: id), !target.previousIsDamaged {
                // The usual update: the old record is byte for byte the new one up to the end
                // of the indexed field, so its walk finds the same field there first.
                if let newField, previous.hasSamePrefix(as: record, through: newField) {
                    pair.pointee.isUnchanged = true
                    continue
                }
                let oldField = try previous.field(index.storedId)
                if RecordFields.Field.sameStoredValue(oldField, newField) {
                    pair.pointee.isUnchanged = true
                    continue
                }
                pair.pointee.old.removeAll()
                try index.writeKey(of: oldField, in: previous, to: &pair.pointee.old)
            }
            pair.pointee.new.removeAll()
            try index.writeKey(of: newField, in: record, to: &pair.pointee.new)
        }
    }

    /// Phase 7 (after the record is written): the index entries, from the key pairs of
    /// phase 6; a damaged stored record's entries are found by id.
    @inline(__always)
    private func applyIndexKeys(id: Id, target: PutTarget, indexes: [IndexBinding], entity: @autoclosure () -> String) throws {
        for position in indexes.indices {
            // Borrowed: `indexes` holds every index for the whole call (a retain and a
            // release per index and put otherwise).
            unowned(unsafe) let index = indexes[position]
            let pair = writes.keyPair(position)
            if target.previousIsDamaged {
                try deleteIndexEntries(index, of: id, entity: entity())
            } else if target.isUpdate {
                guard !pair.pointee.isUnchanged, !pair.pointee.old.hasSameBytes(as: pair.pointee.new) else { continue }
                try updateIndexEntries(index, old: pair.pointee.old.bytes, new: pair.pointee.new.bytes, id: id)
                continue
            }
            try insertIndexEntries(index, keys: pair.pointee.new.bytes, id: id)
        }
    }

    /// This transaction's cursor on an entity table for updates, opened on first use and
    /// left to LMDB to close with the transaction.
    func writeCursor(of binding: EntityBinding) throws -> OpaquePointer {
        let table = binding.table
        if let cursor = writes.writeCursor(on: table) { return cursor }
        var handle: OpaquePointer?
        let rc = mdb_cursor_open(txn, table, &handle)
        guard rc == 0, let handle else {
            let code = rc == 0 ? EINVAL : rc
            throw CofferError.storage(code: .init(result: code), message: "updating \(binding.schema.name): cannot open a cursor: \(LMDB.message(code))")
        }
        writes.keepWriteCursor(handle, on: table)
        return handle
    }

    /// Moves `cursor` onto the record of `id` and returns its bytes, or nil when none is stored.
    /// When the cursor already stands on `id` (a `forEach` writing back the object it
    /// visits walks with this cursor), no search is made.
    func seekRecord(_ id: Id, cursor: OpaquePointer, of binding: EntityBinding) throws -> UnsafeRawBufferPointer? {
        if let here = recordHere(id, cursor: cursor) { return here }
        writes.noteTableChange()
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var value = MDB_val()
            let rc = mdb_cursor_get(cursor, &keyVal, &value, MDB_SET_KEY)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "reading \(binding.schema.name) \(id)")
            return value.bytes
        }
    }

    /// The record at `cursor`'s position when that is the record of `id`, else nil (also for
    /// a cursor not positioned yet, or whose record was just removed).
    func recordHere(_ id: Id, cursor: OpaquePointer) -> UnsafeRawBufferPointer? {
        var key = MDB_val()
        var value = MDB_val()
        guard mdb_cursor_get(cursor, &key, &value, MDB_GET_CURRENT) == 0, IdKey(key.bytes)?.id == id else { return nil }
        return value.bytes
    }

    /// The id of the stored object whose `index` value equals the one `encode` writes (an
    /// upsert's target), or nil when none has it.
    ///
    /// - Throws: ``CofferError/invalidUpsertKey(entity:property:problem:)`` when the key is nil;
    ///   ``CofferError/ambiguousUpsert(entity:property:value:count:)`` when several
    ///   objects have it.
    func upsertTarget(by index: IndexBinding, binding: EntityBinding, encode: (inout RecordWriter, PutStamps?) -> Void) throws -> Id? {
        let name = binding.schema.name
        var writer = RecordWriter(buffer: recordBuffer, storedIds: binding.storedIds)
        encode(&writer, nil)
        recordBuffer.adopt(writer)
        let record = RecordFields(bytes: writer.bytes, entity: name, id: 0)
        guard try record.field(index.storedId) != nil else {
            throw CofferError.invalidUpsertKey(entity: name, property: index.property.name, problem: .missingValue)
        }
        let matches = try matchingIds(index, valueOf: record, table: binding.table)
        guard matches.count <= 1 else {
            throw CofferError.ambiguousUpsert(entity: name, property: index.property.name,
                                              value: try record.describe(index), count: matches.count)
        }
        return matches.first
    }

    /// Removes one object with its index entries, postings, relation rows and the links
    /// pointing at it; returns whether it was stored. A damaged record is removed too, its
    /// index entries found by id.
    func removeObject(_ id: Id, binding: EntityBinding) throws -> Bool {
        var name: String { binding.schema.name }  // for messages (see `storeObject`)
        writes.noteTableChange()
        // With indexes the record is read first, through the table cursor, which then
        // deletes it in place (one search instead of two).
        var cursorOnRecord: OpaquePointer?
        if !binding.indexes.isEmpty {
            let cursor = try writeCursor(of: binding)
            guard let bytes = try seekRecord(id, cursor: cursor, of: binding) else { return false }
            cursorOnRecord = cursor
            let indexes = binding.indexes
            // All keys first: deleting changes pages and invalidates the record's bytes.
            var isDamaged = false
            do {
                try readOldKeys(of: RecordFields(bytes: bytes, layout: binding, id: id), binding: binding)
            } catch CofferError.damagedRecord {
                isDamaged = true
            }
            for position in indexes.indices {
                // Borrowed: `indexes` holds every index for the whole call (a retain and a
                // release per index and put otherwise).
                unowned(unsafe) let index = indexes[position]
                if isDamaged {
                    try deleteIndexEntries(index, of: id, entity: name)
                } else {
                    try deleteIndexEntries(index, keys: writes.keyPair(position).pointee.old.bytes, id: id)
                }
            }
        }
        // Read before the record's page changes; nil when nothing was stored.
        let oldPostings = try textPostings(of: id, binding: binding)
        // Index entries live in other databases: deleting them left the cursor on the record.
        let removed = try deleteRecord(id, table: binding.table, at: cursorOnRecord, "removing \(name) \(id)")
        if removed {
            try applyTextPostings(of: id, binding: binding, old: oldPostings, new: nil)
            changes.recordRemove(binding, id)
            if binding.syncTables != nil { try recordSyncedRemove(id, binding: binding) }
            let incoming = try store.incomingLinks(to: binding.schema.storedName, in: self)
            if !incoming.toOne.isEmpty { try clearLinks(to: id, of: binding) }
            if !incoming.manyToMany.isEmpty || !binding.relationTables.isEmpty { try removeManyToMany(of: id, binding: binding) }
        }
        return removed
    }

    /// Removes every object of an entity with the links pointing at them, their relation
    /// rows, index entries and full-text postings (pending ones too). The caller records
    /// the change (it knows the ids only when a change handler listens).
    func removeAllObjects(binding: EntityBinding) throws {
        writes.noteTableChange()
        if binding.syncTables != nil { try recordSyncedRemoveAll(binding: binding) }
        try clearAllLinks(of: binding)
        try dropManyToMany(of: binding)
        try deleteAllRecords(of: binding)
        for index in binding.indexes {
            try check(mdb_drop(txn, index.database, 0), "clearing the index on \(index.property.name)")
        }
        for index in binding.textIndexes {
            // Pending postings of this transaction go with the rest.
            pendingText.discard(index.database)
            try check(mdb_drop(txn, index.database, 0), "clearing the full-text index on \(index.propertyName)")
        }
    }

    /// Makes the relation rows of `owner` in `tables` exactly `targets` (both directions);
    /// returns whether any row changed.
    @discardableResult
    func replaceRelations(_ tables: RelationTables, owner: Id, targets: [Id]) throws -> Bool {
        let wanted = Set(targets)
        let current = Set(try relatedIds(tables.forward, of: owner, owner: tables.owner))
        let (linked, unlinked) = (wanted.subtracting(current), current.subtracting(wanted))
        for target in linked.sorted() { try addRelation(tables, owner: owner, target: target) }
        for target in unlinked.sorted() { try removeRelation(tables, owner: owner, target: target) }
        return !linked.isEmpty || !unlinked.isEmpty
    }
}
