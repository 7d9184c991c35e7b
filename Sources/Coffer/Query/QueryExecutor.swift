/// Runs one condition tree (link steps already resolved) against one entity binding: plans
/// the candidates (an index, the id table or a scan), checks every condition on each
/// candidate's record, sorts and pages.
///
/// It is not generic over the entity: everything it needs is in the binding, so queries can
/// run without the entity's Swift type (selector queries, the `coffer` tool).
struct QueryExecutor {
    /// A matching record; the bytes are valid until the transaction writes or ends.
    struct Match: QueryMatch {
        let id: Id
        let record: UnsafeRawBufferPointer
    }

    let binding: EntityBinding
    let condition: ConditionNode?
    /// The orderings; empty when the caller needs no order (counts, removals).
    let orders: [QueryOrder]

    /// The matching ids, ordered and paged. When the condition is only an id list known to
    /// name stored objects (a full-text match) and no order is asked for, the records are
    /// not read at all.
    func ids(in transaction: Transaction, offset: Int, limit: Int?) throws -> [Id] {
        try checkPaging(offset, limit)
        let plan = QueryPlanner.plan(condition: condition, orders: orders, binding: binding, transaction: transaction)
        if orders.isEmpty, plan.isExact, plan.leaf?.idsAreStored == true, case .ids(let ids) = plan.source,
           zip(ids, ids.dropFirst()).allSatisfy({ $0 < $1 }) {
            return Array(ids[Self.page(ids.count, offset, limit)])
        }
        return try run(in: transaction, offset: offset, limit: limit, plan: plan).map(\.id)
    }

    /// The matching records, ordered and paged.
    func matches(in transaction: Transaction, offset: Int, limit: Int?) throws -> [Match] {
        try checkPaging(offset, limit)
        return try run(in: transaction, offset: offset, limit: limit,
                       plan: QueryPlanner.plan(condition: condition, orders: orders, binding: binding, transaction: transaction))
    }

    private func checkPaging(_ offset: Int, _ limit: Int?) throws {
        guard offset >= 0, (limit ?? 0) >= 0 else {
            throw CofferError.invalidPaging(entity: binding.schema.name, offset: offset, limit: limit)
        }
    }

    /// The range of `count` results that `offset` and `limit` select; `limit` may be
    /// anything up to Int.max, so nothing is added that can overflow.
    static func page(_ count: Int, _ offset: Int, _ limit: Int?) -> Range<Int> {
        let start = min(offset, count)
        let end = limit.map { count - start > $0 ? start + $0 : count } ?? count
        return start..<end
    }

    /// A built query's matches in `transaction`: its link steps resolved in this snapshot,
    /// its plan from its memo (see `QueryPlanMemo`), then ordered and paged.
    static func matches(of condition: ConditionNode?, orders: [QueryOrder], memo: QueryPlanMemo, store: Store, binding: EntityBinding,
                        in transaction: Transaction, offset: Int, limit: Int?) throws -> [Match] {
        let (executor, plan) = try prepare(condition, orders: orders, memo: memo, store: store, binding: binding, in: transaction)
        return try executor.matches(in: transaction, offset: offset, limit: limit, plan: plan)
    }

    /// Calls `body` with each of a built query's matches in `transaction` (link steps resolved
    /// in this snapshot, the plan from its memo), ordered and paged; streamed as the walk
    /// reaches them when no sort is needed (see `forEachMatch(in:offset:limit:plan:_:)`).
    static func forEachMatch(of condition: ConditionNode?, orders: [QueryOrder], memo: QueryPlanMemo, store: Store, binding: EntityBinding,
                             in transaction: Transaction, offset: Int, limit: Int?, _ body: (Match) throws -> Void) throws {
        let (executor, plan) = try prepare(condition, orders: orders, memo: memo, store: store, binding: binding, in: transaction)
        try executor.forEachMatch(in: transaction, offset: offset, limit: limit, plan: plan, body)
    }

