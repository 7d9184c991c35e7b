/// Runs a planned statement in one read transaction: joins the tables step by step into one
/// row buffer, checks each condition as soon as its tables are joined, groups and
/// aggregates on the fly, and hands out result rows as they are made (sorting, when asked,
/// collects them first). LIMIT stops the walk early when nothing needs every row.
final class SQLExecutor {
    private let plan: SQLPlan
    private let store: Store
    private let transaction: Transaction
    private let row: SQLSlots
    private var steps: [StepState] = []

    /// One step's compiled conditions and readers, and what it keeps between the rows of
    /// the earlier tables (a hashed or read-once table).
    private final class StepState {
        let step: SQLPlan.Step
        let reader: SQLRecordReader?
        let local: SQLEvaluator?
        let pair: SQLEvaluator?
        let after: SQLEvaluator?
        let lookUp: SQLEvaluator?
        let outerKeys: [SQLOperand]
        let innerKeys: [SQLOperand]
        /// The table's slots, in the order `rows` keeps their values.
        let slots: [Int]
        /// A hashed or read-once table's rows, `slots.count` values each, one after another.
        var rows: [SQLValue]?
        var rowCount = 0
        /// The rows (their numbers) of each key: by one key alone, or by a list of them.
        var hashedByKey: [SQLKey: [Int]] = [:]
        var hashedByKeys: [[SQLKey]: [Int]] = [:]
        /// One key whose values are all integers in a short range (the usual join on an id):
        /// the first row of the key `denseBase + k` is `denseFirst[k] - 1` (0: none), and each
        /// row's next one of the same key `denseNext[row] - 1`; no hashing per look-up.
        var denseFirst: [Int] = []
        var denseNext: [Int] = []
        var denseBase: Int64 = 0
        var isDense = false

        init(_ step: SQLPlan.Step, reader: SQLRecordReader?) {
            self.step = step
            self.reader = reader
            local = step.local.isEmpty ? nil : SQLEvaluator(all: step.local)
            pair = step.pair.isEmpty ? nil : SQLEvaluator(all: step.pair)
            after = step.after.isEmpty ? nil : SQLEvaluator(all: step.after)
            switch step.access {
            case .idLookup(let value), .indexLookup(_, let value):
                lookUp = SQLEvaluator(value)
                (outerKeys, innerKeys) = ([], [])
            case .hash(let inner, let outer, _):
                lookUp = nil
                (outerKeys, innerKeys) = (outer.map(SQLOperand.init), inner.map(SQLOperand.init))
            default:
                lookUp = nil
                (outerKeys, innerKeys) = ([], [])
            }
            slots = step.table.columns.map(\.slot)
        }
    }

    /// Thrown to end the walk once LIMIT has its rows.
    private struct Stop: Error {}

    init(_ plan: SQLPlan, store: Store, transaction: Transaction) throws {
        self.plan = plan
        self.store = store
        self.transaction = transaction
        row = SQLSlots.allocate(capacity: max(1, plan.bound.slotCount))
        row.initialize(repeating: .null)
        do {
            for step in plan.steps {
                let reader = try step.binding.map { try SQLRecordReader(table: step.table, binding: $0, store: store, transaction: transaction) }
                steps.append(StepState(step, reader: reader))
            }
        } catch {
            row.deinitialize()
            row.deallocate()
            throw error
        }
    }

    deinit {
        row.deinitialize()
        row.deallocate()
    }

    // MARK: - Results

