import CLMDB

/// How a statement reads its tables: for each table of the FROM clause, in order, how its
/// rows are found (the query planner over the conditions it can check on records, or a
/// look-up, hash or relation join against the tables before it) and which conditions are
/// checked at that step. Conditions are checked as soon as the tables they read are joined.
struct SQLPlan {
    enum Access {
        /// Nothing of the entity is stored: no rows.
        case empty
        /// The planner's plan over the conditions pushed down to records (`pushdown`): an
        /// index, id look-ups or a scan.
        case planned(QueryPlan)
        /// One look-up of the id an expression of the earlier tables gives.
        case idLookup(SQLBound)
        /// The index on a property, for the value an expression of the earlier tables gives.
        case indexLookup(position: Int, SQLBound)
        /// The table's rows (its own conditions checked) hashed by `inner` once; each row of
        /// the earlier tables looks up `outer`.
        case hash(inner: [SQLBound], outer: [SQLBound], QueryPlan)
        /// The table's rows (its own conditions checked) read once and joined to every row
        /// of the earlier tables.
        case nestedLoop(QueryPlan)
        /// The objects a many-to-many relation links to an earlier table's object.
        case relation(SQLBoundSelect.RelationJoin, tables: RelationTables)
    }

    struct Step {
        let table: SQLTable
        let binding: EntityBinding?
        let access: Access
        /// The leaves the planner got (checked on records, before anything is decoded).
        let pushdown: ConditionNode?
        /// Conditions on this table alone, checked on its rows.
        let local: [SQLBound]
        /// Conditions on this table and earlier ones, checked on each joined row; for a left
        /// join, the ON condition's (a row of NULLs is added when none holds).
        let pair: [SQLBound]
        /// A left join's WHERE conditions at this table, checked after the NULL row.
        let after: [SQLBound]
    }

    let bound: SQLBoundSelect
    let steps: [Step]
    /// Conditions on no table (constants, parameters): checked once.
    let constant: [SQLBound]
    /// A GROUP BY the index answers alone, when the statement has one.
    let indexGrouping: SQLIndexGrouping?

    /// Inner tables of at most this many objects are hashed rather than looked up row by row.
    static let hashLimit = 20_000

