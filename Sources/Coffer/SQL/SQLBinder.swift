import Foundation

/// A statement with its names resolved against the store's catalog and its types checked:
/// what the planner takes.
struct SQLBoundSelect {
    /// An ORDER BY key: an output column (by position or alias), or an expression.
    enum OrderSource: Equatable {
        case output(Int)
        case expression(SQLBound)
    }

    struct OrderKey {
        let source: OrderSource
        let descending: Bool
        /// Whether NULLs come first: SQL's default puts them first ascending, last descending.
        let nullsFirst: Bool
    }

    /// A join by a many-to-many relation's name (`JOIN Teacher t ON s.teachers`): the
    /// table's objects are those the relation links to the id in `owner`.
    struct RelationJoin {
        let owner: SQLColumnRef
        /// The relation tables, read forward (owner to targets) or in reverse.
        let ownerEntity: String
        let relationPosition: Int
        let reverse: Bool
    }

    var explain = false
    var tables: [SQLTable] = []
    var slotCount = 0
    /// WHERE's conjuncts, with the ON conditions of inner joins.
    var conjuncts: [SQLBound] = []
    /// The ON condition's conjuncts of each left-joined table (by table index).
    var leftJoinConditions: [Int: [SQLBound]] = [:]
    var relationJoins: [Int: RelationJoin] = [:]
    var outputs: [SQLBound] = []
    var outputNames: [String] = []
    /// Whether each output column was named by AS.
    var outputAliased: [Bool] = []
    var isGrouped = false
    var groupKeys: [SQLBound] = []
    var aggregates: [SQLAggregateCall] = []
    var having: SQLBound?
    var orderKeys: [OrderKey] = []
    var distinct = false
    var limit: Int?
    var offset = 0
}

/// The parameters a statement is run with: by position (`?`, `?N`) or by name (`:name`).
enum SQLParameters {
    case positional([SQLValue])
    case named([String: SQLValue])
}

/// Resolves a parsed statement's names (entities, aliases, property paths, SmartStore
/// descriptors), substitutes its parameters, runs its full-text matches in the read
/// transaction, and checks its types, reporting every problem at its position.
struct SQLBinder {
    let statement: String
    let entities: [CatalogEntity]
    let parameters: SQLParameters
    /// Why some catalog entries could not be read: the error for a statement that names an
    /// entity the readable ones lack.
    let catalogDamage: (any Error)?
    /// Runs a full-text search on a table's properties, giving the matching ids.
    let textSearch: (SQLTable, [Int], String) throws -> [Id]

    private var bound = SQLBoundSelect()
    private var usedPositional: Set<Int> = []
    private var usedNamed: Set<String> = []

    init(statement: String, entities: [CatalogEntity], parameters: SQLParameters, catalogDamage: (any Error)? = nil,
         textSearch: @escaping (SQLTable, [Int], String) throws -> [Id]) {
        self.statement = statement
        self.entities = entities
        self.parameters = parameters
        self.catalogDamage = catalogDamage
        self.textSearch = textSearch
    }

    private func error(_ position: Int, _ reason: String) -> CofferError {
        CofferError.invalidSQL(position: position, near: near(position), reason: reason)
    }

    /// A few characters of the statement from `position`, for messages.
    private func near(_ position: Int) -> String {
        let scalars = statement.unicodeScalars
        guard position >= 1, position <= scalars.count else { return "the end" }
        let start = scalars.index(scalars.startIndex, offsetBy: position - 1)
        let end = scalars.index(start, offsetBy: min(20, scalars.distance(from: start, to: scalars.endIndex)))
        return String(String.UnicodeScalarView(scalars[start..<end]))
    }

    // MARK: - Statement

