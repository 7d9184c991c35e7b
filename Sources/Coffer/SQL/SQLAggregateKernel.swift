/// GROUP BY and aggregates over the first table's records, alone or inner-joined to one
/// hashed table whose keys are integers in a short range (a join on an id or a link), in one
/// loop per record: each field the statement needs is found as the query planner's scans
/// find one (a shortcut past the headers before it) and decoded as the table's columns read
/// it (the same checks, the same damage), the group
/// is found by the key's bytes (ASCII text, see `SQLTextGroups`), by the joined row (each
/// row of the hashed table is in one group), or by `SQLKey`, and each aggregate adds the
/// value by `SQLAccumulator`'s rules.
///
/// The general executor gives the same groups in the same order (first met first); this
/// loop skips its per-row costs (a row of slots, a closure per step and per condition,
/// values copied between them), which were most of a grouping's time. `SQLExecutor`
/// decides when it applies.
final class SQLAggregateKernel {
    /// What a record's group is found by.
    enum Key {
        /// No GROUP BY: one group.
        case none
        /// A column of the first table: its index among the reader's columns; `text`: a
        /// plain text column, whose ASCII values are grouped by their bytes.
        case column(Int, text: Bool)
        /// A column of the joined table: its value in each of the table's rows.
        case joined([SQLValue])
    }

    /// The hashed table of an inner join, as `SQLExecutor` indexed it: the row of key
    /// `base + k` is `first[k] - 1` (0: none), and each row's next one of the same key
    /// `next[row] - 1`.
    struct Join {
        /// The reader's column of the first table's key (the link or column joined on).
        let column: Int
        let first: [Int]
        let next: [Int]
        let base: Int64
    }

    private let reader: SQLRecordReader
    private let key: Key
    private let join: Join?
    /// Per aggregate, the index of its argument among `columns` (nil: `COUNT(*)`).
    private let arguments: [Int?]
    /// The reader's columns the loop decodes, each once per record.
    private let columns: [Int]
    private let aggregates: [SQLAggregateCall]

    init(reader: SQLRecordReader, key: Key, join: Join?, arguments: [Int?], aggregates: [SQLAggregateCall]) {
        self.reader = reader
        self.key = key
        self.join = join
        self.aggregates = aggregates
        var columns: [Int] = []
        var mapped: [Int?] = []
        for argument in arguments {
            guard let argument else {
                mapped.append(nil)
                continue
            }
            if let known = columns.firstIndex(of: argument) {
                mapped.append(known)
            } else {
                mapped.append(columns.count)
                columns.append(argument)
            }
        }
        self.arguments = mapped
        self.columns = columns
    }

