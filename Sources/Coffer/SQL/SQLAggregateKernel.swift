/// GROUP BY and aggregates over the first table's records, alone or inner-joined to one
/// hashed table whose keys are integers in a short range (a join on an id or a link), in one
/// loop per record: the fields the statement needs are found in one walk of the record's
/// headers and decoded as the table's columns read them (the same checks, the same damage),
/// the group is found by the key's bytes (ASCII text, see `SQLTextGroups`), by the joined
/// row (each row of the hashed table is in one group), or by `SQLKey`, and each aggregate
/// adds the value by `SQLAccumulator`'s rules.
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

    /// The loop's state, read through one reference: captured by the walk's closure as local
    /// constants and variables, each record cost a retain and a release per array and class
    /// it touched, and a run-time exclusivity check per variable. Scratch and the small
    /// tables are buffers it owns.
    private final class Loop {
        let reader: SQLRecordReader
        let textGroups = SQLTextGroups()
        /// Each group's key values (none, or one), in the order met.
        @exclusivity(unchecked) var keys: [[SQLValue]] = []
        /// `width` per group.
        @exclusivity(unchecked) var accumulators: [SQLAccumulator] = []
        @exclusivity(unchecked) var byKey: [SQLKey: Int] = [:]
        let fresh: [SQLAccumulator]
        let width: Int
        /// Per stored field id, its place in `found` (-1: not read); how many are read.
        let slots: UnsafeMutableBufferPointer<Int32>
        let wanted: Int
        let found: UnsafeMutableBufferPointer<RecordFields.Field?>
        /// Per argument column: the reader's column, its field's place in `found`, its value.
        let columns: UnsafeMutableBufferPointer<Int>
        let argumentSlots: UnsafeMutableBufferPointer<Int>
        let values: UnsafeMutableBufferPointer<SQLValue>
        /// Per aggregate: the index of its argument in `values`, -1 for `COUNT(*)`.
        let arguments: UnsafeMutableBufferPointer<Int>
        /// 0: no key, 1: a column of the first table, 2: the joined rows.
        let keyKind: Int
        let keyColumn: Int
        let keyIsText: Bool
        let keySlot: Int
        let isJoined: Bool
        let joinColumn: Int
        let joinSlot: Int
        let joinBase: Int64
        /// The hashed table's rows by key and their chains (see `Join`), each joined row's
        /// key value, and its group + 1 (0: not met yet).
        let joinFirst: UnsafeMutableBufferPointer<Int>
        let joinNext: UnsafeMutableBufferPointer<Int>
        let joinedKeys: UnsafeMutableBufferPointer<SQLValue>
        let ofJoinedRow: UnsafeMutableBufferPointer<Int>

        init(kernel: SQLAggregateKernel) {
            reader = kernel.reader
            fresh = kernel.aggregates.map(SQLAccumulator.init)
            width = kernel.aggregates.count
            let columnList = kernel.columns
            // The stored fields the loop reads, each found once per record in one walk: the
            // argument columns' (roles 0 ..< columns.count), the key's and the join's. A
            // field that serves several roles (a key that is also an argument) fills each.
            var fieldOf: [(storedId: UInt16, role: Int)] = []
            for (index, column) in columnList.enumerated() { fieldOf.append((reader.storedId(ofColumn: column), index)) }
            let keyRole = columnList.count, joinRole = columnList.count + 1
            if case .column(let column, _) = kernel.key { fieldOf.append((reader.storedId(ofColumn: column), keyRole)) }
            if let join = kernel.join { fieldOf.append((reader.storedId(ofColumn: join.column), joinRole)) }
            let fieldIds = Array(Set(fieldOf.map(\.storedId))).sorted()
            var slotTable = Array(repeating: Int32(-1), count: Int(fieldIds.last ?? 0) + 1)
            for (slot, fieldId) in fieldIds.enumerated() { slotTable[Int(fieldId)] = Int32(slot) }
            let roleSlot = (0..<(columnList.count + 2)).map { role in
                fieldOf.first { $0.role == role }.flatMap { entry in fieldIds.firstIndex(of: entry.storedId) } ?? -1
            }
            slots = Self.buffer(slotTable)
            wanted = fieldIds.count
            found = .allocate(capacity: max(fieldIds.count, 1))
            found.initialize(repeating: nil)
            columns = Self.buffer(columnList)
            argumentSlots = Self.buffer(Array(roleSlot[0..<columnList.count]))
            values = Self.buffer(Array(repeating: SQLValue.null, count: columnList.count))
            arguments = Self.buffer(kernel.arguments.map { $0 ?? -1 })
            switch kernel.key {
            case .none: (keyKind, keyColumn, keyIsText) = (0, 0, false)
            case .column(let column, let text): (keyKind, keyColumn, keyIsText) = (1, column, text)
            case .joined: (keyKind, keyColumn, keyIsText) = (2, 0, false)
            }
            keySlot = roleSlot[keyRole]
            joinSlot = roleSlot[joinRole]
            isJoined = kernel.join != nil
            joinColumn = kernel.join?.column ?? 0
            joinBase = kernel.join?.base ?? 0
            joinFirst = Self.buffer(kernel.join?.first ?? [])
            joinNext = Self.buffer(kernel.join?.next ?? [])
            var joined: [SQLValue] = []
            if case .joined(let values) = kernel.key { joined = values }
            joinedKeys = Self.buffer(joined)
            ofJoinedRow = Self.buffer(Array(repeating: 0, count: joined.count))
            if case .none = kernel.key {
                keys.append([])
                accumulators += fresh
            }
        }

        deinit {
            slots.deallocate()
            found.deallocate()
            columns.deallocate()
            argumentSlots.deallocate()
            values.deinitialize().deallocate()
            arguments.deallocate()
            joinFirst.deallocate()
            joinNext.deallocate()
            joinedKeys.deinitialize().deallocate()
            ofJoinedRow.deallocate()
        }

        /// A buffer holding `elements`.
        private static func buffer<T>(_ elements: [T]) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: elements.count)
            _ = buffer.initialize(from: elements)
            return buffer
        }

        /// The group of key `value`, made when it is new.
        func group(of value: SQLValue) -> Int {
            let sqlKey = SQLKey(value)
            if let known = byKey[sqlKey] { return known }
            let at = keys.count
            byKey[sqlKey] = at
            keys.append([value])
            accumulators += fresh
            return at
        }

        /// Adds the record `id` to its groups.
        @inline(__always)
        func add(_ id: Id, _ record: UnsafeRawBufferPointer) throws {
            try RecordFields(bytes: record, layout: reader.binding, id: id).gather(UnsafeBufferPointer(slots), wanted: wanted, into: found)
            for index in 0..<columns.count {
                values[index] = try found[argumentSlots[index]].map { try reader.value($0, column: columns[index], id: id) } ?? .null
            }
            // The joined rows this record meets (an inner join: none, no group).
            var joinedRow = -1
            if isJoined {
                guard let field = found[joinSlot],
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
                    if let field = found[keySlot] {
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
                    let known = ofJoinedRow[joinedRow]
                    if known > 0 {
                        at = known &- 1
                    } else {
                        at = group(of: joinedKeys[joinedRow])
                        ofJoinedRow[joinedRow] = at &+ 1
                    }
                }
                let first = at &* width
                accumulators.withUnsafeMutableBufferPointer { groups in
                    for position in 0..<width {
                        let argument = arguments[position]
                        groups[first &+ position].add(argument >= 0 ? values[argument] : .null)
                    }
                }
                if isJoined { joinedRow = joinNext[joinedRow] &- 1 }
            } while joinedRow >= 0
        }
    }

    /// The groups of the records `plan` gives (the first table's pushed-down conditions
    /// checked by the walk): each group's key values (none, or one), and its accumulators,
    /// `aggregates.count` per group, in the order the groups were met.
    func run(plan: QueryPlan, pushdown: ConditionNode?, transaction: Transaction) throws -> (keys: [[SQLValue]], accumulators: [SQLAccumulator]) {
        let loop = Loop(kernel: self)
        let executor = QueryExecutor(binding: reader.binding, condition: pushdown, orders: [])
        try executor.forEachMatch(in: transaction, offset: 0, limit: nil, plan: plan) { match in
            try loop.add(match.id, match.record)
        }
        return (loop.keys, loop.accumulators)
    }
}
