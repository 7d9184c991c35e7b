import CLMDB

// The public reads are inlinable so that decoding and collecting `E` values is specialised
// in the caller's module: unspecialised generic code copies each object through value
// witnesses, which cost more than the whole decode.
extension Box {
    /// The object with `id`, or nil when there is none.
    ///
    /// ```swift
    /// if let ada = try people.get(1) { print(ada.firstName) }
    /// ```
    @inlinable
    public func get(_ id: Id) throws -> E? {
        var found: E?
        try withRecord(id) { reader in found = try E._cofferDecode(id: reader.id, from: &reader) }
        return found
    }

    /// The objects with the given ids that exist, in the order of `ids` (missing ids are
    /// skipped), read from one snapshot.
    ///
    /// ```swift
    /// let found = try people.get([1, 2, 99])   // objects 1 and 2
    /// ```
    @inlinable
    public func get(_ ids: [Id]) throws -> [E] {
        var result: [E] = []
        result.reserveCapacity(ids.count)
        try withRecords(ids) { reader in result.append(try E._cofferDecode(id: reader.id, from: &reader)) }
        return result
    }

    /// Every object, in id order.
    ///
    /// ```swift
    /// for person in try people.all() { print(person.firstName) }
    /// ```
    @inlinable
    public func all() throws -> [E] {
        var result: [E] = []
        try forEachReader(reserve: { result.reserveCapacity($0) }) { reader in
            result.append(try E._cofferDecode(id: reader.id, from: &reader))
        }
        return result
    }

    /// Calls `body` with every object in id order, decoding each as the walk reaches it, so
    /// memory stays flat however many objects there are (``all()`` builds an array of them
    /// all).
    ///
    /// ```swift
    /// var total = 0
    /// try people.forEach { person in total += person.age }
    ///
    /// // Change every object without loading them all:
    /// try store.write {
    ///     try people.forEach { person in
    ///         var older = person
    ///         older.age += 1
    ///         try people.put(&older)
    ///     }
    /// }
    /// ```
    ///
    /// The walk reads one snapshot: the calling `read`/`write` transaction's, or its own.
    /// Inside `store.write`, `body` may put and remove objects of this box: the walk goes on
    /// after the object it visited, sees the transaction's own changes to objects it has not
    /// reached yet, and stops at the highest id stored when it began, so objects inserted
    /// meanwhile are not visited. A throw from `body` ends the walk and is rethrown.
    @inlinable
    public func forEach(_ body: (E) throws -> Void) throws {
        try walkRecords { reader in try body(try E._cofferDecode(id: reader.id, from: &reader)) }
    }

    /// Calls `body` with a reader for each record in id order, up to the highest id stored
    /// when the walk begins; the walk's cursor is LMDB's own, so writes of the same
    /// transaction in `body` move it consistently (see ``forEach(_:)``).
    @usableFromInline
    func walkRecords(_ body: (inout RecordReader) throws -> Void) throws {
        try reading(empty: ()) { transaction, binding in
            let name = binding.schema.name
            let last = try transaction.withCursor(binding.table, "scanning \(name)") { cursor in
                try cursor.last().map { try IdKey.decode($0.key, entity: name) }
            }
            guard let last else { return }
            if transaction.isWrite {
                try transaction.walkWritingBack(binding, upTo: last, body)
                return
            }
            try transaction.forEachRecord(binding) { id, bytes in
                guard id <= last else { return false }
                var reader = try RecordReader(bytes: bytes, layout: binding, id: id)
                try body(&reader)
                return id < last
            }
        }
    }

    /// Calls `body` with a reader for the record of `id`, if it is stored.
    @usableFromInline
    func withRecord(_ id: Id, _ body: (inout RecordReader) throws -> Void) throws {
        try reading(empty: ()) { transaction, binding in
            guard let bytes = try transaction.record(id, table: binding.table, entity: E._cofferSchema.name) else { return }
            var reader = try RecordReader(bytes: bytes, layout: binding, id: id)
            try body(&reader)
        }
    }

    /// Calls `body` with a reader for each stored record of the given ids (missing ids are
    /// skipped), in one snapshot.
    @usableFromInline
    func withRecords(_ ids: [Id], _ body: (inout RecordReader) throws -> Void) throws {
        try reading(empty: ()) { transaction, binding in
            for id in ids {
                guard let bytes = try transaction.record(id, table: binding.table, entity: E._cofferSchema.name) else { continue }
                var reader = try RecordReader(bytes: bytes, layout: binding, id: id)
                try body(&reader)
            }
        }
    }

