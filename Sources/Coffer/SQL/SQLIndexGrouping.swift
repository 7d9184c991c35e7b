import Foundation

/// `SELECT k, COUNT(*) FROM T GROUP BY k` on an indexed property `k`, answered from the
/// index: its entries are sorted by value, so each run of equal keys is a group and its
/// length the count. One record per group is read, for the value as stored (the key holds
/// the canonical form); a run of cut keys (strings longer than the key holds) is read record
/// by record, since different strings share it.
struct SQLIndexGrouping {
    let index: IndexBinding
    /// The key column's slot in the row.
    let keySlot: Int
    /// Per aggregate: true for `COUNT(k)` (NULLs not counted), false for `COUNT(*)`.
    let countsKey: [Bool]

    /// The index grouping of a statement that has one: one table, no condition, one GROUP
    /// BY key that is an indexed property (not an array's element index), and only
    /// `COUNT(*)` or `COUNT(key)`.
    static func detect(_ bound: SQLBoundSelect, steps: [SQLPlan.Step], constant: [SQLBound], transaction: Transaction) -> SQLIndexGrouping? {
        guard bound.isGrouped, constant.isEmpty, steps.count == 1, let step = steps.first, let binding = step.binding,
              step.pushdown == nil, step.local.isEmpty, step.pair.isEmpty, step.after.isEmpty,
              bound.groupKeys.count == 1, case .column(let key) = bound.groupKeys[0],
              let source = step.table.columns.first(where: { $0.slot == key.slot })?.source,
              case .field(let position) = source,
              let index = QueryPlanner.usableIndex(position, binding: binding, transaction: transaction), !index.isElementIndex else {
            return nil
        }
        var countsKey: [Bool] = []
        for call in bound.aggregates {
            guard call.kind == .count, !call.distinct else { return nil }
            switch call.argument {
            case nil: countsKey.append(false)
            case .column(let column)? where column.slot == key.slot: countsKey.append(true)
            default: return nil
            }
        }
        return SQLIndexGrouping(index: index, keySlot: key.slot, countsKey: countsKey)
    }

    /// Calls `body` with each group's key value and its aggregates' values, in key order
    /// (groups the canonical key merges, such as 0.0 and -0.0, come merged).
    func run(reader: SQLRecordReader, row: SQLSlots, transaction: Transaction,
             _ body: (SQLValue, [SQLValue]) throws -> Void) throws {
        let entity = reader.table.entity.name
        let property = index.property.name
        // Only string keys are ever cut (see `IndexKey.maxStringBytes`).
        let isString = index.property.type == .string
        var order: [SQLKey] = []
        var groups: [SQLKey: (value: SQLValue, rows: Int64, values: Int64)] = [:]
        func add(_ value: SQLValue, rows: Int64) {
            let key = SQLKey(value)
            if groups[key] == nil {
                order.append(key)
                groups[key] = (value, 0, 0)
            }
            groups[key]?.rows += rows
            if !value.isNull { groups[key]?.values += rows }
        }
        /// The key value of the record `id`, as the table's columns read it.
        func value(of id: Id) throws -> SQLValue {
            guard let record = try transaction.record(id, table: reader.binding.table, entity: entity) else {
                throw CofferError.damagedStore(part: .index(entity: entity, property: property), reason: "it lists the id \(id), which is not stored")
            }
            try reader.fill(row, id: id, record: record, transaction: transaction)
            return row[keySlot]
        }
        try transaction.withCursor(index.database, "reading the index on \(entity).\(property)") { cursor in
            var current = try cursor.first()
            var run: [UInt8] = []
            var runLength: Int64 = 0
            var runFirst: Id = 0
            var runIsCut = false
            func close() throws {
                guard runLength > 0, !runIsCut else { return }
                add(run.first == IndexKey.nilTag ? .null : try value(of: runFirst), rows: runLength)
            }
            while let raw = current {
                let entry = try IndexEntry.decode(raw.key, property: property, entity: entity)
                if runLength > 0, Self.same(entry.value, run) {
                    runLength += 1
                    if runIsCut { add(try value(of: entry.id), rows: 1) }
                } else {
                    try close()
                    run = Array(entry.value)
                    runLength = 1
                    runFirst = entry.id
                    runIsCut = isString && IndexKey.isTruncatedString(entry.value)
                    if runIsCut { add(try value(of: entry.id), rows: 1) }
                }
                current = try cursor.next()
            }
            try close()
        }
        for key in order {
            guard let group = groups[key] else { continue }
            try body(group.value, countsKey.map { .integer($0 ? group.values : group.rows) })
        }
    }

    /// Whether an entry's value bytes are the run's (one `memcmp`, not a walk of two
    /// sequences byte by byte: this is the loop's test for every entry of the index).
    @inline(__always)
    private static func same(_ value: UnsafeRawBufferPointer, _ run: [UInt8]) -> Bool {
        guard value.count == run.count else { return false }
        guard value.count > 0, let base = value.baseAddress else { return true }
        return run.withUnsafeBytes { stored in stored.baseAddress.map { memcmp($0, base, value.count) == 0 } ?? false }
    }
}
