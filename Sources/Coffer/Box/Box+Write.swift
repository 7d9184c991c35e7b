import CLMDB

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
            try transaction.check(mdb_drop(transaction.txn, binding.table, 0), "removing all \(E.cofferSchema.name)")
            return count
        }
    }

    // MARK: Shared by writes

    /// Encodes and stores one object in `transaction`.
    @discardableResult
    func put(_ entity: inout E, in transaction: Transaction, binding: EntityBinding) throws -> Id {
        let isNew = entity.id == 0
        if isNew {
            entity.id = try transaction.nextId(for: binding)
        } else {
            try transaction.noteStoredId(entity.id, for: binding)
        }
        let buffer = store.recordBuffer
        var writer = RecordWriter(buffer: buffer, storedIds: binding.storedIds)
        E.cofferEncode(entity, to: &writer)
        buffer.adopt(writer)
        var key = IdKey(entity.id)
        let id = entity.id
        try key.withVal { keyVal in
            var value = MDB_val(writer.bytes)
            // A new id is above every stored key (the sequence never falls behind the
            // table), so LMDB can append without searching.
            let flags = isNew ? UInt32(MDB_APPEND) : 0
            try transaction.check(mdb_put(transaction.txn, binding.table, &keyVal, &value, flags),
                                  "storing \(E.cofferSchema.name) \(id)")
        }
        return id
    }

    func remove(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> Bool {
        var key = IdKey(id)
        return try key.withVal { keyVal in
            let rc = mdb_del(transaction.txn, binding.table, &keyVal, nil)
            if rc == MDB_NOTFOUND { return false }
            try transaction.check(rc, "removing \(E.cofferSchema.name) \(id)")
            return true
        }
    }
}