    /// Calls `reserve` with the object count, then `body` with a reader for every record in
    /// id order, in one snapshot.
    @usableFromInline
    func forEachReader(reserve: (Int) -> Void, _ body: (inout RecordReader) throws -> Void) throws {
        try reading(empty: ()) { transaction, binding in
            reserve(try count(in: transaction, binding: binding))
            try transaction.forEachRecord(binding) { id, bytes in
                var reader = try RecordReader(bytes: bytes, layout: binding, id: id)
                try body(&reader)
                return true
            }
        }
    }

    /// The number of stored objects (read from LMDB's statistics, not by counting).
    ///
    /// ```swift
    /// let n = try people.count()
    /// ```
    public func count() throws -> Int {
        try reading(empty: 0) { transaction, binding in try count(in: transaction, binding: binding) }
    }

    /// Whether an object with `id` is stored.
    ///
    /// ```swift
    /// if try people.contains(7) { ... }
    /// ```
    public func contains(_ id: Id) throws -> Bool {
        try reading(empty: false) { transaction, binding in
            var key = IdKey(id)
            return try key.withVal { keyVal in
                var value = MDB_val()
                let rc = mdb_get(transaction.txn, binding.table, &keyVal, &value)
                if rc == MDB_NOTFOUND { return false }
                try transaction.check(rc, "reading \(E._cofferSchema.name) \(id)")
                return true
            }
        }
    }

    // MARK: Shared by reads and writes

    func count(in transaction: Transaction, binding: EntityBinding) throws -> Int {
        var stat = MDB_stat()
        try transaction.check(mdb_stat(transaction.txn, binding.table, &stat), "counting \(E._cofferSchema.name)")
        return stat.ms_entries
    }

    /// Calls `body` with every record's id and bytes, in id order.
    func forEachRecord(
        in transaction: Transaction, binding: EntityBinding,
        _ body: (Id, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try transaction.forEachRecord(binding) { id, bytes in
            try body(id, bytes)
            return true
        }
    }
}

extension Transaction {
    /// Calls `body` with the stored records of ascending `ids` while it returns true. An id
    /// without a record is skipped, or, when `missing` is given, reported to it (an index
    /// naming an object that is not stored is damage).
    ///
    /// When the ids are a large part of the table, the cursor steps forward to the next id
    /// (usually within the same page) instead of searching the tree from the root for each
    /// one; when they are sparse, each is sought.
    func forEachRecord(_ binding: EntityBinding, ids: [Id], missing: ((Id) throws -> Void)? = nil,
                       _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let first = ids.first else { return }
        var stat = MDB_stat()
        try check(mdb_stat(txn, binding.table, &stat), "counting \(binding.schema.name)")
        // Dense: at most this many steps before seeking instead.
        let steps = ids.count &* 16 >= Int(stat.ms_entries) ? 16 : 0
        let name = binding.schema.name
        try withCursor(binding.table, "reading \(name)") { cursor in
            var entry = try cursor.seek(IdKey(first))
            var key = try entry.map { try IdKey.decode($0.key, entity: name) }
            for id in ids {
                var taken = 0
                while let current = key, current < id, taken < steps {
                    entry = try cursor.next()
                    key = try entry.map { try IdKey.decode($0.key, entity: name) }
                    taken += 1
                }
                if let current = key, current < id {
                    entry = try cursor.seek(IdKey(id))
                    key = try entry.map { try IdKey.decode($0.key, entity: name) }
                }
                guard let found = entry, key == id else {
                    try missing?(id)
                    continue
                }
                guard try body(id, found.value) else { return }
            }
        }
    }

    /// Calls `body` with records of an entity from id `start` on, in id order, while it
    /// returns true. A key that is not an id throws.
    func forEachRecord(_ binding: EntityBinding, from start: Id = 0,
                       _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        let name = binding.schema.name
        try withCursor(binding.table, "scanning \(name)") { cursor in
            var current = start == 0 ? try cursor.first() : try cursor.seek(IdKey(start))
            while let entry = current {
                guard try body(try IdKey.decode(entry.key, entity: name), entry.value) else { return }
                current = try cursor.next()
            }
        }
    }
}
