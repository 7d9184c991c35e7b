import CLMDB

extension Box {
    /// The object with `id`, or nil when there is none.
    ///
    /// ```swift
    /// if let ada = try people.get(1) { print(ada.firstName) }
    /// ```
    public func get(_ id: Id) throws -> E? {
        try reading(empty: nil) { transaction, binding in
            try load(id, in: transaction, binding: binding)
        }
    }

    /// The objects with the given ids that exist, in the order of `ids` (missing ids are
    /// skipped), read from one snapshot.
    ///
    /// ```swift
    /// let found = try people.get([1, 2, 99])   // objects 1 and 2
    /// ```
    public func get(_ ids: [Id]) throws -> [E] {
        try reading(empty: []) { transaction, binding in
            var result: [E] = []
            result.reserveCapacity(ids.count)
            for id in ids {
                if let object = try load(id, in: transaction, binding: binding) { result.append(object) }
            }
            return result
        }
    }

    /// Every object, in id order.
    ///
    /// ```swift
    /// for person in try people.all() { print(person.firstName) }
    /// ```
    public func all() throws -> [E] {
        try reading(empty: []) { transaction, binding in
            var result: [E] = []
            result.reserveCapacity(try count(in: transaction, binding: binding))
            try forEachRecord(in: transaction, binding: binding) { id, bytes in
                var reader = try RecordReader(bytes: bytes, binding: binding, id: id)
                result.append(try E.cofferDecode(id: id, from: &reader))
            }
            return result
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
                try transaction.check(rc, "reading \(E.cofferSchema.name) \(id)")
                return true
            }
        }
    }

    // MARK: Shared by reads and writes

    func load(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> E? {
        var key = IdKey(id)
        return try key.withVal { keyVal in
            var value = MDB_val()
            let rc = mdb_get(transaction.txn, binding.table, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try transaction.check(rc, "reading \(E.cofferSchema.name) \(id)")
            var reader = try RecordReader(bytes: value.bytes, binding: binding, id: id)
            return try E.cofferDecode(id: id, from: &reader)
        }
    }

    func count(in transaction: Transaction, binding: EntityBinding) throws -> Int {
        var stat = MDB_stat()
        try transaction.check(mdb_stat(transaction.txn, binding.table, &stat), "counting \(E.cofferSchema.name)")
        return stat.ms_entries
    }

    /// Calls `body` with every record's id and bytes, in id order.
    func forEachRecord(
        in transaction: Transaction, binding: EntityBinding,
        _ body: (Id, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var cursor: OpaquePointer?
        try transaction.check(mdb_cursor_open(transaction.txn, binding.table, &cursor), "scanning \(E.cofferSchema.name)")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            guard let id = IdKey(key.bytes)?.id else {
                throw CofferError.corruptRecord(entity: E.cofferSchema.name, id: 0, reason: "a key of \(key.mv_size) bytes is not an id")
            }
            try body(id, value.bytes)
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try transaction.check(rc, "scanning \(E.cofferSchema.name)") }
    }
}
