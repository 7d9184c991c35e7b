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
    /// When the put fails in its own transaction, `entity.id` is left as it was.
    @discardableResult
    public func put(_ entity: inout E) throws -> Id {
        let originalId = entity.id
        do {
            return try writing { transaction, binding in
                entity.id = originalId  // a retry after map growth starts from the same state
                return try put(&entity, in: transaction, binding: binding)
            }
        } catch {
            entity.id = originalId
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
        let originalIds = entities.map(\.id)
        do {
            try writing { transaction, binding in
                for index in entities.indices {
                    entities[index].id = originalIds[index]
                    try put(&entities[index], in: transaction, binding: binding)
                }
            }
        } catch {
            for index in entities.indices { entities[index].id = originalIds[index] }
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
            let count = try count(in: transaction, binding: binding)
            try transaction.clearAllLinks(of: binding)
            try transaction.dropManyToMany(of: binding)
            try transaction.check(mdb_drop(transaction.txn, binding.table, 0), "removing all \(E.cofferSchema.name)")
            for index in binding.indexes {
                try transaction.check(mdb_drop(transaction.txn, index.database, 0), "clearing the index on \(index.property.name)")
            }
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
        var previous: UnsafeRawBufferPointer?
        if isNew {
            entity.id = try transaction.nextId(for: binding)
        } else {
            try transaction.noteStoredId(entity.id, for: binding)
            if !binding.indexes.isEmpty || binding.createdAtStoredId != nil {
                previous = try transaction.record(entity.id, table: binding.table, entity: name)
            }
        }
        let indexes = binding.indexes
        transaction.prepareKeyBuffers(count: indexes.count)
        if let previous {
            for (position, index) in indexes.enumerated() { index.writeKey(in: previous, to: &transaction.oldKeys[position]) }
        }
        if binding.hasTimestamps {
            let now = Date()
            var created: Date? = now
            if let previous, let storedId = binding.createdAtStoredId,
               let field = RecordFields(bytes: previous).field(storedId),
               let seconds = FieldValue.double(field.kind, field.payload) {
                created = Date(timeIntervalSinceReferenceDate: seconds)
            }
            E.cofferStamp(&entity, createdAt: created, updatedAt: now)
        }
        let buffer = store.recordBuffer
        var writer = RecordWriter(buffer: buffer, storedIds: binding.storedIds)
        E.cofferEncode(entity, to: &writer)
        buffer.adopt(writer)
        let record = writer.bytes
        for index in binding.indexes where index.isUnique {
            guard RecordFields(bytes: record).field(index.storedId) != nil else { continue }  // nil never collides
            let clashes = try transaction.matchingIds(index, valueOf: record, table: binding.table, entity: name, excluding: entity.id)
            guard let clash = clashes.first else { continue }
            switch index.property.onConflict ?? .fail {
            case .fail:
                if isNew { entity.id = 0 }
                throw CofferError.uniqueViolation(entity: name, property: index.property.name,
                                                  value: RecordFields.describe(index, in: record))
            case .replace:
                for other in clashes { _ = try remove(other, in: transaction, binding: binding) }
                // Removing reused the key buffers and moved pages: read this object's old keys again.
                if previous != nil, let again = try transaction.record(entity.id, table: binding.table, entity: name) {
                    for (position, index) in indexes.enumerated() { index.writeKey(in: again, to: &transaction.oldKeys[position]) }
                }
            case .update:
                guard !redirected else {
                    throw CofferError.uniqueViolation(entity: name, property: index.property.name,
                                                      value: RecordFields.describe(index, in: record) + " (held by another object than the one being updated)")
                }
                // Become the stored object: same id, so references to it stay valid.
                entity.id = clash
                return try put(&entity, in: transaction, binding: binding, redirected: true)
            }
        }
        for (position, index) in indexes.enumerated() { index.writeKey(in: record, to: &transaction.newKeys[position]) }
        var key = IdKey(entity.id)
        let id = entity.id
        try key.withVal { keyVal in
            var value = MDB_val(record)
            // A new id is above every stored key (the sequence never falls behind the
            // table), so LMDB can append without searching.
            let flags = isNew ? UInt32(MDB_APPEND) : 0
            try transaction.check(mdb_put(transaction.txn, binding.table, &keyVal, &value, flags), "storing \(name) \(id)")
        }
        for (position, index) in indexes.enumerated() {
            if previous != nil {
                guard transaction.oldKeys[position] != transaction.newKeys[position] else { continue }
                try transaction.deleteIndexEntry(index, key: transaction.oldKeys[position], id: id)
            }
            try transaction.insertIndexEntry(index, key: transaction.newKeys[position], id: id)
        }
        try E.cofferPutLinks(&entity, in: store)
        return id
    }

    /// Removes one object and its index entries.
    func remove(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> Bool {
        let name = E.cofferSchema.name
        if !binding.indexes.isEmpty {
            guard let record = try transaction.record(id, table: binding.table, entity: name) else { return false }
            let indexes = binding.indexes
            transaction.prepareKeyBuffers(count: indexes.count)
            // All keys first: deleting changes pages and invalidates `record`.
            for (position, index) in indexes.enumerated() { index.writeKey(in: record, to: &transaction.oldKeys[position]) }
            for (position, index) in indexes.enumerated() {
                try transaction.deleteIndexEntry(index, key: transaction.oldKeys[position], id: id)
            }
        }
        var key = IdKey(id)
        let removed = try key.withVal { keyVal in
            let rc = mdb_del(transaction.txn, binding.table, &keyVal, nil)
            if rc == MDB_NOTFOUND { return false }
            try transaction.check(rc, "removing \(name) \(id)")
            return true
        }
        if removed {
            try transaction.clearLinks(to: id, of: binding)
            try transaction.removeManyToMany(of: id, binding: binding)
        }
        return removed
    }
}
