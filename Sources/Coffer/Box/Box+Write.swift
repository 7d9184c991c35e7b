import CLMDB
import Foundation

extension Box {
    /// Stores `entity`: inserts it when its id is 0 (and assigns the new id to it), updates
    /// it otherwise. A non-zero id that is not stored yet is inserted under that id.
    ///
    /// ```swift
    /// var ada = Person(firstName: "Ada", age: 36)
    /// try people.put(&ada)      // ada.id == 1
    /// ada.age = 37
    /// try people.put(&ada)      // updates object 1
    /// ```
    ///
    /// When the put fails in its own transaction, `entity` is left exactly as it was (its
    /// id, its links' target ids, its relations' pending changes). Inside a `store.write`
    /// that rolls back later, `entity` keeps the id it was given; that id is never handed out
    /// again in this process, so putting `entity` again stores it under the same id, as a
    /// first put would have.
    @discardableResult
    public func put(_ entity: inout E) throws -> Id {
        let original = entity
        do {
            return try writing { transaction, binding in
                entity = original  // a retry after map growth starts from the same state
                return try put(&entity, in: transaction, binding: binding)
            }
        } catch {
            entity = original
            throw error
        }
    }

    /// Stores a copy of `entity` and returns its id (the new one for an insert).
    ///
    /// ```swift
    /// let id = try people.put(Person(firstName: "Grace", age: 45))
    /// ```
    @discardableResult
    public func put(_ entity: E) throws -> Id {
        var copy = entity
        return try put(&copy)
    }

    /// Stores all `entities` in one transaction and assigns the new ids to them. Either all
    /// are stored or, on an error, none (and the ids stay as they were).
    ///
    /// ```swift
    /// var batch = [Person(firstName: "A", age: 1), Person(firstName: "B", age: 2)]
    /// try people.put(&batch)
    /// ```
    public func put(_ entities: inout [E]) throws {
        // What to restore on failure: the ids, or (when a put changes more: timestamps,
        // links) whole values. Decided once the binding is known.
        var originalIds: [Id]?
        var originals: [E]?
        func restore() {
            if let originals { entities = originals }
            if let originalIds { for index in entities.indices { entities[index].id = originalIds[index] } }
        }
        do {
            try writing { transaction, binding in
                if originalIds == nil && originals == nil {
                    if binding.putChangesOnlyIds { originalIds = entities.map(\.id) } else { originals = entities }
                }
                restore()  // a retry after map growth starts from the same state
                for index in entities.indices {
                    try put(&entities[index], in: transaction, binding: binding)
                }
            }
        } catch {
            restore()
            throw error
        }
    }

    /// Stores copies of all `entities` in one transaction and returns their ids.
    ///
    /// ```swift
    /// let ids = try people.put([a, b, c])
    /// ```
    @discardableResult
    public func put(_ entities: [E]) throws -> [Id] {
        var copies = entities
        try put(&copies)
        return copies.map(\.id)
    }

    /// Removes the object with `id`; returns whether there was one.
    ///
    /// ```swift
    /// let removed = try people.remove(7)
    /// ```
    @discardableResult
    public func remove(_ id: Id) throws -> Bool {
        try writing { transaction, binding in try remove(id, in: transaction, binding: binding) }
    }

    /// Removes the objects with the given ids in one transaction; returns how many existed.
    ///
    /// ```swift
    /// let n = try people.remove([1, 2, 3])
    /// ```
    @discardableResult
    public func remove(_ ids: [Id]) throws -> Int {
        try writing { transaction, binding in
            var removed = 0
            for id in ids where try remove(id, in: transaction, binding: binding) { removed += 1 }
            return removed
        }
    }

    /// Removes `entity` (by its id); returns whether it was stored.
    ///
    /// ```swift
    /// try people.remove(ada)
    /// ```
    @discardableResult
    public func remove(_ entity: E) throws -> Bool {
        try remove(entity.id)
    }

