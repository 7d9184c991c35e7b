import CLMDB

/// A built query: a `Sendable` value that runs any number of times, from any thread, each
/// run in one read snapshot. Setting a parameter changes only that copy.
///
/// ```swift
/// let query = try people.query { Person.firstName.startsWith("S") && Person.age > 18 }
///     .ordered(by: Person.lastName)
///     .build()
/// let page = try query.find(offset: 20, limit: 10)
/// print(query.describe())   // which index, which checks on records, the order
/// ```
public struct Query<E: Entity>: Sendable, CustomDebugStringConvertible {
    let box: Box<E>
    var condition: ConditionNode?
    let orders: [QueryOrder]
    var links: [any QueryLink] = []

    /// Every matching object, in the query's order (id order when it has none).
    ///
    /// ```swift
    /// let adults = try query.find()
    /// ```
    @inlinable
    public func find() throws -> [E] {
        try collect(offset: 0, limit: nil)
    }

    /// One page of matching objects: skips `offset`, returns at most `limit`.
    ///
    /// ```swift
    /// let third = try query.find(offset: 20, limit: 10)
    /// ```
    @inlinable
    public func find(offset: Int, limit: Int) throws -> [E] {
        try collect(offset: offset, limit: limit)
    }

    /// The first matching object in the query's order, or nil.
    ///
    /// ```swift
    /// let youngest = try people.query().ordered(by: Person.age).build().findFirst()
    /// ```
    @inlinable
    public func findFirst() throws -> E? {
        try collect(offset: 0, limit: 1).first
    }

    /// The only matching object, or nil when none matches.
    ///
    /// ```swift
    /// let ada = try people.query { Person.email == "ada@example.com" }.build().findUnique()
    /// ```
    ///
    /// - Throws: ``CofferError/nonUniqueResult(entity:count:)`` when more than one matches.
    @inlinable
    public func findUnique() throws -> E? {
        let found = try collect(offset: 0, limit: nil)
        guard found.count <= 1 else { throw CofferError.nonUniqueResult(entity: E.cofferSchema.name, count: found.count) }
        return found.first
    }

    /// The ids of all matching objects, in the query's order; no object is decoded.
    ///
    /// ```swift
    /// let ids = try query.findIds()
    /// ```
    public func findIds() throws -> [Id] {
        try box.reading(empty: []) { transaction, binding in
            try matches(in: transaction, binding: binding, offset: 0, limit: nil).map(\.id)
        }
    }

    /// The number of matching objects; no object is decoded.
    ///
    /// ```swift
    /// let n = try query.count()
    /// ```
    public func count() throws -> Int {
        try box.reading(empty: 0) { transaction, binding in
            if condition == nil && links.isEmpty { return try box.count(in: transaction, binding: binding) }
            return try matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false).count
        }
    }

    /// Removes every matching object (and its index entries) in one transaction; returns
    /// how many were removed.
    ///
    /// ```swift
    /// let removed = try people.query { Person.age < 0 }.build().remove()
    /// ```
    @discardableResult
    public func remove() throws -> Int {
        try box.writing { transaction, binding in
            let ids = try matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false).map(\.id)
            for id in ids { _ = try box.remove(id, in: transaction, binding: binding) }
            return ids.count
        }
    }

    /// The plan in words: where candidates come from (which index or the id table, or a
    /// scan), which conditions are checked on records, and the ordering.
    ///
    /// ```swift
    /// print(query.describe())
    /// // Person: index on firstName for firstName startsWith "S"; check on each record: ...
    /// ```
    public func describe() -> String {
        do {
            return try box.reading(empty: "\(E.cofferSchema.name): nothing stored yet; every query is empty") { transaction, binding in
                let effective = try effectiveCondition(in: transaction)
                let plan = QueryPlanner.plan(condition: effective, orders: orders, binding: binding, transaction: transaction)
                let steps = links.map(\.summary)
                return Describe.plan(plan, condition: condition, orders: orders, schema: binding.schema)
                    + steps.map { "; " + $0 }.joined()
            }
        } catch {
            return "\(E.cofferSchema.name): cannot describe the query: \(error)"
        }
    }

    /// The same as ``describe()``.
    ///
    /// ```swift
    /// debugPrint(query)
    /// ```
    public var debugDescription: String { describe() }

    // MARK: Execution

    /// Decodes the matches; inlinable so that `E` values are handled by specialised code in
    /// the caller's module (see `Box.get`).
    @inlinable
    func collect(offset: Int, limit: Int?) throws -> [E] {
        var result: [E] = []
        try forEachMatch(offset: offset, limit: limit) { reader in
            result.append(try E.cofferDecode(id: reader.id, from: &reader))
        }
        return result
    }

    /// Calls `body` with a reader for each match, ordered and paged, in one snapshot.
    @usableFromInline
    func forEachMatch(offset: Int, limit: Int?, _ body: (inout RecordReader) throws -> Void) throws {
        try box.reading(empty: ()) { transaction, binding in
            for match in try matches(in: transaction, binding: binding, offset: offset, limit: limit) {
                var reader = try RecordReader(bytes: match.record, binding: binding, id: match.id)
                try body(&reader)
            }
        }
    }

    /// The query's condition with each link step resolved to a condition on the link property.
    func effectiveCondition(in transaction: Transaction) throws -> ConditionNode? {
        var result = condition
        for link in links {
            let linked = try link.condition(in: transaction, store: box.store)
            result = result.map { $0.and(linked) } ?? linked
        }
        return result
    }

    /// A matching record; the bytes are valid until the transaction writes or ends.
    struct Match {
        let id: Id
        let record: UnsafeRawBufferPointer
    }

    /// The matching records, ordered and paged.
    func matches(in transaction: Transaction, binding: EntityBinding, offset: Int, limit: Int?, needsOrder: Bool = true) throws -> [Match] {
        guard offset >= 0, (limit ?? 0) >= 0 else {
            throw CofferError.invalidOperation(message: "\(E.cofferSchema.name) query: offset and limit must not be negative (got \(offset), \(limit ?? 0))")
        }
        let condition = try effectiveCondition(in: transaction)
        let evaluator = try ConditionEvaluator(condition, binding: binding)
        let plan = QueryPlanner.plan(condition: condition, orders: needsOrder ? orders : [], binding: binding, transaction: transaction)
        let sorted = needsOrder && !orders.isEmpty
        // Without a sort, the first offset+limit matches are the answer: stop there.
        var wanted: Int? = nil
        if let limit, !sorted || { if case .indexOrder = plan.source { return true } else { return false } }() {
            wanted = offset + limit
        }
        var found: [Match] = []
        let name = E.cofferSchema.name
        func consider(_ id: Id, _ record: UnsafeRawBufferPointer) -> Bool {
            if evaluator.matches(id: id, record: record) { found.append(Match(id: id, record: record)) }
            return wanted.map { found.count < $0 } ?? true
        }
        switch plan.source {
        case .scan:
            try box.forEachRecordWhile(in: transaction, binding: binding, from: 0) { id, record in consider(id, record) }
        case .ids(let ids):
            for id in Set(ids).sorted() {
                guard let record = try transaction.record(id, table: binding.table, entity: name) else { continue }
                if !consider(id, record) { break }
            }
        case .idRange(let lower, let upper):
            try box.forEachRecordWhile(in: transaction, binding: binding, from: lower) { id, record in
                id <= upper && consider(id, record)
            }
        case .index(let index, let spans):
            var ids: [Id] = []
            for span in spans { try transaction.collectIndexIds(index, span: span, into: &ids) }
            // One exact value lists its ids in id order; anything else needs sorting.
            if spans.count != 1 || { if case .prefix(_, exact: true)? = spans.first { return false } else { return true } }() {
                ids = Set(ids).sorted()
            }
            for id in ids {
                guard let record = try transaction.record(id, table: binding.table, entity: name) else { continue }
                if !consider(id, record) { break }
            }
        case .indexOrder(let index):
            try transaction.walkIndex(index) { id in
                guard let record = try transaction.record(id, table: binding.table, entity: name) else { return true }
                return consider(id, record)
            }
        }
        if sorted, case .indexOrder = plan.source {} else if sorted {
            found = QuerySorter(orders: orders, binding: binding).sort(found)
        }
        let start = min(offset, found.count)
        let end = limit.map { min(start + $0, found.count) } ?? found.count
        return Array(found[start..<end])
    }
}

