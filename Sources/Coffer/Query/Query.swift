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
    /// The condition as built or last set. For a look-up (`lookUpPosition >= 0`) its one
    /// value is `lookUpValue` instead, which `setParameter` replaces alone.
    private var builtCondition: ConditionNode?
    /// When the condition is one equality of a property with one value (the shape of a
    /// parameterised look-up loop): the property's schema position, else -1.
    private(set) var lookUpPosition = -1
    /// The value a look-up compares with (`.null` when `lookUpPosition < 0`).
    private(set) var lookUpValue = QueryValue.null
    let orders: [QueryOrder]
    /// The page a selector query asked for (`skip`, `limit`): `find()`, `findFirst()` and
    /// `findIds()` return only it; `find(offset:limit:)` pages explicitly instead.
    @usableFromInline var skip = 0
    @usableFromInline var limit: Int? = nil
    /// The plan of a parameterised look-up, kept across runs and parameter changes.
    let planMemo = QueryPlanMemo()

    init(box: Box<E>, condition: ConditionNode?, orders: [QueryOrder], skip: Int = 0, limit: Int? = nil) {
        self.box = box
        self.orders = orders
        self.skip = skip
        self.limit = limit
        self.condition = condition
    }

    /// The query's condition. A look-up keeps its value apart (see `lookUpPosition`), so
    /// that a loop of `setParameter` and `findFirst` neither copies nor rebuilds the
    /// condition tree per look-up; reading the condition puts the value back into its leaf.
    var condition: ConditionNode? {
        get { ConditionNode.withLookUpValue(builtCondition, position: lookUpPosition, value: lookUpValue) }
        set {
            builtCondition = newValue
            if case .leaf(let leaf)? = newValue, case .compare(.equal) = leaf.op, leaf.path.isEmpty, leaf.values.count == 1 {
                lookUpPosition = leaf.position
                lookUpValue = leaf.values[0]
            } else {
                lookUpPosition = -1
                lookUpValue = .null
            }
        }
    }

    /// Replaces a look-up's value when `position` is the property it compares (the
    /// parameter's type is the property's own, which the equality takes as it is); returns
    /// whether it did.
    mutating func replaceLookUpValue(position: Int, with value: QueryValue) -> Bool {
        guard position == lookUpPosition else { return false }
        lookUpValue = value
        return true
    }

    /// Every matching object, in the query's order (id order when it has none).
    ///
    /// ```swift
    /// let adults = try query.find()
    /// ```
    @inlinable
    public func find() throws -> [E] {
        try collect(offset: skip, limit: limit)
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
        var first: E?
        try withFirstMatch { reader in first = try E._cofferDecode(id: reader.id, from: &reader) }
        return first
    }

    /// Calls `body` with each matching object in the query's order (and page, for a
    /// selector's `skip`/`limit`), decoding each as it is reached: no array of the matches'
    /// objects is built.
    ///
    /// ```swift
    /// var names: [String] = []
    /// try query.forEach { person in names.append(person.firstName) }
    /// ```
    ///
    /// The matches are those of one snapshot. Without a sort, and outside a write, they are
    /// found as the walk goes: no list of the matches is built either, so memory stays flat
    /// however many match. Inside `store.write`, `body` may put and remove objects: the
    /// matches are found before the first call, each is read again when reached, so it
    /// shows the transaction's own changes, and a match removed meanwhile is skipped.
    @inlinable
    public func forEach(_ body: (E) throws -> Void) throws {
        try forEachMatch(offset: skip, limit: limit, visiting: true) { reader in
            try body(try E._cofferDecode(id: reader.id, from: &reader))
        }
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
        guard found.count <= 1 else { throw nonUniqueResult(count: found.count) }
        return found.first
    }

    /// The error of a `findUnique` that matched `count` objects; not inlinable, because it
    /// reads the schema, an `@_spi(CofferGenerated)` requirement.
    @usableFromInline
    func nonUniqueResult(count: Int) -> CofferError {
        CofferError.nonUniqueResult(entity: E._cofferSchema.name, count: count)
    }

    /// The ids of all matching objects, in the query's order; no object is decoded.
    ///
    /// ```swift
    /// let ids = try query.findIds()
    /// ```
    public func findIds() throws -> [Id] {
        try box.reading(empty: []) { transaction, binding in
            try QueryExecutor(binding: binding, condition: try effectiveCondition(in: transaction), orders: orders)
                .ids(in: transaction, offset: skip, limit: limit)
        }
    }

    /// The number of matching objects; no object is decoded.
    ///
    /// ```swift
    /// let n = try query.count()
    /// ```
    public func count() throws -> Int {
        try box.reading(empty: 0) { transaction, binding in
            if condition == nil { return try box.count(in: transaction, binding: binding) }
            return try QueryExecutor(binding: binding, condition: try effectiveCondition(in: transaction), orders: [])
                .ids(in: transaction, offset: 0, limit: nil).count
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
            return try box.reading(empty: "\(E._cofferSchema.name): nothing stored yet; every query is empty") { transaction, binding in
                let effective = try effectiveCondition(in: transaction)
                let plan = QueryPlanner.plan(condition: effective, orders: orders, binding: binding, transaction: transaction)
                return Describe.plan(plan, condition: condition, orders: orders, schema: binding.schema)
            }
        } catch {
            return "\(E._cofferSchema.name): cannot describe the query: \(error)"
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
            result.append(try E._cofferDecode(id: reader.id, from: &reader))
        }
        return result
    }

    /// Calls `body` with a reader for each match, ordered and paged, in one snapshot.
    ///
    /// Without a sort, each match is decoded as the walk over the candidates reaches it,
    /// while its record is still in the processor's cache, and no list of matches is built
    /// (see `QueryExecutor.forEachMatch`).
    ///
    /// `visiting`: `body` runs user code that may write in this (write) transaction, which
    /// can move the pages the walk and the matches point into; then the matches are found
    /// first, and each record is read again by id when reached.
    @usableFromInline
    func forEachMatch(offset: Int, limit: Int?, visiting: Bool = false, _ body: (inout RecordReader) throws -> Void) throws {
        // Captured instead of `self` (see `withFirstMatch`).
        let condition = condition, orders = orders, planMemo = planMemo, store = box.store
        try box.reading(empty: ()) { transaction, binding in
            guard visiting && transaction.isWrite else {
                try QueryExecutor.forEachMatch(of: condition, orders: orders, memo: planMemo, store: store, binding: binding,
                                               in: transaction, offset: offset, limit: limit) { match in
                    var reader = try RecordReader(bytes: match.record, layout: binding, id: match.id)
                    try body(&reader)
                }
                return
            }
            let matches = try QueryExecutor.matches(of: condition, orders: orders, memo: planMemo, store: store, binding: binding,
                                                    in: transaction, offset: offset, limit: limit)
            for match in matches {
                guard let current = try transaction.record(match.id, table: binding.table, entity: binding.schema.name) else { continue }
                var reader = try RecordReader(bytes: current, layout: binding, id: match.id)
                try body(&reader)
            }
        }
    }

    /// Calls `body` with a reader for the first match in the query's order and page; not at
    /// all when nothing matches. No list of matches is built for a look-up the index answers
    /// alone (see `QueryExecutor.first`).
    @usableFromInline
    func withFirstMatch(_ body: (inout RecordReader) throws -> Void) throws {
        guard limit != 0 else { return }
        // The closure captures these, not `self`: capturing the generic query makes every
        // call look up `Query<E>`'s type metadata at run time.
        let built = builtCondition, position = lookUpPosition, value = lookUpValue
        let orders = orders, skip = skip, planMemo = planMemo, store = box.store
        try box.reading(empty: ()) { transaction, binding in
            guard let match = try QueryExecutor.first(of: built, lookUpPosition: position, value: value, orders: orders, memo: planMemo,
                                                      store: store, binding: binding, in: transaction, offset: skip) else { return }
            var reader = try RecordReader(bytes: match.record, layout: binding, id: match.id)
            try body(&reader)
        }
    }

    /// The query's condition with each link step, wherever it sits in the tree, resolved to
    /// a condition on this entity in `transaction`'s snapshot.
    func effectiveCondition(in transaction: Transaction) throws -> ConditionNode? {
        try ConditionNode.effective(condition, in: transaction, store: box.store)
    }

    /// A matching record; the bytes are valid until the transaction writes or ends.
    typealias Match = QueryExecutor.Match

    /// The matching records, ordered and paged: link steps resolved in this snapshot, then
    /// the non-generic executor.
    func matches(in transaction: Transaction, binding: EntityBinding, offset: Int, limit: Int?, needsOrder: Bool = true) throws -> [Match] {
        try QueryExecutor.matches(of: condition, orders: needsOrder ? orders : [], memo: planMemo, store: box.store,
                                  binding: binding, in: transaction, offset: offset, limit: limit)
    }
}

