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

    /// The matching records, ordered and paged.
    func matches(in transaction: Transaction, offset: Int, limit: Int?) throws -> [Match] {
        guard offset >= 0, (limit ?? 0) >= 0 else {
            throw CofferError.invalidOperation(message: "\(binding.schema.name) query: offset and limit must not be negative (got \(offset), \(limit ?? 0))")
        }
        let plan = QueryPlanner.plan(condition: condition, orders: orders, binding: binding, transaction: transaction)
        // An exact plan needs no check (and a long id list no hash set).
        let evaluator = plan.isExact ? nil : try ConditionEvaluator(condition, binding: binding)
        let sorted = !orders.isEmpty
        // Without a sort, the first offset+limit matches are the answer: stop there.
        var wanted: Int? = nil
        if let limit, !sorted || { if case .indexOrder = plan.source { return true } else { return false } }() {
            let (sum, overflow) = offset.addingReportingOverflow(limit)
            wanted = overflow ? nil : sum
        }
        var found: [Match] = []
        let name = binding.schema.name
        func consider(_ id: Id, _ record: UnsafeRawBufferPointer) throws -> Bool {
            if try evaluator?.matches(id: id, record: RecordFields(bytes: record, entity: name, id: id)) ?? true {
                found.append(Match(id: id, record: record))
            }
            return wanted.map { found.count < $0 } ?? true
        }
        switch plan.source {
        case .scan:
            try transaction.forEachRecord(binding) { id, record in try consider(id, record) }
        case .ids(let ids):
            // Link steps and full-text matches give ascending ids already.
            let ordered = zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 } ? ids : Set(ids).sorted()
            try transaction.withCursor(binding.table, "reading \(name)") { cursor in
                for id in ordered {
                    guard let entry = try cursor.find(IdKey(id)) else { continue }
                    if try !consider(id, entry.value) { break }
                }
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
                if try !consider(id, try indexedRecord(id, index: index, transaction: transaction)) { break }
            }
        case .indexOrder(let index):
            try transaction.walkIndex(index, entity: name) { id in
                try consider(id, try indexedRecord(id, index: index, transaction: transaction))
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
    private func indexedRecord(_ id: Id, index: IndexBinding, transaction: Transaction) throws -> UnsafeRawBufferPointer {
        guard let record = try transaction.record(id, table: binding.table, entity: binding.schema.name) else {
            throw CofferError.corruptRecord(entity: binding.schema.name, id: id,
                                            reason: "the index on \(index.property.name) lists this id, which is not stored")
        }
        return record
    }
}