    /// Calls `body` with each result row (its values, in the order of the SELECT list).
    func run(_ body: ([SQLValue]) throws -> Void) throws {
        let bound = plan.bound
        let outputs = bound.outputs.map(SQLEvaluator.init)
        let orderExpressions: [SQLEvaluator?] = bound.orderKeys.map { key in
            if case .expression(let value) = key.source { return SQLEvaluator(value) }
            return nil
        }
        let sorting = !bound.orderKeys.isEmpty
        var distinct: Set<[SQLKey]> = []
        var sorted: [(values: [SQLValue], keys: [SQLValue], sequence: Int)] = []
        var skipped = 0
        var emitted = 0
        // Emits the row in `slots` (joined or grouped): its outputs, once per distinct
        // value when DISTINCT, paged unless sorting.
        func produce(_ slots: SQLSlots) throws {
            let values = try outputs.map { try $0.evaluate(slots) }
            if bound.distinct {
                guard distinct.insert(values.map(SQLKey.init)).inserted else { return }
            }
            if sorting {
                let keys = try zip(bound.orderKeys, orderExpressions).map { key, expression -> SQLValue in
                    if case .output(let index) = key.source { return values[index] }
                    return try expression?.evaluate(slots) ?? .null
                }
                sorted.append((values, keys, sorted.count))
                return
            }
            if skipped < bound.offset {
                skipped += 1
                return
            }
            if let limit = bound.limit, emitted >= limit { throw Stop() }
            try body(values)
            emitted += 1
            if let limit = bound.limit, emitted >= limit { throw Stop() }
        }
        if bound.limit == 0 { return }
        do {
            if bound.isGrouped {
                try group(produce)
            } else {
                try join { try produce(self.row) }
            }
        } catch is Stop {
            return
        }
        guard sorting else { return }
        let keys = bound.orderKeys
        sorted.sort { a, b in
            for (index, key) in keys.enumerated() {
                let (x, y) = (a.keys[index], b.keys[index])
                let order: Int
                switch (x.isNull, y.isNull) {
                case (true, true): order = 0
                case (true, false): order = key.nullsFirst ? -1 : 1
                case (false, true): order = key.nullsFirst ? 1 : -1
                case (false, false): order = key.descending ? -SQLValue.order(x, y) : SQLValue.order(x, y)
                }
                if order != 0 { return order < 0 }
            }
            return a.sequence < b.sequence
        }
        for item in sorted[QueryExecutor.page(sorted.count, bound.offset, bound.limit)] { try body(item.values) }
    }

    /// Groups the joined rows and calls `produce` with each group's row (its keys, then its
    /// aggregates' values) that HAVING keeps.
    private func group(_ produce: (SQLSlots) throws -> Void) throws {
        let bound = plan.bound
        let width = bound.groupKeys.count + bound.aggregates.count
        let groupRow = SQLSlots.allocate(capacity: max(1, width))
        groupRow.initialize(repeating: .null)
        defer {
            groupRow.deinitialize()
            groupRow.deallocate()
        }
        let having = bound.having.map(SQLEvaluator.init)
        // Emits one group: its keys, then its aggregates' values.
        func emit(_ keys: [SQLValue], _ results: [SQLValue]) throws {
            for (slot, value) in keys.enumerated() { groupRow[slot] = value }
            for (offset, value) in results.enumerated() { groupRow[keys.count + offset] = value }
            if let having, try !having.holds(groupRow) { return }
            try produce(groupRow)
        }
        if let grouping = plan.indexGrouping, let reader = steps.first?.reader {
            try grouping.run(reader: reader, row: row, transaction: transaction) { key, counts in try emit([key], counts) }
            return
        }
        let count = bound.aggregates.count
        // Each group's keys, and its accumulators at `group * count` in one flat list (no
        // array per group to copy on write).
        var groupKeys: [[SQLValue]] = []
        var accumulators: [SQLAccumulator] = []
        if let (kernel, queryPlan) = try aggregateKernel(), let first = steps.first {
            (groupKeys, accumulators) = try kernel.run(plan: queryPlan, pushdown: first.step.pushdown, transaction: transaction)
        } else {
            try groupRows(into: &groupKeys, &accumulators)
        }
        // The entity an aggregate reads (its first table), for an overflow's message.
        let entities = bound.aggregates.map { call -> String in
            let tables = call.argument?.tables ?? 0
            let first = tables == 0 ? 0 : tables.trailingZeroBitCount
            return first < bound.tables.count ? bound.tables[first].entity.name : "SELECT"
        }
        var results = Array(repeating: SQLValue.null, count: count)
        for (group, keys) in groupKeys.enumerated() {
            for position in 0..<count {
                results[position] = try accumulators[group &* count &+ position].result(entity: entities[position],
                                                                                       text: bound.aggregates[position].text)
            }
            try emit(keys, results)
        }
    }