    mutating func bind(_ select: SQLSelect) throws -> SQLBoundSelect {
        bound.explain = select.explain
        bound.distinct = select.distinct
        if let from = select.from {
            try addTable(from, isLeftJoined: false)
            for join in select.joins {
                try addTable(join.table, isLeftJoined: join.kind == .left)
            }
            // Every table reads its id: a left join tells a missing row by it.
            for table in bound.tables { _ = table.idColumn(slots: &bound.slotCount) }
            for (offset, join) in select.joins.enumerated() {
                let table = bound.tables[offset + 1]
                let condition = try bindJoinCondition(join.condition, table: table)
                if table.isLeftJoined {
                    bound.leftJoinConditions[table.index] = condition.conjuncts
                } else {
                    bound.conjuncts += condition.conjuncts.filter { $0 != .constant(.integer(1)) }
                }
            }
        }
        if let condition = select.condition {
            let (value, type) = try bindExpression(condition, aggregates: false)
            try checkBoolean(type, at: condition.position, "WHERE")
            bound.conjuncts += value.conjuncts
        }
        bound.groupKeys = try select.groupBy.map { expression in
            let (value, _) = try bindExpression(expression, aggregates: false)
            if case .constant(.integer) = value, case .literal = expression {
                throw error(expression.position, "GROUP BY by output position is not supported: name the expression")
            }
            return value
        }
        // The SELECT list.
        var outputs: [(SQLBound, Int)] = []
        for item in select.items {
            switch item {
            case .all(let position):
                guard !bound.tables.isEmpty else { throw error(position, "SELECT * needs a FROM clause") }
                for table in bound.tables { try addStar(table, outputs: &outputs, position: position) }
            case .allOf(let name, let position):
                guard let table = try tableNamed(name, at: position) else { throw error(position, "no table named \(name) in FROM") }
                try addStar(table, outputs: &outputs, position: position)
            case .expression(let expression, let alias, let text):
                let (value, _) = try bindExpression(expression, aggregates: true)
                outputs.append((value, expression.position))
                bound.outputNames.append(alias ?? outputName(expression, text: text))
                bound.outputAliased.append(alias != nil)
            }
        }
        let having = try select.having.map { expression -> (SQLBound, Int) in
            let (value, type) = try bindExpression(expression, aggregates: true)
            try checkBoolean(type, at: expression.position, "HAVING")
            return (value, expression.position)
        }
        var orders: [(SQLBoundSelect.OrderSource, SQLSelect.Order, Int)] = []
        for order in select.orderBy {
            orders.append((try orderSource(order.expression, outputs: outputs.map(\.0)), order, order.expression.position))
        }
        bound.isGrouped = !bound.groupKeys.isEmpty || outputs.contains { $0.0.hasAggregate } || having != nil
            || orders.contains { if case .expression(let value) = $0.0 { return value.hasAggregate } else { return false } }
        if bound.isGrouped {
            bound.outputs = try outputs.map { try lift($0.0, at: $0.1) }
            bound.having = try having.map { try lift($0.0, at: $0.1) }
            orders = try orders.map { source, order, position in
                if case .expression(let value) = source { return (.expression(try lift(value, at: position)), order, position) }
                return (source, order, position)
            }
        } else {
            bound.outputs = outputs.map(\.0)
        }
        if bound.distinct {
            // After DISTINCT only the output columns are left to order by.
            orders = try orders.map { source, order, position in
                guard case .expression(let value) = source else { return (source, order, position) }
                guard let index = bound.outputs.firstIndex(of: value) else {
                    throw error(position, "with SELECT DISTINCT, ORDER BY names output columns")
                }
                return (.output(index), order, position)
            }
        }
        bound.orderKeys = orders.map { source, order, _ in
            SQLBoundSelect.OrderKey(source: source, descending: order.descending,
                                    nullsFirst: order.nullsFirst ?? !order.descending)
        }
        bound.limit = try select.limit.map { try count($0, "LIMIT") }.flatMap { $0 < 0 ? nil : $0 }
        bound.offset = max(0, try select.offset.map { try count($0, "OFFSET") } ?? 0)
        try checkParametersUsed()
        return bound
    }

    // MARK: - Tables

