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
        var attempts = 0
        if E._cofferPutChangesOnlyIds {
            // Only the id can change: it is all there is to restore. (Copying the whole
            // object on every update, for a restore that rarely happens, is not worth it.)
            let originalId = entity.id
            do {
                return try writing { transaction, binding in
                    attempts += 1
                    if attempts > 1 { entity.id = originalId }  // a retry after map growth starts from the same state
                    return try put(&entity, in: transaction, binding: binding)
                }
            } catch {
                entity.id = originalId
                throw error
            }
        }
        let original = entity
        do {
            return try writing { transaction, binding in
                attempts += 1
                if attempts > 1 { entity = original }
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
        // What to restore on failure: the ids of the elements put so far (collected as the
        // loop reaches them: no pass over the whole array first), or, when a put changes more
        // (timestamps, links), whole values. Decided once the binding is known.
        var originalIds: [Id] = []
        var originals: [E]?
        func restore() {
            if let originals { entities = originals; return }
            for (index, id) in originalIds.enumerated() { entities[index].id = id }
        }
        do {
            try writing { transaction, binding in
                if originals == nil && originalIds.isEmpty && !binding.putChangesOnlyIds { originals = entities }
                restore()  // a retry after map growth starts from the same state
                let collectIds = originals == nil
                if collectIds { originalIds.reserveCapacity(entities.count) }
                // Through the buffer: this generic code would otherwise copy each element out
                // of the array and back through the type's value witnesses.
                try entities.withUnsafeMutableBufferPointer { buffer in
                    guard let first = buffer.baseAddress else { return }
                    // The ids are collected in a local (moved out and back, not copied): the
                    // captured variable costs two runtime exclusivity checks per element.
                    var collected: [Id] = []
                    swap(&collected, &originalIds)
                    defer { swap(&collected, &originalIds) }
                    for index in buffer.indices {
                        // Through the element's address: `buffer[index].id` copied the object.
                        let element = first + index
                        if collectIds && index == collected.count { collected.append(element.pointee.id) }
                        try put(&element.pointee, in: transaction, binding: binding)
                    }
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
        return copies.map { $0.id }
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
            // Nothing stored: nothing to clear, and the transaction stays empty (it commits no
            // transaction id, which observers would take for another process's commit).
            guard count > 0 else { return 0 }
            try transaction.removeAllObjects(binding: binding)
            for id in removedIds { transaction.changes.recordRemove(binding.schema.storedName, id) }
            if count > 0 { transaction.changes.recordUnlistedChange() }
            return count
        }
    }

    // MARK: Changing every object

    /// Changes every object in place: calls `body` with each object in id order as an
    /// `inout` value and stores it back, all in one write transaction (the calling
    /// `store.write`'s, or its own). Returns how many objects were visited.
    ///
    /// ```swift
    /// // Everyone is a year older; one transaction, one object in memory at a time.
    /// try people.modifyEach { person in person.age += 1 }
    ///
    /// // Objects a condition picks: leave the others as they are, or query first.
    /// try people.modifyEach { person in
    ///     if person.city == "Paris" { person.city = "Paris, France" }
    /// }
    /// ```
    ///
    /// It does what `forEach` with a `put` of each object does inside `store.write` (see
    /// ``forEach(_:)``), with the same rules: each stored object is a put (indexes, unique
    /// constraints, `@UpdatedAt`, links and relations are kept as `put` keeps them), and
    /// objects the transaction inserts meanwhile are not visited. It is faster: each object
    /// is decoded once, changed where it is and written back at the walk's cursor, without a
    /// look-up of the transaction, the box's binding or the record per object.
    ///
    /// Rules and consequences:
    /// - `body` must not change the object's `id`: that throws
    ///   ``CofferError/misuse(_:)`` (`.idChangedInModify`) naming the entity and both ids, and
    ///   nothing of that object is written. (To store an object under another id, `put` a copy.)
    /// - A throw from `body` or from a put ends the walk and is rethrown. In its own
    ///   transaction nothing is stored; inside `store.write` the objects stored so far stay
    ///   in the transaction, whose closure decides (a throw out of it rolls everything back).
    /// - When the store must grow its map, its own transaction runs again from the first
    ///   object, on the objects as stored: `body` sees each object as a first run would.
    ///   Keep side effects outside the object (counters, logs) out of `body`, or count
    ///   with the returned value.
    @inlinable @discardableResult
    public func modifyEach(_ body: (inout E) throws -> Void) throws -> Int {
        try modifyRecords { reader, storeBack in
            var object = try E._cofferDecode(id: reader.id, from: &reader)
            try body(&object)
            try storeBack(&object)
        }
    }

    /// Reads the object with `id`, lets `body` change it and stores it back, in one write
    /// transaction; returns the object as stored (with `@UpdatedAt` and other put effects).
    ///
    /// ```swift
    /// let older = try people.modify(ada.id) { person in person.age += 1 }
    /// ```
    ///
    /// Rules and consequences:
    /// - No object with `id`: ``CofferError/notFound(entity:id:)`` naming the entity and the
    ///   id, and nothing is written (`body` is not called).
    /// - The store is a put: indexes, unique constraints, links and relations are kept as
    ///   `put(&object)` keeps them.
    /// - `body` must not change the object's `id`: that throws ``CofferError/misuse(_:)``
    ///   (`.idChangedInModify`) and nothing is written.
    /// - A throw from `body` or from the put is rethrown. In its own transaction nothing is
    ///   stored; inside `store.write` the transaction's closure decides.
    /// - When the store must grow its map, the transaction runs again and `body` sees the
    ///   object as stored, as a first run would.
    @inlinable @discardableResult
    public func modify(_ id: Id, _ body: (inout E) throws -> Void) throws -> E {
        try modifyRecord(id) { reader, storeBack in
            var object = try E._cofferDecode(id: reader.id, from: &reader)
            try body(&object)
            try storeBack(&object)
            return object
        }
    }

    /// Calls `visit` with a reader for the record of `id` and a function that stores the
    /// object back, in one write transaction; throws `notFound` when no record has `id`.
    @usableFromInline
    func modifyRecord(_ id: Id, _ visit: (inout RecordReader, (inout E) throws -> Void) throws -> E) throws -> E {
        try writing { transaction, binding in
            let name = binding.schema.name
            guard let bytes = try transaction.record(id, table: binding.table, entity: name) else {
                throw CofferError.notFound(entity: name, id: id)
            }
            var reader = try RecordReader(bytes: bytes, layout: binding, id: id)
            return try visit(&reader) { object in
                guard object.id == id else {
                    throw CofferError.misuse(.idChangedInModify(entity: name, from: id, to: object.id))
                }
                try put(&object, in: transaction, binding: binding)
            }
        }
    }

    /// Calls `visit` with a reader for each record in id order (up to the highest id stored
    /// when the walk begins) and a function that stores the visited object back; returns
    /// the number of records visited. Walks with the transaction's table cursor, so the
    /// put writes in place at the cursor (see `Transaction.walkWritingBack`).
    @usableFromInline
    func modifyRecords(_ visit: (inout RecordReader, (inout E) throws -> Void) throws -> Void) throws -> Int {
        try writing { transaction, binding in
            let name = binding.schema.name
            let last = try transaction.withCursor(binding.table, "changing \(name)") { cursor in
                try cursor.last().map { try IdKey.decode($0.key, entity: name) }
            }
            guard let last else { return 0 }
            var visited = 0
            try transaction.walkWritingBack(binding, upTo: last) { reader in
                let id = reader.id
                try visit(&reader) { object in
                    guard object.id == id else {
                        throw CofferError.misuse(.idChangedInModify(entity: name, from: id, to: object.id))
                    }
                    try put(&object, in: transaction, binding: binding)
                }
                visited += 1
            }
            return visited
        }
    }

    // MARK: Shared by writes

    /// Stores one object in `transaction` through the one mutation path
    /// (`Transaction.storeObject`): unsaved link targets first, then the record with its
    /// indexes, unique constraints and timestamps, then the relations. Checks come before
    /// any change, so a put that throws leaves the transaction as it was.
    @discardableResult
    func put(_ entity: inout E, in transaction: Transaction, binding: EntityBinding) throws -> Id {
        // Unsaved link targets first, so the links can hold their ids.
        try E._cofferPutRelations(&entity, in: store)
        var id = entity.id
        // Through a pointer: read from the closure's capture of `entity`, the object was
        // copied (and the copy destroyed) for every put.
        try withUnsafeMutablePointer(to: &entity) { object -> Void in
            try transaction.storeObject(id: &id, binding: binding) { writer, stamps in
                if let stamps { E._cofferStamp(&object.pointee, createdAt: stamps.createdAt, updatedAt: stamps.updatedAt) }
                E._cofferEncode(&object.pointee, to: &writer)
            }
        }
        entity.id = id
        try E._cofferPutLinks(&entity, in: store)
        return id
    }

    /// Removes one object (see `Transaction.removeObject`).
    func remove(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> Bool {
        try transaction.removeObject(id, binding: binding)
    }
}