    /// The general grouping: each joined row's keys and aggregate arguments evaluated on
    /// the row's slots. Fills each group's keys and its accumulators (`aggregates.count` per
    /// group), in the order the groups were met.
    private func groupRows(into groupKeys: inout [[SQLValue]], _ accumulators: inout [SQLAccumulator]) throws {
        let bound = plan.bound
        let keys = bound.groupKeys.map(SQLOperand.init)
        let arguments = bound.aggregates.map { $0.argument.map(SQLOperand.init) }
        let count = arguments.count
        let fresh = bound.aggregates.map(SQLAccumulator.init)
        // One key (the usual GROUP BY) is hashed alone; more as a list.
        var byKey: [SQLKey: Int] = [:]
        var byKeys: [[SQLKey]: Int] = [:]
        if keys.isEmpty {
            // Aggregates without GROUP BY: one group, even over no rows.
            groupKeys.append([])
            accumulators += fresh
        }
        try join {
            let at: Int
            switch keys.count {
            case 0:
                at = 0
            case 1:
                let value = try keys[0].value(self.row)
                let key = SQLKey(value)
                if let known = byKey[key] {
                    at = known
                } else {
                    at = groupKeys.count
                    byKey[key] = at
                    groupKeys.append([value])
                    accumulators += fresh
                }
            default:
                let values = try keys.map { try $0.value(self.row) }
                let key = values.map(SQLKey.init)
                if let known = byKeys[key] {
                    at = known
                } else {
                    at = groupKeys.count
                    byKeys[key] = at
                    groupKeys.append(values)
                    accumulators += fresh
                }
            }
            let first = at &* count
            for position in 0..<count {
                accumulators[first &+ position].add(try arguments[position]?.value(self.row) ?? .null)
            }
        }
    }

    /// The aggregate kernel of a grouping it can run (see `SQLAggregateKernel`), with the
    /// first table's plan, or nil: no condition outside the first table's pushed-down ones,
    /// at most one GROUP BY key, a plain column of the first table or of the joined one,
    /// aggregates without DISTINCT over plain columns of the first table (or `COUNT(*)`),
    /// and at most one more table, inner-joined by one equality whose keys are integers in
    /// a short range (the table is hashed here, to see).
    private func aggregateKernel() throws -> (SQLAggregateKernel, QueryPlan)? {
        let bound = plan.bound
        guard plan.constant.isEmpty, bound.groupKeys.count <= 1, steps.count == 1 || steps.count == 2, let first = steps.first,
              let reader = first.reader, case .planned(let queryPlan) = first.step.access,
              first.local == nil, first.pair == nil, first.after == nil else { return nil }
        var arguments: [Int?] = []
        for call in bound.aggregates {
            guard !call.distinct else { return nil }
            guard let argument = call.argument else {
                arguments.append(nil)
                continue
            }
            guard case .column(let column) = argument, let index = reader.plainColumn(slot: column.slot) else { return nil }
            arguments.append(index)
        }
        var join: SQLAggregateKernel.Join?
        var joined: StepState?
        if steps.count == 2 {
            let inner = steps[1]
            // The one pair condition is the equality the table is hashed by.
            guard !inner.step.table.isLeftJoined, inner.after == nil, inner.step.pair.count == 1, case .hash = inner.step.access,
                  inner.outerKeys.count == 1, case .slot(let outer) = inner.outerKeys[0],
                  let column = reader.plainColumn(slot: outer) else { return nil }
            try materialize(inner)
            // Integer keys only: a look-up by `SQLKey` would match NaN with NaN, which `=`
            // does not.
            guard inner.isDense else { return nil }
            join = SQLAggregateKernel.Join(column: column, first: inner.denseFirst, next: inner.denseNext, base: inner.denseBase)
            joined = inner
        }
        let key: SQLAggregateKernel.Key
        if let grouped = bound.groupKeys.first {
            guard case .column(let column) = grouped else { return nil }
            if let index = reader.plainColumn(slot: column.slot) {
                key = .column(index, text: reader.isText(column: index))
            } else if let joined, let rows = joined.rows, let offset = joined.slots.firstIndex(of: column.slot) {
                let width = joined.slots.count
                key = .joined((0..<joined.rowCount).map { rows[$0 &* width &+ offset] })
            } else {
                return nil
            }
        } else {
            key = .none
        }
        return (SQLAggregateKernel(reader: reader, key: key, join: join, arguments: arguments, aggregates: bound.aggregates), queryPlan)
    }

    // MARK: - Joins