extension Transaction {
    /// Adds the ids of index entries within `span` to `ids`.
    func collectIndexIds(_ index: IndexBinding, span: IndexSpan, entity: String, into ids: inout [Id]) throws {
        try forEachIndexId(index, span: span, entity: entity) { id in
            ids.append(id)
            return true
        }
    }

    /// Calls `body` with the ids of index entries within `span`, in key order, while it
    /// returns true.
    func forEachIndexId(_ index: IndexBinding, span: IndexSpan, entity: String, _ body: (Id) throws -> Bool) throws {
        switch span {
        case .prefix(let prefix, let exact):
            try prefix.withUnsafeBytes { try forEachIndexId(index, prefix: $0, exact: exact, entity: entity, body) }
        case .range(let lower, let upper):
            try withCursor(index.database, "reading the index on \(entity).\(index.property.name)") { cursor in
                var current = try cursor.seek(lower)
                while let raw = current {
                    let entry = try IndexEntry.decode(raw.key, property: index.property.name, entity: entity)
                    // Inclusive: cut strings equal to a cut bound are candidates, rechecked later.
                    if let upper, upper.withUnsafeBytes({ ByteSearch.order(entry.value, $0) }) > 0 { return }
                    guard try body(entry.id) else { return }
                    current = try cursor.next()
                }
            }
        }
    }