extension Box {
    /// Calls `body` with records from id `start` on, in id order, while it returns true.
    func forEachRecordWhile(in transaction: Transaction, binding: EntityBinding, from start: Id,
                            _ body: (Id, UnsafeRawBufferPointer) throws -> Bool) throws {
        var cursor: OpaquePointer?
        try transaction.check(mdb_cursor_open(transaction.txn, binding.table, &cursor), "scanning \(E.cofferSchema.name)")
        defer { mdb_cursor_close(cursor) }
        var startKey = IdKey(start)
        try startKey.withVal { key in
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            while rc == 0 {
                guard let id = IdKey(key.bytes)?.id else {
                    throw CofferError.corruptRecord(entity: E.cofferSchema.name, id: 0, reason: "a key of \(key.mv_size) bytes is not an id")
                }
                guard try body(id, value.bytes) else { return }
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try transaction.check(rc, "scanning \(E.cofferSchema.name)") }
        }
    }
}

extension Transaction {
    /// Adds the ids of index entries within `span` to `ids`.
    func collectIndexIds(_ index: IndexBinding, span: IndexSpan, into ids: inout [Id]) throws {
        let start: [UInt8]
        switch span {
        case .prefix(let prefix, _): start = prefix
        case .range(let lower, _): start = lower
        }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, index.database, &cursor), "reading the index on \(index.property.name)")
        defer { mdb_cursor_close(cursor) }
        var seek = start
        try seek.withUnsafeMutableBytes { raw in
            var key = MDB_val(UnsafeRawBufferPointer(raw))
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            while rc == 0 {
                let bytes = key.bytes
                guard bytes.count >= 8 else { break }
                let valuePart = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 8)])
                switch span {
                case .prefix(let prefix, let exact):
                    guard exact ? valuePart.elementsEqual(prefix) : valuePart.starts(with: prefix) else { return }
                case .range(_, let upper):
                    // Inclusive: cut strings equal to a cut bound are candidates, rechecked later.
                    if let upper, upper.withUnsafeBytes({ ByteSearch.order(valuePart, $0) }) > 0 { return }
                }
                ids.append(Id(bigEndian: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - 8)...]).loadUnaligned(as: UInt64.self)))
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try check(rc, "reading the index on \(index.property.name)") }
        }
    }

    /// Calls `body` with the ids of an index in value order, while it returns true.
    func walkIndex(_ index: IndexBinding, _ body: (Id) throws -> Bool) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, index.database, &cursor), "reading the index on \(index.property.name)")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val(), value = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            let bytes = key.bytes
            guard bytes.count >= 8 else { break }
            let id = Id(bigEndian: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - 8)...]).loadUnaligned(as: UInt64.self))
            guard try body(id) else { return }
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "reading the index on \(index.property.name)") }
    }
}