    /// Calls `emit` with each row of the joined tables that every condition keeps, in the
    /// row buffer.
    private func join(_ emit: () throws -> Void) throws {
        if !plan.constant.isEmpty, try !SQLEvaluator(all: plan.constant).holds(row) { return }
        if steps.isEmpty {
            // No FROM clause: one row.
            try emit()
            return
        }
        try step(0, emit)
    }

    private func step(_ index: Int, _ emit: () throws -> Void) throws {
        guard index < steps.count else { return try emit() }
        let state = steps[index]
        var matched = false
        // A row of this table is in its slots: keep it when its conditions hold.
        func candidate() throws {
            if let pair = state.pair, try !pair.holds(row) { return }
            matched = true
            if let after = state.after, try !after.holds(row) { return }
            try step(index + 1, emit)
        }
        switch state.step.access {
        case .empty:
            break
        case .planned(let queryPlan):
            try walk(state, queryPlan) { try candidate() }
        case .idLookup:
            if let reader = state.reader, let id = try lookUpId(state),
               let record = try transaction.record(id, table: reader.binding.table, entity: state.step.table.entity.name) {
                try reader.fill(row, id: id, record: record, transaction: transaction)
                if try state.local?.holds(row) ?? true { try candidate() }
            }
        case .indexLookup(let position, _):
            try indexLookUp(state, position: position) { try candidate() }
        case .hash:
            try materialize(state)
            let found: [Int]?
            if state.isDense {
                // Every key of the table is an integer: another key matches no row.
                found = nil
                if case .integer(let value) = SQLKey(try state.outerKeys[0].value(row)) {
                    let (offset, overflow) = value.subtractingReportingOverflow(state.denseBase)
                    if !overflow, offset >= 0, offset < Int64(state.denseFirst.count) {
                        var at = state.denseFirst[Int(offset)]
                        while at > 0 {
                            restore(state, at &- 1)
                            try candidate()
                            at = state.denseNext[at &- 1]
                        }
                    }
                }
            } else if state.outerKeys.count == 1 {
                let key = SQLKey(try state.outerKeys[0].value(row))
                found = key == .null ? nil : state.hashedByKey[key]
            } else {
                let key = try state.outerKeys.map { SQLKey(try $0.value(row)) }
                found = key.contains(.null) ? nil : state.hashedByKeys[key]
            }
            if let found {
                for at in found {
                    restore(state, at)
                    try candidate()
                }
            }
        case .nestedLoop:
            try materialize(state)
            for at in 0..<state.rowCount {
                restore(state, at)
                try candidate()
            }
        case .relation(let join, let tables):
            try relation(state, join, tables) { try candidate() }
        }
        if state.step.table.isLeftJoined && !matched {
            for slot in state.slots { row[slot] = .null }
            if let after = state.after, try !after.holds(row) { return }
            try step(index + 1, emit)
        }
    }

    /// The table's planned candidates (its pushed-down conditions checked on the records),
    /// read into its slots, that its other conditions keep.
    private func walk(_ state: StepState, _ queryPlan: QueryPlan, _ body: () throws -> Void) throws {
        guard let reader = state.reader else { return }
        let executor = QueryExecutor(binding: reader.binding, condition: state.step.pushdown, orders: [])
        // The walk's records are read while its cursor is open: nothing here writes.
        try executor.forEachMatch(in: transaction, offset: 0, limit: nil, plan: queryPlan) { match in
            try reader.fill(row, id: match.id, record: match.record, transaction: transaction)
            if try state.local?.holds(row) ?? true { try body() }
        }
    }

    private func lookUpId(_ state: StepState) throws -> Id? {
        switch try state.lookUp?.evaluate(row) {
        case .integer(let id)?: return id >= 0 ? UInt64(id) : nil
        case .unsigned(let id)?: return id
        case .real(let value)?: return value >= 0 && value < 18_446_744_073_709_551_616.0 ? UInt64(exactly: value) : nil
        default: return nil
        }
    }