    /// Removes every object; returns how many there were. Ids keep ascending afterwards:
    /// they are never reused.
    ///
    /// ```swift
    /// try people.removeAll()
    /// ```
    @discardableResult
    public func removeAll() throws -> Int {
        try writing { transaction, binding in
            // The ids are needed only when a change handler listens; the count comes from LMDB.
            var removedIds: [Id] = []
            if transaction.changes.isRecording {
                try forEachRecord(in: transaction, binding: binding) { id, _ in removedIds.append(id) }
            }
            let count = try count(in: transaction, binding: binding)
            try transaction.clearAllLinks(of: binding)
            try transaction.dropManyToMany(of: binding)
            try transaction.check(mdb_drop(transaction.txn, binding.table, 0), "removing all \(E.cofferSchema.name)")
            for index in binding.indexes {
                try transaction.check(mdb_drop(transaction.txn, index.database, 0), "clearing the index on \(index.property.name)")
            }
            for index in binding.textIndexes {
                // Pending postings of this transaction go with the rest.
                transaction.discardTextBuffer(index.database)
                try transaction.check(mdb_drop(transaction.txn, index.database, 0), "clearing the full-text index on \(index.propertyName)")
            }
            for id in removedIds { transaction.changes.recordRemove(binding.schema.storedName, id) }
            if count > 0 { transaction.changes.recordUnlistedChange() }
            return count
        }
    }

    // MARK: Shared by writes

    /// Encodes and stores one object in `transaction`, keeping its indexes, unique
    /// constraints and timestamps. Checks come before any change, so a put that throws
    /// leaves the transaction as it was.
    @discardableResult
    func put(_ entity: inout E, in transaction: Transaction, binding: EntityBinding, redirected: Bool = false) throws -> Id {
        let name = E.cofferSchema.name
        // Unsaved link targets first, so the links can hold their ids.
        try E.cofferPutRelations(&entity, in: store)
        let isNew = entity.id == 0
        var previous: RecordFields?
        var canAppend = false
        if isNew {
            (entity.id, canAppend) = try transaction.nextId(for: binding)
        } else {
            try transaction.noteStoredId(entity.id, for: binding)
            previous = try transaction.record(entity.id, table: binding.table, entity: name)
                .map { RecordFields(bytes: $0, entity: name, id: entity.id) }
        }
        let indexes = binding.indexes
        transaction.prepareKeyBuffers(count: indexes.count)
        // A damaged previous record cannot say which index entries it has: they are found
        // by id instead, so overwriting damage repairs the indexes too.
        var previousIsDamaged = false
        // Fields of properties this build does not declare (retired here, or added by a
        // newer build) are carried into the new record, so no build loses another's data.
        var carried: [(UInt16, RecordFields.Field)] = []
        if let previous {
            do {
                carried = try transaction.readStoredRecord(previous, binding: binding, carrying: true)
            } catch CofferError.corruptRecord {
                previousIsDamaged = true
            }
        }
        if binding.hasTimestamps {
            let now = Date()
            var created: Date? = now
            if let previous, !previousIsDamaged, let storedId = binding.createdAtStoredId,
               let field = try previous.field(storedId),
               let seconds = FieldValue.double(field.kind, field.payload) {
                created = Date(timeIntervalSinceReferenceDate: seconds)
            }
            E.cofferStamp(&entity, createdAt: created, updatedAt: now)
        }
        let buffer = store.recordBuffer
        var writer = RecordWriter(buffer: buffer, storedIds: binding.storedIds)
        E.cofferEncode(entity, to: &writer)
        for (fieldId, field) in carried { writer.appendRaw(fieldId, field) }
        buffer.adopt(writer)
        let record = RecordFields(bytes: writer.bytes, entity: name, id: entity.id)
        for index in binding.indexes where index.isUnique {
            guard try record.field(index.storedId) != nil else { continue }  // nil never collides
            let clashes = try transaction.matchingIds(index, valueOf: record, table: binding.table, excluding: entity.id)
            guard let clash = clashes.first else { continue }
            switch index.property.onConflict ?? .fail {
            case .fail:
                if isNew { entity.id = 0 }
                throw CofferError.uniqueViolation(entity: name, property: index.property.name, value: try record.describe(index))
            case .replace:
                for other in clashes { _ = try remove(other, in: transaction, binding: binding) }
                // Removing reused the key buffers and moved pages: read this object's old keys again.
                if previous != nil, !previousIsDamaged, let again = try transaction.record(entity.id, table: binding.table, entity: name) {
                    _ = try transaction.readStoredRecord(RecordFields(bytes: again, entity: name, id: entity.id), binding: binding, carrying: false)
                }
            case .update:
                guard !redirected else {
                    throw CofferError.uniqueViolation(entity: name, property: index.property.name,
                                                      value: try record.describe(index) + " (held by another object than the one being updated)")
                }
                // Become the stored object: same id, so references to it stay valid.
                entity.id = clash
                return try put(&entity, in: transaction, binding: binding, redirected: true)
            }
        }
        for (position, index) in indexes.enumerated() { try index.writeKey(in: record, to: &transaction.newKeys[position]) }
        // Full-text postings before and after; the stored record is read again here because
        // a `.replace` above may have moved its page.
        let oldPostings = try transaction.textPostings(of: previous == nil ? nil : entity.id, binding: binding)
        var key = IdKey(entity.id)
        let id = entity.id
        try key.withVal { keyVal in
            var value = MDB_val(record.bytes)
            // A new id above every stored key can be appended without a search.
            let flags = canAppend ? UInt32(MDB_APPEND) : 0
            try transaction.check(mdb_put(transaction.txn, binding.table, &keyVal, &value, flags), "storing \(name) \(id)")
        }
        transaction.changes.recordPut(binding.schema.storedName, id, isInsert: previous == nil)
        for (position, index) in indexes.enumerated() {
            if previousIsDamaged {
                try transaction.deleteIndexEntries(index, of: id, entity: name)
            } else if previous != nil {
                guard transaction.oldKeys[position] != transaction.newKeys[position] else { continue }
                try transaction.deleteIndexEntry(index, key: transaction.oldKeys[position], id: id)
            }
            try transaction.insertIndexEntry(index, key: transaction.newKeys[position], id: id)
        }
        try transaction.applyTextPostings(of: id, binding: binding, old: oldPostings, new: record)
        try E.cofferPutLinks(&entity, in: store)
        return id
    }