    /// Calls `body` with the ids of index entries whose value starts with `prefix` (`exact`:
    /// is `prefix`), in key order, while it returns true.
    func forEachIndexId(_ index: IndexBinding, prefix: UnsafeRawBufferPointer, exact: Bool, entity: String,
                        _ body: (Id) throws -> Bool) throws {
        try withCursor(index.database, "reading the index on \(entity).\(index.property.name)") { cursor in
            var current = try cursor.seek(prefix)
            while let raw = current {
                let entry = try IndexEntry.decode(raw.key, property: index.property.name, entity: entity)
                let inSpan = exact
                    ? entry.value.count == prefix.count && ByteSearch.order(entry.value, prefix) == 0
                    : entry.value.starts(with: prefix)
                guard inSpan else {
                    // A shorter value whose id bytes continue the prefix sorts inside the span.
                    guard raw.key.starts(with: prefix), entry.value.count < prefix.count else { return }
                    current = try cursor.next()
                    continue
                }
                guard try body(entry.id) else { return }
                current = try cursor.next()
            }
        }
    }

    /// Calls `body` with the ids of an index in value order, while it returns true.
    func walkIndex(_ index: IndexBinding, entity: String, _ body: (Id) throws -> Bool) throws {
        try withCursor(index.database, "reading the index on \(entity).\(index.property.name)") { cursor in
            var current = try cursor.first()
            while let raw = current {
                guard try body(try IndexEntry.decode(raw.key, property: index.property.name, entity: entity).id) else { return }
                current = try cursor.next()
            }
        }
    }
}