    private mutating func addTable(_ table: SQLSelect.Table, isLeftJoined: Bool) throws {
        guard let entity = entities.first(where: { $0.name == table.entity })
            ?? entities.first(where: { $0.name.caseInsensitiveCompare(table.entity) == .orderedSame }) else {
            if let catalogDamage { throw catalogDamage }
            let known = entities.map(\.name).joined(separator: ", ")
            throw error(table.position, "no entity named \(table.entity) is stored" + (known.isEmpty ? "" : " (stored: \(known))"))
        }
        let name = table.alias ?? entity.name
        if bound.tables.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
            throw error(table.position, "\(name) names two tables: give one an alias")
        }
        guard bound.tables.count < 64 else { throw error(table.position, "a statement joins at most 64 tables") }
        bound.tables.append(SQLTable(index: bound.tables.count, name: name, entity: entity, isLeftJoined: isLeftJoined))
    }

    /// The table a name refers to: the table of that name (its alias, or its entity when it
    /// has none), else the one table of that entity; nil for none. An entity joined twice
    /// under aliases is ambiguous by its name.
    private func tableNamed(_ name: String, at position: Int) throws -> SQLTable? {
        if let named = bound.tables.first(where: { $0.name == name })
            ?? bound.tables.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
            return named
        }
        let ofEntity = bound.tables.filter { $0.entity.name.caseInsensitiveCompare(name) == .orderedSame }
        guard ofEntity.count <= 1 else {
            throw error(position, "\(name) is ambiguous: the statement joins it as \(ofEntity.map(\.name).joined(separator: " and "))")
        }
        return ofEntity.first
    }

    private mutating func addStar(_ table: SQLTable, outputs: inout [(SQLBound, Int)], position: Int) throws {
        let id = table.idColumn(slots: &bound.slotCount)
        outputs.append((.column(SQLColumnRef(slot: id.slot, table: table.index, position: position, name: "id")), position))
        bound.outputNames.append("id")
        bound.outputAliased.append(false)
        for property in table.starProperties {
            let schema = table.schema.properties[property]
            let column = table.column(.field(position: property), type: SQLTable.type(of: schema), name: schema.name, slots: &bound.slotCount)
            outputs.append((.column(SQLColumnRef(slot: column.slot, table: table.index, position: position, name: schema.name)), position))
            bound.outputNames.append(schema.name)
            bound.outputAliased.append(false)
        }
    }

    /// An ON condition; a bare link or relation name (`ON e.department`, `ON s.teachers`)
    /// joins by it.
    private mutating func bindJoinCondition(_ condition: SQLExpression, table: SQLTable) throws -> SQLBound {
        if case .column(let tableName, let path, let descriptor, let position) = condition,
           let (owner, property) = try linkReference(tableName, path, descriptor: descriptor, position: position) {
            return try joinByName(owner: owner, property: property, joined: table, position: position)
        }
        let (value, type) = try bindExpression(condition, aggregates: false)
        try checkBoolean(type, at: condition.position, "ON")
        if value.tables & ~((UInt64(1) << UInt64(table.index + 1)) &- 1) != 0 {
            throw error(condition.position, "the ON condition of \(table.name) names a table joined after it")
        }
        return value
    }

    /// The table and property a bare column names when it is a link or a relation.
    private func linkReference(_ tableName: String?, _ path: String, descriptor: Bool, position: Int) throws -> (SQLTable, Int)? {
        let candidates: [SQLTable]
        if let tableName, let table = try tableNamed(tableName, at: position) {
            candidates = [table]
        } else if tableName == nil {
            candidates = bound.tables
        } else {
            return nil
        }
        let found = candidates.compactMap { table -> (SQLTable, Int)? in
            guard let index = table.schema.properties.firstIndex(where: { $0.name == path }),
                  table.schema.properties[index].flags.contains(.relation) || table.schema.properties[index].flags.contains(.backlink) else {
                return nil
            }
            return (table, index)
        }
        guard found.count <= 1 else {
            throw error(position, "\(path) is ambiguous: \(found.map(\.0.name).joined(separator: " and ")) have it; name the table")
        }
        return found.first
    }

    private mutating func joinByName(owner: SQLTable, property position: Int, joined: SQLTable, position at: Int) throws -> SQLBound {
        let property = owner.schema.properties[position]
        guard let target = property.relationTarget else { throw error(at, "\(owner.name).\(property.name) names no target entity") }
        // The other end: the joined table when the name is an earlier table's, else the one
        // earlier table of the target entity.
        let other: SQLTable
        if owner.index == joined.index {
            let earlier = bound.tables.prefix(joined.index).filter { $0.entity.name == target }
            guard earlier.count == 1, let found = earlier.first else {
                throw error(at, "\(owner.name).\(property.name) links to \(target): join it after exactly one table of \(target)")
            }
            other = found
        } else {
            guard owner.index < joined.index, joined.entity.name == target else {
                throw error(at, "\(owner.name).\(property.name) links to \(target), not to \(joined.entity.name)")
            }
            other = joined
        }
        let ownerId = columnRef(owner.idColumn(slots: &bound.slotCount), owner, at)
        let otherId = columnRef(other.idColumn(slots: &bound.slotCount), other, at)
        if property.flags.contains(.backlink) {
            // A backlink of a ToOne: the other table's link holds the owner's id.
            guard let linkName = property.backlinkProperty,
                  let link = other.schema.properties.firstIndex(where: { $0.name == linkName }) else {
                throw error(at, "\(owner.name).\(property.name) names no link of \(target)")
            }
            if other.schema.properties[link].flags.contains(.toMany) {
                // The backlink of a many-to-many relation: the other table's relation, read
                // from whichever of the two was joined first.
                let reverse = other.index == joined.index
                bound.relationJoins[joined.index] = SQLBoundSelect.RelationJoin(
                    owner: reverse ? ownerId : otherId, ownerEntity: other.entity.name, relationPosition: link, reverse: reverse)
                return .constant(.integer(1))
            }
            let column = other.column(.field(position: link), type: .integer, name: linkName, slots: &bound.slotCount)
            return .binary(.equal, .column(columnRef(column, other, at)), .column(ownerId))
        }
        if property.flags.contains(.toMany) {
            // A many-to-many relation: its pairs give the joined table's ids.
            let reverse = owner.index == joined.index
            bound.relationJoins[joined.index] = SQLBoundSelect.RelationJoin(
                owner: reverse ? otherId : ownerId, ownerEntity: owner.entity.name, relationPosition: position, reverse: reverse)
            return .constant(.integer(1))
        }
        // A ToOne link: the link holds the target's id.
        let link = owner.column(.field(position: position), type: .integer, name: property.name, slots: &bound.slotCount)
        return .binary(.equal, .column(columnRef(link, owner, at)), .column(otherId))
    }

    private func columnRef(_ column: SQLTable.Column, _ table: SQLTable, _ position: Int) -> SQLColumnRef {
        SQLColumnRef(slot: column.slot, table: table.index, position: position, name: column.name)
    }

    // MARK: - Columns

    /// Resolves a column reference: `path`, `table.path`, `{Entity:path}`.
    private mutating func column(_ tableName: String?, _ path: String, descriptor: Bool, position: Int) throws -> (SQLBound, SQLType) {
        guard !bound.tables.isEmpty else { throw error(position, "no table to read \(path) from: add a FROM clause") }
        if descriptor {
            guard let tableName, let table = try tableNamed(tableName, at: position) else {
                throw error(position, "{\(tableName ?? "")} is not a table of the FROM clause")
            }
            guard !path.isEmpty else { throw error(position, "{\(table.name)} stands for the table: name a path, {\(table.name):path}") }
            return try resolve(path, in: table, position: position, smartStore: true)
        }
        if let tableName {
            if let table = try tableNamed(tableName, at: position) {
                return try resolve(path, in: table, position: position, smartStore: false)
            }
            // Not a table: a dotted path (an embedded value's leaf, a document path).
            return try unqualified(tableName + "." + path, position: position)
        }
        return try unqualified(path, position: position)
    }

    private mutating func unqualified(_ path: String, position: Int) throws -> (SQLBound, SQLType) {
        let matches = bound.tables.filter { (try? source(of: path, in: $0, smartStore: false)) != nil }
        guard matches.count <= 1 else {
            throw error(position, "\(path) is ambiguous: it names a column of \(matches.map(\.name).joined(separator: " and "))")
        }
        guard let table = matches.first else {
            if bound.tables.count == 1, let table = bound.tables.first {
                // The one table's error names what it has.
                return try resolve(path, in: table, position: position, smartStore: false)
            }
            throw error(position, "no table of the FROM clause has a column \(path)")
        }
        return try resolve(path, in: table, position: position, smartStore: false)
    }

    private mutating func resolve(_ path: String, in table: SQLTable, position: Int, smartStore: Bool) throws -> (SQLBound, SQLType) {
        do {
            let (source, type, name) = try source(of: path, in: table, smartStore: smartStore)
            let column = table.column(source, type: type, name: name, slots: &bound.slotCount)
            return (.column(columnRef(column, table, position)), type)
        } catch let reason as SQLNameError {
            throw error(position, reason.reason)
        }
    }

    private struct SQLNameError: Error {
        let reason: String
    }

    /// What `path` reads from `table`.
    private func source(of path: String, in table: SQLTable, smartStore: Bool) throws -> (SQLTable.Source, SQLType, String) {
        let properties = table.schema.properties
        if smartStore {
            switch path {
            case "_soup": return (.soup, .text, "_soup")
            case "_soupEntryId": return (.id, .integer, "_soupEntryId")
            case "_soupLastModifiedDate":
                guard let position = properties.firstIndex(where: { $0.flags.contains(.updatedAt) }) else {
                    throw SQLNameError(reason: "\(table.entity.name) has no @UpdatedAt property, which _soupLastModifiedDate reads")
                }
                return (.lastModified(position: position), .integer, "_soupLastModifiedDate")
            default: break
            }
        }
        if path == "id" || path == "_id" { return (.id, .integer, path) }
        if let position = properties.firstIndex(where: { $0.name == path }) {
            let property = properties[position]
            if property.flags.contains(.toMany) || property.flags.contains(.backlink) {
                throw SQLNameError(reason: "\(table.entity.name).\(path) is a relation, not a column: join by it (JOIN ... ON \(table.name).\(path))")
            }
            return (.field(position: position), SQLTable.type(of: property), property.name)
        }
        // A path into a document: the longest property name that prefixes it.
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count > 1, !parts.contains(where: \.isEmpty) {
            for cut in stride(from: parts.count - 1, through: 1, by: -1) {
                let name = parts[..<cut].joined(separator: ".")
                if let position = properties.firstIndex(where: { $0.name == name }), properties[position].type.isDocument {
                    return (.documentPath(position: position, path: Array(parts[cut...])), .any, parts.last ?? path)
                }
            }
        }
        let names = properties.filter { !$0.flags.contains(.embedded) }.map(\.name).joined(separator: ", ")
        throw SQLNameError(reason: "\(table.entity.name) has no property \(path) (it has \(names))")
    }

    // MARK: - Expressions

    private func checkBoolean(_ type: SQLType, at position: Int, _ clause: String) throws {
        guard type != .text && type != .blob else { throw error(position, "\(clause) needs a condition, not \(type.name)") }
    }

    private func checkNumeric(_ type: SQLType, at position: Int, _ what: String) throws {
        guard type.isNumeric else { throw error(position, "\(what) needs numbers, not \(type.name)") }
    }

    private func checkComparable(_ a: SQLType, _ b: SQLType, at position: Int) throws {
        guard a.isComparable(with: b) else { throw error(position, "cannot compare \(a.name) with \(b.name)") }
    }

    /// The context an expression is bound in: whether aggregates may appear, and whether it
    /// is an aggregate's argument already.
    struct Context {
        let aggregates: Bool
        let insideAggregate: Bool
    }

    mutating func bindExpression(_ expression: SQLExpression, aggregates: Bool, insideAggregate: Bool = false) throws -> (SQLBound, SQLType) {
        try bind(expression, Context(aggregates: aggregates, insideAggregate: insideAggregate))
    }

    /// Binds one node. Each kind of node has a function of its own, so that this one, which
    /// every level of nesting passes through, keeps a small stack frame.
    private mutating func bind(_ expression: SQLExpression, _ context: Context) throws -> (SQLBound, SQLType) {
        switch expression {
        case .literal(let literal, _):
            return Self.literal(literal)
        case .parameter(let index, let name, let position):
            let value = try parameter(index: index, name: name, position: position)
            return (.constant(value), Self.type(of: value))
        case .column(let table, let path, let descriptor, let position):
            return try column(table, path, descriptor: descriptor, position: position)
        case .unary(let op, let operand, let position):
            return try bindUnary(op, operand, position, context)
        case .binary(let op, let left, let right, let position):
            return try bindBinary(op, left, right, position, context)
        case .between(let operand, let low, let high, let negated, let position):
            return try bindBetween(operand, low, high, negated, position, context)
        case .inList(let operand, let items, let negated, _):
            return try bindInList(operand, items, negated, context)
        case .like(let operand, let pattern, let negated, let position):
            return try bindLike(operand, pattern, negated, position, context)
        case .isNull(let operand, let negated, _):
            return (.isNull(try bind(operand, context).0, negated: negated), .integer)
        case .isDistinct(let left, let right, let negated, let position):
            return try bindIsDistinct(left, right, negated, position, context)
        case .match(let target, let search, let position):
            return try match(target, search, position: position)
        case .function(let name, let arguments, let distinct, let star, let position):
            return try function(name, arguments, distinct: distinct, star: star, position: position,
                                aggregates: context.aggregates, insideAggregate: context.insideAggregate)
        case .caseWhen(let operand, let branches, let otherwise, _):
            return try bindCase(operand, branches, otherwise, context)
        }
    }

    private static func literal(_ literal: SQLExpression.Literal) -> (SQLBound, SQLType) {
        switch literal {
        case .null: return (.constant(.null), .null)
        case .integer(let value): return (.constant(.integer(value)), .integer)
        case .real(let value): return (.constant(.real(value)), .real)
        case .text(let value): return (.constant(.text(value)), .text)
        case .blob(let bytes): return (.constant(.blob(Data(bytes))), .blob)
        }
    }

    private mutating func bindUnary(_ op: SQLExpression.UnaryOperator, _ operand: SQLExpression, _ position: Int,
                                    _ context: Context) throws -> (SQLBound, SQLType) {
        let (value, type) = try bind(operand, context)
        switch op {
        case .not:
            try checkBoolean(type, at: position, "NOT")
            return (.unary(.not, value), .integer)
        case .negate, .plus:
            try checkNumeric(type, at: position, "\(op.rawValue)")
            let result: SQLType = type == .integer || type == .null || type == .any ? type : .real
            return (op == .plus ? value : .unary(.negate, value), result)
        }
    }

    private mutating func bindBinary(_ op: SQLExpression.BinaryOperator, _ left: SQLExpression, _ right: SQLExpression,
                                     _ position: Int, _ context: Context) throws -> (SQLBound, SQLType) {
        let (a, typeA) = try bind(left, context)
        let (b, typeB) = try bind(right, context)
        switch op {
        case .and, .or:
            try checkBoolean(typeA, at: left.position, op.rawValue)
            try checkBoolean(typeB, at: right.position, op.rawValue)
            return (.binary(op, a, b), .integer)
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            try checkComparable(typeA, typeB, at: position)
            return (.binary(op, a, b), .integer)
        case .add, .subtract, .multiply, .divide, .remainder:
            try checkNumeric(typeA, at: left.position, "\(op.rawValue)")
            try checkNumeric(typeB, at: right.position, "\(op.rawValue)")
            let type: SQLType
            if typeA == .null || typeB == .null {
                type = .null
            } else if typeA == .any || typeB == .any {
                type = .any
            } else {
                // Integer arithmetic that overflows turns real at run time: still a number.
                type = typeA == .integer && typeB == .integer ? .integer : .real
            }
            return (.binary(op, a, b), type)
        case .concatenate:
            // Numbers join as SQLite writes them, bytes as UTF-8 text.
            return (.binary(.concatenate, a, b), .text)
        }
    }

    private mutating func bindBetween(_ operand: SQLExpression, _ low: SQLExpression, _ high: SQLExpression, _ negated: Bool,
                                      _ position: Int, _ context: Context) throws -> (SQLBound, SQLType) {
        let (value, type) = try bind(operand, context)
        let (lowValue, lowType) = try bind(low, context)
        let (highValue, highType) = try bind(high, context)
        try checkComparable(type, lowType, at: position)
        try checkComparable(type, highType, at: position)
        return (.between(value, lowValue, highValue, negated: negated), .integer)
    }

    private mutating func bindInList(_ operand: SQLExpression, _ items: [SQLExpression], _ negated: Bool,
                                     _ context: Context) throws -> (SQLBound, SQLType) {
        let (value, type) = try bind(operand, context)
        var values: [SQLBound] = []
        for item in items {
            let (itemValue, itemType) = try bind(item, context)
            try checkComparable(type, itemType, at: item.position)
            values.append(itemValue)
        }
        return (.inList(value, values, negated: negated), .integer)
    }

    private mutating func bindLike(_ operand: SQLExpression, _ pattern: SQLExpression, _ negated: Bool, _ position: Int,
                                   _ context: Context) throws -> (SQLBound, SQLType) {
        let (value, type) = try bind(operand, context)
        let (patternValue, patternType) = try bind(pattern, context)
        guard type.isText, patternType.isText else { throw error(position, "LIKE compares text, not \(type.isText ? patternType.name : type.name)") }
        return (.like(value, patternValue, negated: negated), .integer)
    }

    private mutating func bindIsDistinct(_ left: SQLExpression, _ right: SQLExpression, _ negated: Bool, _ position: Int,
                                         _ context: Context) throws -> (SQLBound, SQLType) {
        let (a, typeA) = try bind(left, context)
        let (b, typeB) = try bind(right, context)
        try checkComparable(typeA, typeB, at: position)
        return (.isDistinct(a, b, negated: negated), .integer)
    }

    private mutating func bindCase(_ operand: SQLExpression?, _ branches: [(SQLExpression, SQLExpression)], _ otherwise: SQLExpression?,
                                   _ context: Context) throws -> (SQLBound, SQLType) {
        let boundOperand = try operand.map { try bind($0, context) }
        var type = SQLType.null
        var boundBranches: [SQLCaseBranch] = []
        for (when, then) in branches {
            let (whenValue, whenType) = try bind(when, context)
            if let boundOperand {
                try checkComparable(boundOperand.1, whenType, at: when.position)
            } else {
                try checkBoolean(whenType, at: when.position, "WHEN")
            }
            let (thenValue, thenType) = try bind(then, context)
            type = type.union(thenType)
            boundBranches.append(SQLCaseBranch(when: whenValue, then: thenValue))
        }
        let boundOtherwise = try otherwise.map { try bind($0, context) }
        if let boundOtherwise { type = type.union(boundOtherwise.1) }
        return (.caseWhen(boundOperand?.0, boundBranches, boundOtherwise?.0), type)
    }
    private mutating func match(_ target: SQLExpression, _ search: SQLExpression, position: Int) throws -> (SQLBound, SQLType) {
        guard case .column(let tableName, let path, let descriptor, let columnPosition) = target else {
            throw error(position, "MATCH searches a @FullText property or a table: column MATCH 'words'")
        }
        // The search: text known before the run (a literal or a parameter).
        let text: String
        switch search {
        case .literal(.text(let value), _): text = value
        case .parameter(let index, let name, let parameterPosition):
            guard case .text(let value) = try parameter(index: index, name: name, position: parameterPosition) else {
                throw error(parameterPosition, "MATCH searches for text")
            }
            text = value
        default: throw error(search.position, "MATCH searches for a text literal or parameter")
        }
        // `{Entity} MATCH`, `table MATCH`: every full-text property; else the one named.
        var table: SQLTable?
        var properties: [Int] = []
        let named = try tableName.flatMap { try tableNamed($0, at: columnPosition) }
        if descriptor, path.isEmpty {
            table = named
        } else if tableName == nil, let whole = try tableNamed(path, at: columnPosition) {
            table = whole
        }
        if let whole = table {
            properties = whole.schema.properties.indices.filter { whole.schema.properties[$0].flags.contains(.fullText) }
            guard !properties.isEmpty else { throw error(columnPosition, "\(whole.entity.name) has no @FullText property to MATCH") }
        } else {
            let candidates = named.map { [$0] } ?? bound.tables
            let fullPath = named == nil ? [tableName, path].compactMap { $0 }.joined(separator: ".") : path
            for candidate in candidates {
                if let position = candidate.schema.properties.firstIndex(where: { $0.name == fullPath }) {
                    guard candidate.schema.properties[position].flags.contains(.fullText) else {
                        throw error(columnPosition, "\(candidate.entity.name).\(fullPath) is not @FullText: MATCH needs a full-text index")
                    }
                    table = candidate
                    properties = [position]
                    break
                }
            }
            guard table != nil else { throw error(columnPosition, "no table has a @FullText property \(fullPath)") }
        }
        guard let table else { throw error(columnPosition, "MATCH names no table") }
        let ids = try textSearch(table, properties, text)
        let id = table.idColumn(slots: &bound.slotCount)
        return (.idIn(columnRef(id, table, columnPosition), SQLIdSet(ids: Set(ids), sorted: ids)), .integer)
    }

    private mutating func function(_ name: String, _ arguments: [SQLExpression], distinct: Bool, star: Bool, position: Int,
                                   aggregates: Bool, insideAggregate: Bool) throws -> (SQLBound, SQLType) {
        let kind: SQLAggregateKind? = switch name {
        case "COUNT": .count
        case "SUM": .sum
        case "AVG": .average
        case "TOTAL": .total
        case "MIN" where arguments.count == 1: .minimum
        case "MAX" where arguments.count == 1: .maximum
        default: nil
        }
        if let kind {
            guard !insideAggregate else { throw error(position, "an aggregate cannot hold another aggregate") }
            guard aggregates else { throw error(position, "\(name) is an aggregate: it belongs in SELECT, HAVING or ORDER BY, not here") }
            if star {
                guard kind == .count else { throw error(position, "only COUNT takes *") }
                return (.aggregate(SQLAggregateCall(kind: .count, argument: nil, distinct: false, text: "\(name)(*)")), .integer)
            }
            guard arguments.count == 1, let argument = arguments.first else { throw error(position, "\(name) takes one argument") }
            let (value, type) = try bindExpression(argument, aggregates: false, insideAggregate: true)
            let result: SQLType
            switch kind {
            case .count: result = .integer
            case .sum:
                try checkNumeric(type, at: argument.position, name)
                result = type == .integer ? .integer : (type == .any ? .any : .real)
            case .average, .total:
                try checkNumeric(type, at: argument.position, name)
                result = .real
            case .minimum, .maximum: result = type
            }
            let text = "\(name)(\(distinct ? "DISTINCT " : "")\(SQLDescribe.expression(value, bound)))"
            return (.aggregate(SQLAggregateCall(kind: kind, argument: value, distinct: distinct, text: text)), result)
        }
        return try scalar(name, arguments, distinct: distinct, star: star, position: position, aggregates: aggregates, insideAggregate: insideAggregate)
    }

    /// A scalar function call: its arguments bound (in their own frames: each nesting level
    /// passes through here), then its arity and types checked.
    private mutating func scalar(_ name: String, _ arguments: [SQLExpression], distinct: Bool, star: Bool, position: Int,
                                 aggregates: Bool, insideAggregate: Bool) throws -> (SQLBound, SQLType) {
        guard !star, !distinct else { throw error(position, "\(name) is not an aggregate: it takes no * or DISTINCT") }
        guard let function = SQLFunction(rawValue: name) else {
            throw error(position, "no function \(name) (functions: COUNT, SUM, AVG, TOTAL, MIN, MAX, ABS, COALESCE, IFNULL, NULLIF, LENGTH, LOWER, UPPER, TYPEOF)")
        }
        var values: [SQLBound] = []
        var types: [SQLType] = []
        for argument in arguments {
            let (value, type) = try bindExpression(argument, aggregates: aggregates, insideAggregate: insideAggregate)
            values.append(value)
            types.append(type)
        }
        let type = try scalarType(function, name, arguments, types, position: position)
        return (.function(function, values), type)
    }

    private func scalarType(_ function: SQLFunction, _ name: String, _ arguments: [SQLExpression], _ types: [SQLType],
                            position: Int) throws -> SQLType {
        func arity(_ range: ClosedRange<Int>) throws {
            guard range.contains(arguments.count) else {
                let expected = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) or more"
                throw error(position, "\(name) takes \(expected) argument\(range.upperBound == 1 ? "" : "s"), not \(arguments.count)")
            }
        }
        let type: SQLType
        switch function {
        case .abs:
            try arity(1...1)
            try checkNumeric(types[0], at: arguments[0].position, name)
            type = types[0]
        case .coalesce, .min, .max:
            try arity(2...Int.max)
            type = types.dropFirst().reduce(types[0]) { $0.union($1) }
            for (index, item) in types.enumerated() { try checkComparable(types[0], item, at: arguments[index].position) }
        case .ifnull, .nullif:
            try arity(2...2)
            try checkComparable(types[0], types[1], at: arguments[1].position)
            type = function == .ifnull ? types[0].union(types[1]) : types[0]
        case .length:
            try arity(1...1)
            // Text in characters, bytes in bytes, a number as the length of its text.
            type = .integer
        case .lower, .upper:
            try arity(1...1)
            guard types[0].isText else { throw error(arguments[0].position, "\(name) changes text, not \(types[0].name)") }
            type = .text
        case .typeof:
            try arity(1...1)
            type = .text
        }
        return type
    }

    // MARK: - Grouping

    /// An expression of SELECT, HAVING or ORDER BY in a grouped statement, rewritten over the
    /// group row: GROUP BY's expressions and the aggregates become its slots; a column
    /// outside both is an error, as in standard SQL.
    private mutating func lift(_ value: SQLBound, at position: Int) throws -> SQLBound {
        if let key = bound.groupKeys.firstIndex(of: value) { return .groupSlot(key) }
        switch value {
        case .aggregate(let call):
            if let index = bound.aggregates.firstIndex(of: call) { return .groupSlot(bound.groupKeys.count + index) }
            bound.aggregates.append(call)
            return .groupSlot(bound.groupKeys.count + bound.aggregates.count - 1)
        case .column(let column):
            throw error(column.position, "\(column.name) must appear in GROUP BY or be inside an aggregate")
        case .idIn(let column, _):
            throw error(column.position, "a MATCH must appear in GROUP BY or be inside an aggregate")
        case .constant, .groupSlot:
            return value
        case .unary(let op, let operand): return .unary(op, try lift(operand, at: position))
        case .isNull(let operand, let negated): return .isNull(try lift(operand, at: position), negated: negated)
        case .binary(let op, let a, let b): return .binary(op, try lift(a, at: position), try lift(b, at: position))
        case .like(let a, let b, let negated): return .like(try lift(a, at: position), try lift(b, at: position), negated: negated)
        case .isDistinct(let a, let b, let negated):
            return .isDistinct(try lift(a, at: position), try lift(b, at: position), negated: negated)
        case .between(let a, let b, let c, let negated):
            return .between(try lift(a, at: position), try lift(b, at: position), try lift(c, at: position), negated: negated)
        case .inList(let a, let items, let negated):
            return .inList(try lift(a, at: position), try items.map { try lift($0, at: position) }, negated: negated)
        case .function(let function, let arguments):
            return .function(function, try arguments.map { try lift($0, at: position) })
        case .caseWhen(let operand, let branches, let otherwise):
            return .caseWhen(try operand.map { try lift($0, at: position) },
                             try branches.map { SQLCaseBranch(when: try lift($0.when, at: position), then: try lift($0.then, at: position)) },
                             try otherwise.map { try lift($0, at: position) })
        }
    }

    // MARK: - ORDER BY, LIMIT, parameters, names

    private mutating func orderSource(_ expression: SQLExpression, outputs: [SQLBound]) throws -> SQLBoundSelect.OrderSource {
        if case .literal(.integer(let number), let position) = expression {
            guard number >= 1, number <= Int64(outputs.count) else {
                throw error(position, "ORDER BY \(number): the SELECT list has \(outputs.count) column\(outputs.count == 1 ? "" : "s")")
            }
            return .output(Int(number) - 1)
        }
        if case .column(nil, let name, false, let position) = expression {
            // An output column's name wins over a table's column, as in standard SQL: an
            // explicit alias first, then a column selected by name; two of either are
            // ambiguous.
            let aliased = bound.outputNames.indices.filter { bound.outputAliased[$0] && bound.outputNames[$0] == name }
            let plain = bound.outputNames.indices.filter { !bound.outputAliased[$0] && bound.outputNames[$0] == name }
            let candidates = aliased.isEmpty ? plain : aliased
            guard candidates.count <= 1 else { throw error(position, "ORDER BY \(name) is ambiguous: the SELECT list has \(candidates.count) columns named so") }
            if let index = candidates.first { return .output(index) }
        }
        let (value, _) = try bindExpression(expression, aggregates: true)
        return .expression(value)
    }

    private mutating func count(_ expression: SQLExpression, _ clause: String) throws -> Int {
        let (value, _) = try bindExpression(expression, aggregates: false)
        guard case .constant(let constant) = value else {
            throw error(expression.position, "\(clause) takes an integer literal or parameter")
        }
        guard case .integer(let number) = constant else {
            throw error(expression.position, "\(clause) takes an integer, not \(constant)")
        }
        // As in SQLite: a negative LIMIT is none, a negative OFFSET is 0.
        return number < 0 ? -1 : Int(clamping: number)
    }

    private mutating func parameter(index: Int?, name: String?, position: Int) throws -> SQLValue {
        switch parameters {
        case .positional(let values):
            guard let index else {
                throw error(position, "the statement names parameter :\(name ?? ""): pass parameters by name")
            }
            guard index <= values.count else {
                throw error(position, "no value for parameter ?\(index): \(values.count) given")
            }
            usedPositional.insert(index)
            return values[index - 1]
        case .named(let values):
            guard let name else { throw error(position, "the statement has a positional parameter ?: pass parameters in an array") }
            guard let value = values[name] else {
                throw error(position, "no value for parameter :\(name) (given: \(values.keys.sorted().joined(separator: ", ")))")
            }
            usedNamed.insert(name)
            return value
        }
    }

    private func checkParametersUsed() throws {
        switch parameters {
        case .positional(let values):
            if let unused = (1...max(1, values.count)).first(where: { $0 <= values.count && !usedPositional.contains($0) }) {
                throw CofferError.invalidSQL(position: 1, near: near(1), reason: "\(values.count) parameters given, but the statement never uses ?\(unused)")
            }
        case .named(let values):
            if let unused = values.keys.sorted().first(where: { !usedNamed.contains($0) }) {
                throw CofferError.invalidSQL(position: 1, near: near(1), reason: "parameter :\(unused) is given but the statement never uses it")
            }
        }
    }

    static func type(of value: SQLValue) -> SQLType {
        switch value {
        case .null: return .null
        case .integer, .unsigned: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }

    /// A result column's name without AS: a column's name, else the item's text.
    private func outputName(_ expression: SQLExpression, text: String) -> String {
        if case .column(_, let path, _, _) = expression, !path.isEmpty { return path }
        return text
    }
}