    /// A built query's first match in `transaction` (see `first(in:offset:plan:)`): the
    /// query's condition as built, and for a look-up (`lookUpPosition >= 0`, see
    /// `Query.lookUpPosition`) the value it compares with.
    static func first(of built: ConditionNode?, lookUpPosition: Int, value: QueryValue, orders: [QueryOrder], memo: QueryPlanMemo,
                      store: Store, binding: EntityBinding, in transaction: Transaction, offset: Int) throws -> Match? {
        if lookUpPosition >= 0, offset == 0, orders.isEmpty,
           let known = memo.remembered(position: lookUpPosition, binding: binding, transaction: transaction), known.isExact {
            // The look-up loop (a one-leaf condition has no link steps to resolve): the key
            // encoded into the transaction's reusable bytes, then straight to the index's
            // first entry for it when the index answers alone (no condition is needed).
            transaction.lookUp.key.removeAll()
            if IndexKey.encode(value, type: known.type, into: &transaction.lookUp.key) {
                let key = transaction.lookUp.key.bytes
                if !(known.isStringKey && IndexKey.isTruncatedString(key)) {
                    return try QueryExecutor(binding: binding, condition: nil, orders: [])
                        .firstIndexed(known.index, exactKey: key, in: transaction)
                }
            }
        }
        if lookUpPosition >= 0,
           let remembered = memo.lookUp(position: lookUpPosition, value: value, binding: binding, transaction: transaction) {
            // Else the remembered plan, without asking the planner.
            if offset == 0, orders.isEmpty, remembered.isExact {
                return try QueryExecutor(binding: binding, condition: nil, orders: [])
                    .firstIndexed(remembered.index, span: .prefix(remembered.key, exact: true), in: transaction)
            }
            let condition = ConditionNode.withLookUpValue(built, position: lookUpPosition, value: value)
            return try QueryExecutor(binding: binding, condition: condition, orders: orders)
                .first(in: transaction, offset: offset, plan: remembered.plan)
        }
        let condition = ConditionNode.withLookUpValue(built, position: lookUpPosition, value: value)
        let (executor, plan) = try prepare(condition, orders: orders, memo: memo, store: store, binding: binding, in: transaction)
        return try executor.first(in: transaction, offset: offset, plan: plan)
    }

    /// The executor and plan of a built query's run: link steps resolved in this snapshot,
    /// the plan from the query's memo.
    private static func prepare(_ condition: ConditionNode?, orders: [QueryOrder], memo: QueryPlanMemo, store: Store,
                                binding: EntityBinding, in transaction: Transaction) throws -> (QueryExecutor, QueryPlan) {
        let effective = try ConditionNode.effective(condition, in: transaction, store: store)
        let executor = QueryExecutor(binding: binding, condition: effective, orders: orders)
        return (executor, memo.plan(condition: effective, orders: orders, binding: binding, transaction: transaction))
    }

    /// The matching records, ordered and paged, under a plan made earlier (a plan the query
    /// remembered, see `QueryPlanMemo`).
    func matches(in transaction: Transaction, offset: Int, limit: Int?, plan: QueryPlan) throws -> [Match] {
        try checkPaging(offset, limit)
        return try run(in: transaction, offset: offset, limit: limit, plan: plan)
    }

    /// The first match of the page that starts at `offset`, under a plan made earlier. A
    /// look-up of one whole value that the index answers exactly, with no order asked for,
    /// takes the index's first entry (the lowest id, as a scan would find first): no list
    /// of matches is built.
    func first(in transaction: Transaction, offset: Int, plan: QueryPlan) throws -> Match? {
        try checkPaging(offset, 1)
        if offset == 0, orders.isEmpty, plan.isExact, case .index(let index, let spans) = plan.source,
           spans.count == 1, spans[0].isWholeValue {
            return try firstIndexed(index, span: spans[0], in: transaction)
        }
        return try run(in: transaction, offset: offset, limit: 1, plan: plan).first
    }

