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
            let (sum, overflow) = offset.addingReportingOverflow(limit)
            wanted = overflow ? nil : sum
        }
        var found: [Match] = []
        let name = E.cofferSchema.name
        func consider(_ id: Id, _ record: UnsafeRawBufferPointer) throws -> Bool {
            if try evaluator.matches(id: id, record: RecordFields(bytes: record, entity: name, id: id)) { found.append(Match(id: id, record: record)) }
            return wanted.map { found.count < $0 } ?? true
        }
        switch plan.source {
        case .scan:
            try transaction.forEachRecord(binding) { id, record in try consider(id, record) }
        case .ids(let ids):
            for id in Set(ids).sorted() {
                guard let record = try transaction.record(id, table: binding.table, entity: name) else { continue }
                if try !consider(id, record) { break }
            }
        case .idRange(let lower, let upper):
            try transaction.forEachRecord(binding, from: lower) { id, record in
                try id <= upper && consider(id, record)
            }
        case .index(let index, let spans):
            var ids: [Id] = []
            for span in spans { try transaction.collectIndexIds(index, span: span, entity: name, into: &ids) }
            // One exact value lists its ids in id order; anything else needs sorting.
            if spans.count != 1 || { if case .prefix(_, exact: true)? = spans.first { return false } else { return true } }() {
                ids = Set(ids).sorted()
            }
            for id in ids {
                if try !consider(id, try indexedRecord(id, index: index, transaction: transaction, binding: binding)) { break }
            }
        case .indexOrder(let index):
            try transaction.walkIndex(index, entity: name) { id in
                try consider(id, try indexedRecord(id, index: index, transaction: transaction, binding: binding))
            }
        }
        if sorted, case .indexOrder = plan.source {} else if sorted {
            found = try QuerySorter(orders: orders, binding: binding).sort(found)
        }
        let start = min(offset, found.count)
        // `limit` may be anything up to Int.max: no addition that can overflow.
        let end = limit.map { found.count - start > $0 ? start + $0 : found.count } ?? found.count
        return Array(found[start..<end])
    }

    /// The record an index entry points to; an entry without a record is damage (index and
    /// table change in one transaction, so they always agree in an intact store).
    private func indexedRecord(_ id: Id, index: IndexBinding, transaction: Transaction, binding: EntityBinding) throws -> UnsafeRawBufferPointer {
        guard let record = try transaction.record(id, table: binding.table, entity: binding.schema.name) else {
            throw CofferError.corruptRecord(entity: binding.schema.name, id: id,
                                            reason: "the index on \(index.property.name) lists this id, which is not stored")
        }
        return record
    }
}

extension Transaction {
    /// Adds the ids of index entries within `span` to `ids`.
    func collectIndexIds(_ index: IndexBinding, span: IndexSpan, entity: String, into ids: inout [Id]) throws {
        let start: [UInt8]
        switch span {
        case .prefix(let prefix, _): start = prefix
        case .range(let lower, _): start = lower
        }
        try withCursor(index.database, "reading the index on \(entity).\(index.property.name)") { cursor in
            var current = try cursor.seek(start)
            while let raw = current {
                let entry = try IndexEntry.decode(raw.key, index: index, entity: entity)
                switch span {
                case .prefix(let prefix, let exact):
                    guard exact ? entry.value.elementsEqual(prefix) : entry.value.starts(with: prefix) else {
                        // A shorter value whose id bytes continue the prefix sorts inside the span.
                        guard raw.key.starts(with: prefix), entry.value.count < prefix.count else { return }
                        current = try cursor.next()
                        continue
                    }
                case .range(_, let upper):
                    // Inclusive: cut strings equal to a cut bound are candidates, rechecked later.
                    if let upper, upper.withUnsafeBytes({ ByteSearch.order(entry.value, $0) }) > 0 { return }
                }
                ids.append(entry.id)
                current = try cursor.next()
            }
        }
    }

    /// Calls `body` with the ids of an index in value order, while it returns true.
    func walkIndex(_ index: IndexBinding, entity: String, _ body: (Id) throws -> Bool) throws {
        try withCursor(index.database, "reading the index on \(entity).\(index.property.name)") { cursor in
            var current = try cursor.first()
            while let raw = current {
                guard try body(try IndexEntry.decode(raw.key, index: index, entity: entity).id) else { return }
                current = try cursor.next()
            }
        }
    }
}