    init(_ bound: SQLBoundSelect, store: Store, transaction: Transaction) throws {
        self.bound = bound
        var constant: [SQLBound] = []
        // Each condition's step: the last table it reads.
        var byStep = Array(repeating: [SQLBound](), count: bound.tables.count)
        for conjunct in bound.conjuncts {
            let tables = conjunct.tables
            if tables == 0 || bound.tables.isEmpty {
                constant.append(conjunct)
            } else {
                byStep[63 - tables.leadingZeroBitCount].append(conjunct)
            }
        }
        self.constant = constant
        var steps: [Step] = []
        for table in bound.tables {
            let binding = try store.makeCatalogBinding(table.schema, in: transaction)
            let own = UInt64(1) << UInt64(table.index)
            let earlier = own &- 1
            var local: [SQLBound] = []
            var pair: [SQLBound] = []
            var after: [SQLBound] = []
            if table.isLeftJoined {
                for conjunct in bound.leftJoinConditions[table.index] ?? [] {
                    if conjunct.tables == own { local.append(conjunct) } else { pair.append(conjunct) }
                }
                after = byStep[table.index]
            } else {
                for conjunct in byStep[table.index] {
                    if conjunct.tables == own { local.append(conjunct) } else { pair.append(conjunct) }
                }
            }
            guard let binding else {
                steps.append(Step(table: table, binding: nil, access: .empty, pushdown: nil, local: local, pair: pair, after: after))
                continue
            }
            // The conditions the planner can take (exactly SQL's answer on every record).
            var leaves: [ConditionLeaf] = []
            var rest: [SQLBound] = []
            for conjunct in local {
                if let taken = Self.leaves(conjunct, table: table) { leaves += taken } else { rest.append(conjunct) }
            }
            let pushdown: ConditionNode? = leaves.isEmpty ? nil : (leaves.count == 1 ? .leaf(leaves[0]) : .and(leaves.map { .leaf($0) }))
            func planned() -> QueryPlan {
                QueryPlanner.plan(condition: pushdown, orders: [], binding: binding, transaction: transaction)
            }
            if table.index == 0 {
                steps.append(Step(table: table, binding: binding, access: .planned(planned()), pushdown: pushdown, local: rest, pair: pair, after: after))
                continue
            }
            if let join = bound.relationJoins[table.index] {
                // The relation belongs to the joined table when read in reverse, else to the earlier one.
                let relationOwner = join.reverse ? binding : try store.makeCatalogBinding(bound.tables[join.owner.table].schema, in: transaction)
                guard let tables = relationOwner?.relationTables[join.relationPosition] else {
                    steps.append(Step(table: table, binding: binding, access: .empty, pushdown: nil, local: local, pair: pair, after: after))
                    continue
                }
                steps.append(Step(table: table, binding: binding, access: .relation(join, tables: tables), pushdown: nil,
                                  local: local, pair: pair, after: after))
                continue
            }
            // Equalities between a column of this table and an expression of earlier ones.
            var equalities: [(inner: SQLColumnRef, source: SQLTable.Source, outer: SQLBound)] = []
            for conjunct in pair {
                guard case .binary(.equal, let a, let b) = conjunct else { continue }
                for (mine, other) in [(a, b), (b, a)] {
                    if case .column(let column) = mine, column.table == table.index, other.tables & ~earlier == 0,
                       let source = table.columns.first(where: { $0.slot == column.slot })?.source {
                        equalities.append((column, source, other))
                        break
                    }
                }
            }
            let entries = try Self.entries(binding, transaction)
            let access: Access
            if entries > Self.hashLimit, let id = equalities.first(where: { $0.source == .id }) {
                access = .idLookup(id.outer)
            } else if entries > Self.hashLimit, let indexed = equalities.first(where: { equality in
                if case .field(let position) = equality.source {
                    return Self.isLookUpType(binding.schema.properties[position].type)
                        && QueryPlanner.usableIndex(position, binding: binding, transaction: transaction) != nil
                }
                return false
            }), case .field(let position) = indexed.source {
                access = .indexLookup(position: position, indexed.outer)
            } else if !equalities.isEmpty {
                access = .hash(inner: equalities.map { .column($0.inner) }, outer: equalities.map(\.outer), planned())
            } else {
                access = .nestedLoop(planned())
            }
            switch access {
            case .idLookup, .indexLookup:
                // Look-ups check the table's own conditions on each row found.
                steps.append(Step(table: table, binding: binding, access: access, pushdown: nil, local: local, pair: pair, after: after))
            default:
                steps.append(Step(table: table, binding: binding, access: access, pushdown: pushdown, local: rest, pair: pair, after: after))
            }
        }
        self.steps = steps
        indexGrouping = SQLIndexGrouping.detect(bound, steps: steps, constant: constant, transaction: transaction)
    }

    static func entries(_ binding: EntityBinding, _ transaction: Transaction) throws -> Int {
        var stat = MDB_stat()
        try transaction.check(mdb_stat(transaction.txn, binding.table, &stat), "counting \(binding.schema.name)")
        return stat.ms_entries
    }

    /// The property types whose conditions the planner checks exactly as SQL does: numbers
    /// and text (dates, Bools, UUIDs, bytes and documents read differently in SQL).
    static func isLookUpType(_ type: PropertyType) -> Bool {
        switch type {
        case .int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32, .uint64, .uint, .float, .double, .string: return true
        default: return false
        }
    }