    /// The record of the first entry of `span` in `index` (the lowest id holding the value),
    /// for a look-up the index answers exactly.
    func firstIndexed(_ index: IndexBinding, span: IndexSpan, in transaction: Transaction) throws -> Match? {
        var found: Match?
        try transaction.forEachIndexId(index, span: span, entity: binding.schema.name) { id in
            found = Match(id: id, record: try Self.indexedRecord(id, index: index, binding: binding, transaction: transaction))
            return false
        }
        return found
    }

    /// ``firstIndexed(_:span:in:)`` for the whole-value key `exactKey`, given as raw bytes.
    func firstIndexed(_ index: IndexBinding, exactKey: UnsafeRawBufferPointer, in transaction: Transaction) throws -> Match? {
        var found: Match?
        try transaction.forEachIndexId(index, prefix: exactKey, exact: true, entity: binding.schema.name) { id in
            found = Match(id: id, record: try Self.indexedRecord(id, index: index, binding: binding, transaction: transaction))
            return false
        }
        return found
    }

    /// The matching records of `plan`, ordered and paged.
    private func run(in transaction: Transaction, offset: Int, limit: Int?, plan: QueryPlan) throws -> [Match] {
        if needsSort(plan) {
            var found: [Match] = []
            try walk(in: transaction, plan: plan, skipping: 0, limit: nil) { found.append($0) }
            found = try QuerySorter(orders: orders, binding: binding).sort(found)
            let page = Self.page(found.count, offset, limit)
            // The whole list (the usual case) is returned as it is, not copied.
            return page.count == found.count ? found : Array(found[page])
        }
        var found: [Match] = []
        try walk(in: transaction, plan: plan, skipping: offset, limit: limit) { found.append($0) }
        return found
    }

    /// Whether the matches of `plan` need sorting after the walk: an order was asked for and
    /// the plan does not walk an index in that order.
    private func needsSort(_ plan: QueryPlan) -> Bool {
        guard !orders.isEmpty else { return false }
        if case .indexOrder = plan.source { return false }
        return true
    }

    /// Calls `body` with each match of the page that starts at `offset`, in the query's
    /// order, as the walk over the candidates reaches it when no sort is needed (each record
    /// is decoded while the scan has it in cache, and no list of matches is built), or after
    /// collecting and sorting them all when one is.
    ///
    /// `body` must not write in `transaction` (a write moves the pages the walk's cursor and
    /// the matches point into); callers whose body may write collect the matches first with
    /// ``matches(in:offset:limit:plan:)``.
    func forEachMatch(in transaction: Transaction, offset: Int, limit: Int?, plan: QueryPlan,
                      _ body: (Match) throws -> Void) throws {
        try checkPaging(offset, limit)
        if needsSort(plan) {
            for match in try run(in: transaction, offset: offset, limit: limit, plan: plan) { try body(match) }
        } else {
            try walk(in: transaction, plan: plan, skipping: offset, limit: limit, body)
        }
    }

    /// Walks the candidates of `plan` in the plan's order and calls `emit` with each match
    /// after the first `skipping` ones, until `limit` were emitted.
    private func walk(in transaction: Transaction, plan: QueryPlan, skipping: Int, limit: Int?,
                      _ emit: (Match) throws -> Void) throws {
        if limit == 0 { return }
        // An exact plan needs no check (and a long id list no hash set), nor does no condition.
        let evaluator = plan.isExact || condition == nil ? nil : try ConditionEvaluator(condition, binding: binding)
        let walk = CandidateWalk(evaluator: evaluator, binding: binding, page: PageCounter(skipping: skipping, limit: limit))
        switch plan.source {
        case .scan:
            if let evaluator, case .number(let storedId, let test) = evaluator.root {
                try walk.scan(in: transaction, testing: test, storedId: storedId, emit)
            } else {
                try walk.scan(in: transaction, emit)
            }
        case .ids(let ids):
            try walk.visit(ids, listedByIndex: plan.leaf?.idsAreStored == true, in: transaction, emit)
        case .idRange(let lower, let upper):
            try walk.visit(from: lower, through: upper, in: transaction, emit)
        case .index(let index, let spans) where spans.count == 1 && spans[0].isWholeValue:
            try walk.lookUp(spans[0], in: index, transaction: transaction, emit)
        case .index(let index, let spans):
            try walk.visit(spans, of: index, in: transaction, emit)
        case .indexOrder(let index):
            try walk.visitInOrder(of: index, in: transaction, emit)
        }
    }