    private func indexLookUp(_ state: StepState, position: Int, _ body: () throws -> Void) throws {
        guard let reader = state.reader, let value = try state.lookUp?.evaluate(row), !value.isNull,
              let converted = SQLPlan.queryValue(value, for: reader.binding.schema.properties[position].type),
              // A value no key can hold (a negative one for an unsigned property) equals none.
              IndexKey.encode(converted, type: reader.binding.schema.properties[position].type) != nil else { return }
        let condition = ConditionNode.leaf(ConditionLeaf(position: position, op: .compare(.equal), values: [converted], caseSensitive: true))
        let queryPlan = QueryPlanner.plan(condition: condition, orders: [], binding: reader.binding, transaction: transaction)
        let executor = QueryExecutor(binding: reader.binding, condition: condition, orders: [])
        // Collected first: the body joins further tables, whose reads move no cursor of
        // this walk, but a collected list keeps the walk short.
        let matches = try executor.matches(in: transaction, offset: 0, limit: nil, plan: queryPlan)
        for match in matches {
            try reader.fill(row, id: match.id, record: match.record, transaction: transaction)
            if try state.local?.holds(row) ?? true { try body() }
        }
    }

    /// Reads a hashed or read-once table's rows (its own conditions checked) on first use.
    private func materialize(_ state: StepState) throws {
        guard state.rows == nil else { return }
        var rows: [SQLValue] = []
        var count = 0
        let queryPlan: QueryPlan
        switch state.step.access {
        case .hash(_, _, let planned), .nestedLoop(let planned): queryPlan = planned
        default: return
        }
        try walk(state, queryPlan) {
            // A NULL key equals nothing.
            if state.innerKeys.count == 1 {
                let key = SQLKey(try state.innerKeys[0].value(row))
                if key == .null { return }
                state.hashedByKey[key, default: []].append(count)
            } else if !state.innerKeys.isEmpty {
                let key = try state.innerKeys.map { SQLKey(try $0.value(row)) }
                if key.contains(.null) { return }
                state.hashedByKeys[key, default: []].append(count)
            }
            for slot in state.slots { rows.append(row[slot]) }
            count += 1
        }
        state.rows = rows
        state.rowCount = count
        if state.innerKeys.count == 1 { Self.makeDense(state) }
    }

    /// Indexes a single-key table's rows by integer key in an array when every key is an
    /// integer and their range is at most four times the row count (or 1,024): a look-up
    /// is then a subtraction and an array read. The rows of each key keep their order.
    private static func makeDense(_ state: StepState) {
        var lowest = Int64.max
        var highest = Int64.min
        for key in state.hashedByKey.keys {
            guard case .integer(let value) = key else { return }
            lowest = min(lowest, value)
            highest = max(highest, value)
        }
        guard lowest <= highest else { return }
        let (span, overflow) = highest.subtractingReportingOverflow(lowest)
        guard !overflow, span < Int64(max(1_024, state.rowCount &* 4)) else { return }
        var first = Array(repeating: 0, count: Int(span) &+ 1)
        var next = Array(repeating: 0, count: state.rowCount)
        for (key, rows) in state.hashedByKey {
            guard case .integer(let value) = key else { return }
            let slot = Int(value &- lowest)
            for at in rows.reversed() {
                next[at] = first[slot]
                first[slot] = at &+ 1
            }
        }
        state.denseFirst = first
        state.denseNext = next
        state.denseBase = lowest
        state.isDense = true
        state.hashedByKey = [:]
    }

    /// Puts row `at` of a hashed or read-once table back into its slots.
    private func restore(_ state: StepState, _ at: Int) {
        guard let rows = state.rows else { return }
        let width = state.slots.count
        let first = at &* width
        for (offset, slot) in state.slots.enumerated() { row[slot] = rows[first &+ offset] }
    }

    private func relation(_ state: StepState, _ join: SQLBoundSelect.RelationJoin, _ tables: RelationTables,
                          _ body: () throws -> Void) throws {
        guard let reader = state.reader else { return }
        let owner: Id
        switch row[join.owner.slot] {
        case .integer(let id) where id >= 0: owner = UInt64(id)
        case .unsigned(let id): owner = id
        default: return
        }
        let related = try transaction.relatedIds(join.reverse ? tables.reverse : tables.forward, of: owner, owner: join.ownerEntity)
        for id in related {
            guard let record = try transaction.record(id, table: reader.binding.table, entity: state.step.table.entity.name) else {
                throw CofferError.damagedStore(part: .relation(entity: join.ownerEntity),
                                               reason: "it links \(owner) to \(id), which is not a stored \(state.step.table.entity.name)")
            }
            try reader.fill(row, id: id, record: record, transaction: transaction)
            if try state.local?.holds(row) ?? true { try body() }
        }
    }
}