    /// The groups of the records `plan` gives (the first table's pushed-down conditions
    /// checked by the walk): each group's key values (none, or one), and its accumulators,
    /// `aggregates.count` per group, in the order the groups were met.
    func run(plan: QueryPlan, pushdown: ConditionNode?, transaction: Transaction) throws -> (keys: [[SQLValue]], accumulators: [SQLAccumulator]) {
        let fresh = aggregates.map(SQLAccumulator.init)
        let width = aggregates.count
        var groupKeys: [[SQLValue]] = []
        var accumulators: [SQLAccumulator] = []
        var byKey: [SQLKey: Int] = [:]
        let textGroups = SQLTextGroups()
        // Everything the loop reads is a local constant: a value read out of an enum or a
        // struct in the loop (an array inside) is retained and released per record.
        var joinedKeys: [SQLValue] = []
        if case .joined(let values) = key { joinedKeys = values }
        // Per joined row, its group + 1 (0: not met yet).
        var joinedGroups = Array(repeating: 0, count: joinedKeys.count)
        let isJoined = join != nil
        let (joinFirst, joinNext, joinBase, joinColumn) = (join?.first ?? [], join?.next ?? [], join?.base ?? 0, join?.column ?? 0)
        let columns = self.columns, arguments = self.arguments, reader = self.reader, binding = reader.binding
        if case .none = key {
            groupKeys.append([])
            accumulators += fresh
        }
        func group(of value: SQLValue) -> Int {
            let sqlKey = SQLKey(value)
            if let known = byKey[sqlKey] { return known }
            let at = groupKeys.count
            byKey[sqlKey] = at
            groupKeys.append([value])
            accumulators += fresh
            return at
        }

        // Which stored fields the loop reads: the argument columns, the key's and the join's.
        var fieldOf: [(storedId: UInt16, role: Int)] = []
        for (index, column) in columns.enumerated() { fieldOf.append((reader.storedId(ofColumn: column), index)) }
        if case .column(let column, _) = key { fieldOf.append((reader.storedId(ofColumn: column), columns.count)) }
        if let join { fieldOf.append((reader.storedId(ofColumn: join.column), columns.count + 1)) }
        // Each stored field is looked up once per record, through a shortcut of its own
        // (the records of one table are nearly all laid out alike, see
        // `RecordFields.Shortcut`), as the query planner's scans read a field; a field that
        // serves several roles (a key that is also an argument) fills each.
        let fieldIds = Array(Set(fieldOf.map(\.storedId))).sorted()
        let shortcuts = fieldIds.map { _ in RecordFields.Shortcut() }
        let roleField = (0..<(columns.count + 2)).map { role in
            fieldOf.first { $0.role == role }.flatMap { entry in fieldIds.firstIndex(of: entry.storedId) } ?? -1
        }
        let roleCount = roleField.count
        var fieldsFound = Array(repeating: RecordFields.Field?.none, count: fieldIds.count)
        let keyRole = columns.count, joinRole = columns.count + 1
        var found = Array(repeating: RecordFields.Field?.none, count: columns.count + 2)
        var values = Array(repeating: SQLValue.null, count: columns.count)
        // 0: no key, 1: a column of the first table, 2: the joined rows.
        let keyKind: Int
        let keyColumn: Int
        let keyIsText: Bool
        switch key {
        case .none: (keyKind, keyColumn, keyIsText) = (0, 0, false)
        case .column(let column, let text): (keyKind, keyColumn, keyIsText) = (1, column, text)
        case .joined: (keyKind, keyColumn, keyIsText) = (2, 0, false)
        }

        let executor = QueryExecutor(binding: binding, condition: pushdown, orders: [])
        try executor.forEachMatch(in: transaction, offset: 0, limit: nil, plan: plan) { match in
            let id = match.id
            let record = RecordFields(bytes: match.record, layout: binding, id: id)
            for index in fieldIds.indices {
                fieldsFound[index] = try record.inlinedField(fieldIds[index], shortcut: shortcuts[index])
            }
            for role in 0..<roleCount {
                let field = roleField[role]
                found[role] = field >= 0 ? fieldsFound[field] : nil
            }
            for index in columns.indices {
                values[index] = try found[index].map { try reader.value($0, column: columns[index], id: id) } ?? .null
            }
            // The joined rows this record meets (an inner join: none, no group).
            var joinedRow = -1
            if isJoined {
                guard let field = found[joinRole],
                      case .integer(let linked) = SQLKey(try reader.value(field, column: joinColumn, id: id)) else { return }
                let (offset, overflow) = linked.subtractingReportingOverflow(joinBase)
                guard !overflow, offset >= 0, offset < Int64(joinFirst.count) else { return }
                joinedRow = joinFirst[Int(offset)] &- 1
                guard joinedRow >= 0 else { return }
            }
            repeat {
                let at: Int
                switch keyKind {
                case 0:
                    at = 0
                case 1:
                    if let field = found[keyRole] {
                        if keyIsText, let bytes = SQLRecordReader.asciiText(field) {
                            let hash = SQLTextGroups.hash(bytes)
                            if let known = textGroups.group(of: bytes, hash: hash) {
                                at = known
                            } else {
                                // ASCII: the bytes are the text.
                                at = group(of: .text(String(recordBytes: bytes)))
                                textGroups.add(bytes, hash: hash, group: at)
                            }
                        } else {
                            at = group(of: try reader.value(field, column: keyColumn, id: id))
                        }
                    } else {
                        at = group(of: .null)
                    }
                default:
                    let known = joinedGroups[joinedRow]
                    if known > 0 {
                        at = known &- 1
                    } else {
                        at = group(of: joinedKeys[joinedRow])
                        joinedGroups[joinedRow] = at &+ 1
                    }
                }
                let first = at &* width
                for position in 0..<width {
                    accumulators[first &+ position].add(arguments[position].map { values[$0] } ?? .null)
                }
                if isJoined { joinedRow = joinNext[joinedRow] &- 1 }
            } while joinedRow >= 0
        }
        return (groupKeys, accumulators)
    }
}