    /// The record an index entry points to; an entry without a record is damage (index and
    /// table change in one transaction, so they always agree in an intact store).
    fileprivate static func indexedRecord(_ id: Id, index: IndexBinding, binding: EntityBinding,
                                          transaction: Transaction) throws -> UnsafeRawBufferPointer {
        guard let record = try transaction.record(id, table: binding.table, entity: binding.schema.name) else {
            throw CofferError.damagedStore(part: .index(entity: binding.schema.name, property: index.property.name),
                                           reason: "it lists the id \(id), which is not stored")
        }
        return record
    }
}

/// One walk over a query's candidates, one function per kind of plan source: the check
/// each candidate gets (`consider`) and the page it fills (`take`).
///
/// `emit` is handed down, not stored, so it stays a non-escaping closure; `take` and
/// `consider` are direct, inlined calls in every loop.
private struct CandidateWalk {
    typealias Emit = (QueryExecutor.Match) throws -> Void

    let evaluator: ConditionEvaluator?
    let binding: EntityBinding
    /// The walk's counters, in a reference that the per-record closures share: a `var`
    /// captured by a local function is checked for exclusive access at run time on every
    /// record.
    let page: PageCounter

    /// Takes a match: passes over it while the offset lasts, else emits it; returns
    /// whether to go on.
    @inline(__always)
    func take(_ id: Id, _ record: UnsafeRawBufferPointer, _ emit: Emit) throws -> Bool {
        assert(page.toSkip >= 0 && page.remaining > 0, "a walk goes on only while it wants matches")
        if page.toSkip > 0 {
            page.toSkip &-= 1
            return true
        }
        try emit(QueryExecutor.Match(id: id, record: record))
        page.remaining &-= 1
        return page.remaining > 0
    }

    /// Checks a candidate and takes it when it matches; returns whether to go on.
    @inline(__always)
    func consider(_ id: Id, _ record: UnsafeRawBufferPointer, _ emit: Emit) throws -> Bool {
        guard try evaluator?.matches(id: id, record: RecordFields(bytes: record, layout: binding, id: id)) ?? true else { return true }
        return try take(id, record, emit)
    }

    /// Every record of the table, in id order.
    @inline(__always)
    func scan(in transaction: Transaction, _ emit: Emit) throws {
        try transaction.forEachRecord(binding) { id, record in try consider(id, record, emit) }
    }

    /// A scan whose condition is one numeric comparison (the usual scan condition): tested
    /// inline per record, without the evaluator's tree walk. An integer range is tested on
    /// copies of its bounds, as `NumberTest.holds` does: reading them from the test object
    /// in the loop makes the compiler retain and release it around every record, because
    /// `take`'s `emit` is opaque.
    @inline(__always)
    func scan(in transaction: Transaction, testing test: NumberTest, storedId: UInt16, _ emit: Emit) throws {
        let (integerRange, lowest, highest) = (test.hasIntegerRange, test.lowest, test.highest)
        let shortcut = RecordFields.Shortcut()
        try transaction.forEachRecord(binding) { id, record in
            let field = try RecordFields(bytes: record, layout: binding, id: id).inlinedField(storedId, shortcut: shortcut)
            if integerRange, let field, let value = field.signedInteger {
                guard lowest <= value && value <= highest else { return true }
            } else {
                guard try test.holds(for: field, id: id) else { return true }
            }
            return try take(id, record, emit)
        }
    }