    /// Removes one object and its index entries. A damaged record is removed too, its index
    /// entries found by id.
    func remove(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> Bool {
        let name = E.cofferSchema.name
        if !binding.indexes.isEmpty {
            guard let bytes = try transaction.record(id, table: binding.table, entity: name) else { return false }
            let indexes = binding.indexes
            // All keys first: deleting changes pages and invalidates the record's bytes.
            var isDamaged = false
            do {
                _ = try transaction.readStoredRecord(RecordFields(bytes: bytes, entity: name, id: id), binding: binding, carrying: false)
            } catch CofferError.corruptRecord {
                isDamaged = true
            }
            for (position, index) in indexes.enumerated() {
                if isDamaged {
                    try transaction.deleteIndexEntries(index, of: id, entity: name)
                } else {
                    try transaction.deleteIndexEntry(index, key: transaction.oldKeys[position], id: id)
                }
            }
        }
        // Read before the record's page changes; nil when nothing was stored.
        let oldPostings = try transaction.textPostings(of: id, binding: binding)
        var key = IdKey(id)
        let removed = try key.withVal { keyVal in
            let rc = mdb_del(transaction.txn, binding.table, &keyVal, nil)
            if rc == MDB_NOTFOUND { return false }
            try transaction.check(rc, "removing \(name) \(id)")
            return true
        }
        if removed {
            try transaction.applyTextPostings(of: id, binding: binding, old: oldPostings, new: nil)
            transaction.changes.recordRemove(binding.schema.storedName, id)
            try transaction.clearLinks(to: id, of: binding)
            try transaction.removeManyToMany(of: id, binding: binding)
        }
        return removed
    }
}