    /// A value as a condition leaf compares it with a property of `type`; nil when the leaf
    /// would not answer as SQL does.
    ///
    /// The planner compares an integer with a real through `Double`, which is not exact
    /// beyond 2^53; SQL's comparison is. So only values whose comparison is exact either way
    /// go to the planner: a real against an integer property only when it is a whole Int64
    /// (then as that integer), an integer against a floating-point property only within
    /// ±2^53. Everything else is checked by the statement itself.
    static func queryValue(_ value: SQLValue, for type: PropertyType) -> QueryValue? {
        let isFloatingPoint = type == .float || type == .double
        switch (value, type) {
        case (.text(let text), .string): return .string(text)
        case (_, .string): return nil
        case (.integer(let number), _):
            if isFloatingPoint && number.magnitude > 1 << 53 { return nil }
            return .signed(number)
        case (.unsigned(let number), _): return isFloatingPoint ? nil : .unsigned(number)
        case (.real(let number), _):
            if isFloatingPoint { return number.isNaN ? nil : .double(number) }
            return Int64(exactly: number).map { .signed($0) }
        default: return nil
        }
    }

    /// The condition leaves that answer `conjunct` on this table's records exactly as SQL
    /// does, or nil: comparisons, BETWEEN (as its two comparisons: the DSL's `between`
    /// takes its bounds in either order, SQL's is empty when they are reversed), IN and IS
    /// NULL of a number or text property (or the id) with constants, and full-text matches.
    static func leaves(_ conjunct: SQLBound, table: SQLTable) -> [ConditionLeaf]? {
        if case .between(let operand, let low, let high, false) = conjunct {
            guard let lower = leaf(.binary(.greaterOrEqual, operand, low), table: table),
                  let upper = leaf(.binary(.lessOrEqual, operand, high), table: table) else { return nil }
            return [lower, upper]
        }
        return leaf(conjunct, table: table).map { [$0] }
    }

    private static func leaf(_ conjunct: SQLBound, table: SQLTable) -> ConditionLeaf? {
        func property(_ bound: SQLBound) -> (position: Int, type: PropertyType)? {
            guard case .column(let column) = bound, column.table == table.index,
                  let source = table.columns.first(where: { $0.slot == column.slot })?.source else { return nil }
            switch source {
            case .id: return (0, .uint64)
            case .field(let position):
                let type = table.schema.properties[position].type
                return isLookUpType(type) ? (position, type) : nil
            default: return nil
            }
        }
        func constant(_ bound: SQLBound) -> SQLValue? {
            if case .constant(let value) = bound { return value }
            return nil
        }
        switch conjunct {
        case .binary(let op, let a, let b):
            let comparison: Comparison
            switch op {
            case .equal: comparison = .equal
            case .less: comparison = .less
            case .lessOrEqual: comparison = .lessOrEqual
            case .greater: comparison = .greater
            case .greaterOrEqual: comparison = .greaterOrEqual
            default: return nil
            }
            if let (position, type) = property(a), let value = constant(b).flatMap({ queryValue($0, for: type) }) {
                return ConditionLeaf(position: position, op: .compare(comparison), values: [value], caseSensitive: true)
            }
            if let (position, type) = property(b), let value = constant(a).flatMap({ queryValue($0, for: type) }) {
                let flipped: Comparison = switch comparison {
                case .less: .greater
                case .lessOrEqual: .greaterOrEqual
                case .greater: .less
                case .greaterOrEqual: .lessOrEqual
                default: comparison
                }
                return ConditionLeaf(position: position, op: .compare(flipped), values: [value], caseSensitive: true)
            }
            return nil
        case .inList(let operand, let items, false):
            guard let (position, type) = property(operand) else { return nil }
            var values: [QueryValue] = []
            for item in items {
                guard let value = constant(item) else { return nil }
                if value.isNull { continue }   // never equal: it can only make a miss unknown
                guard let converted = queryValue(value, for: type) else { return nil }
                values.append(converted)
            }
            return ConditionLeaf(position: position, op: .inList, values: values, caseSensitive: true)
        case .isNull(let operand, let negated):
            guard let (position, _) = property(operand), position != 0 else { return nil }
            return ConditionLeaf(position: position, op: negated ? .isNotNil : .isNil, values: [], caseSensitive: true)
        case .idIn(let column, let set):
            guard column.table == table.index else { return nil }
            var leaf = ConditionLeaf(position: 0, op: .inList, values: set.sorted.map { .unsigned($0) }, caseSensitive: true)
            leaf.idsAreStored = true
            return leaf
        default:
            return nil
        }
    }
}