    /// The records of a list of ids, in id order. Ids a full-text index lists must be
    /// stored: a missing one is damage.
    @inline(__always)
    func visit(_ ids: [Id], listedByIndex: Bool, in transaction: Transaction, _ emit: Emit) throws {
        let name = binding.schema.name
        // Link steps and full-text matches give ascending ids already.
        var ordered = ids
        if !zip(ids, ids.dropFirst()).allSatisfy({ $0 < $1 }) {
            ordered.sort()
            Self.removeRepeats(&ordered)
        }
        let missing: ((Id) throws -> Void)? = listedByIndex ? { id in
            throw CofferError.damagedRecord(entity: name, id: id, reason: "the full-text index lists this id, which is not stored")
        } : nil
        try transaction.forEachRecord(binding, ids: ordered, missing: missing) { id, record in try consider(id, record, emit) }
    }

    /// A range of the table's keys (inclusive bounds).
    @inline(__always)
    func visit(from lower: Id, through upper: Id, in transaction: Transaction, _ emit: Emit) throws {
        try transaction.forEachRecord(binding, from: lower) { id, record in
            try id <= upper && consider(id, record, emit)
        }
    }

    /// One whole value of an index (a look-up): its entries are in id order, so the records
    /// are read as the index walk reaches them, and the walk stops at the page's end.
    @inline(__always)
    func lookUp(_ span: IndexSpan, in index: IndexBinding, transaction: Transaction, _ emit: Emit) throws {
        try transaction.forEachIndexId(index, span: span, entity: binding.schema.name) { id in
            try consider(id, try QueryExecutor.indexedRecord(id, index: index, binding: binding, transaction: transaction), emit)
        }
    }

    /// Several spans of an index, or a range: they list their ids in key order, so the ids
    /// are collected and visited in id order, through one cursor that steps to near ids
    /// (see `Transaction.forEachRecord(_:ids:missing:_:)`).
    ///
    /// Each value's entries are in id order, so the list is a few ascending runs, which the
    /// standard library's sort merges in near-linear time; an id that several entries list
    /// (an array's elements, overlapping spans) is visited once.
    @inline(__always)
    func visit(_ spans: [IndexSpan], of index: IndexBinding, in transaction: Transaction, _ emit: Emit) throws {
        let (name, property) = (binding.schema.name, index.property.name)
        var ids: [Id] = []
        for span in spans { try transaction.collectIndexIds(index, span: span, entity: name, into: &ids) }
        ids.sort()
        Self.removeRepeats(&ids)
        try transaction.forEachRecord(binding, ids: ids, missing: { id in
            throw CofferError.damagedStore(part: .index(entity: name, property: property), reason: "it lists the id \(id), which is not stored")
        }) { id, record in try consider(id, record, emit) }
    }

    /// Drops the repeats of a sorted list, in place.
    static func removeRepeats(_ ids: inout [Id]) {
        guard ids.count > 1 else { return }
        var kept = 1
        for at in 1..<ids.count where ids[at] != ids[kept &- 1] {
            ids[kept] = ids[at]
            kept &+= 1
        }
        ids.removeLast(ids.count &- kept)
    }

    /// The whole index in value order (the query's order).
    @inline(__always)
    func visitInOrder(of index: IndexBinding, in transaction: Transaction, _ emit: Emit) throws {
        try transaction.walkIndex(index, entity: binding.schema.name) { id in
            try consider(id, try QueryExecutor.indexedRecord(id, index: index, binding: binding, transaction: transaction), emit)
        }
    }
}

/// The counters of one walk over a query's candidates (see `CandidateWalk`).
///
/// Invariant: `toSkip >= 0`, and `remaining > 0` while the walk goes on; the walk stops at
/// the first match that brings `remaining` to 0.
private final class PageCounter {
    /// Matches still to pass over before the page starts.
    @exclusivity(unchecked) var toSkip: Int
    /// Matches still wanted (Int.max: no limit).
    @exclusivity(unchecked) var remaining: Int

    init(skipping: Int, limit: Int?) {
        toSkip = skipping
        remaining = limit ?? Int.max
    }
}
