/// The static type of a bound expression: what its values can be, besides NULL. `any` is a
/// document path, whose values have no declared type.
enum SQLType: Equatable {
    case null, integer, real, text, blob, any

    var isNumeric: Bool { self == .integer || self == .real || self == .null || self == .any }
    var isText: Bool { self == .text || self == .null || self == .any }

    var name: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        case .any: return "a document value"
        }
    }

    /// Whether values of the two types can be compared: numbers with numbers, text with
    /// text, bytes with bytes (NULL and document values with anything).
    func isComparable(with other: SQLType) -> Bool {
        if self == .null || other == .null || self == .any || other == .any { return true }
        if isNumeric && other.isNumeric { return true }
        return self == other
    }

    /// The type of a value of either type (CASE, COALESCE, MIN over a join's columns).
    func union(_ other: SQLType) -> SQLType {
        if self == other || other == .null { return self }
        if self == .null { return other }
        if (self == .integer && other == .real) || (self == .real && other == .integer) { return .real }
        return .any
    }
}

/// A column slot of the statement's row, compared by slot alone: the same column written
/// twice (in GROUP BY and in SELECT) is one column.
struct SQLColumnRef: Equatable {
    let slot: Int
    let table: Int
    let position: Int
    let name: String

    static func == (a: SQLColumnRef, b: SQLColumnRef) -> Bool { a.slot == b.slot }
}

enum SQLAggregateKind: String, Equatable {
    case count = "COUNT", sum = "SUM", average = "AVG", minimum = "MIN", maximum = "MAX", total = "TOTAL"
}

/// An aggregate call: `COUNT(*)` has no argument.
struct SQLAggregateCall: Equatable {
    let kind: SQLAggregateKind
    let argument: SQLBound?
    let distinct: Bool
    /// Its text, naming it in a SUM overflow.
    let text: String

    static func == (a: SQLAggregateCall, b: SQLAggregateCall) -> Bool {
        a.kind == b.kind && a.argument == b.argument && a.distinct == b.distinct
    }
}

/// The scalar functions.
enum SQLFunction: String, Equatable {
    case abs = "ABS", coalesce = "COALESCE", ifnull = "IFNULL", nullif = "NULLIF", length = "LENGTH"
    case lower = "LOWER", upper = "UPPER", typeof = "TYPEOF", min = "MIN", max = "MAX"
}

/// One `WHEN ... THEN ...` of a CASE.
struct SQLCaseBranch: Equatable {
    let when: SQLBound
    let then: SQLBound
}

/// An expression with its names resolved to row slots, its parameters to values, and its
/// full-text matches to id sets: what the executor evaluates.
indirect enum SQLBound: Equatable {
    case constant(SQLValue)
    case column(SQLColumnRef)
    case unary(SQLExpression.UnaryOperator, SQLBound)
    case binary(SQLExpression.BinaryOperator, SQLBound, SQLBound)
    case between(SQLBound, SQLBound, SQLBound, negated: Bool)
    case inList(SQLBound, [SQLBound], negated: Bool)
    case like(SQLBound, SQLBound, negated: Bool)
    case isNull(SQLBound, negated: Bool)
    case isDistinct(SQLBound, SQLBound, negated: Bool)
    /// A full-text match: whether the id in the column is one of `ids`.
    case idIn(SQLColumnRef, SQLIdSet)
    case function(SQLFunction, [SQLBound])
    case caseWhen(SQLBound?, [SQLCaseBranch], SQLBound?)
    /// An aggregate, before the grouping lifts it into a slot of the group row.
    case aggregate(SQLAggregateCall)
    /// A slot of the group row (a GROUP BY key or an aggregate's result).
    case groupSlot(Int)

    /// The tables (FROM positions) the expression reads, as a bit set.
    var tables: UInt64 {
        switch self {
        case .constant, .groupSlot: return 0
        case .column(let column), .idIn(let column, _): return column.table < 64 ? 1 << UInt64(column.table) : .max
        case .unary(_, let operand), .isNull(let operand, _): return operand.tables
        case .binary(_, let a, let b), .like(let a, let b, _), .isDistinct(let a, let b, _): return a.tables | b.tables
        case .between(let a, let b, let c, _): return a.tables | b.tables | c.tables
        case .inList(let a, let items, _): return items.reduce(a.tables) { $0 | $1.tables }
        case .function(_, let arguments): return arguments.reduce(0) { $0 | $1.tables }
        case .caseWhen(let operand, let branches, let otherwise):
            let start = (operand?.tables ?? 0) | (otherwise?.tables ?? 0)
            return branches.reduce(start) { $0 | $1.when.tables | $1.then.tables }
        case .aggregate(let call): return call.argument?.tables ?? 0
        }
    }

    /// Whether an aggregate is anywhere inside.
    var hasAggregate: Bool {
        var found = false
        visit { if case .aggregate = $0 { found = true } }
        return found
    }

    /// Calls `body` with this node and every node inside it, parents first.
    func visit(_ body: (SQLBound) -> Void) {
        body(self)
        switch self {
        case .constant, .column, .groupSlot, .idIn: break
        case .unary(_, let operand), .isNull(let operand, _): operand.visit(body)
        case .binary(_, let a, let b), .like(let a, let b, _), .isDistinct(let a, let b, _):
            a.visit(body)
            b.visit(body)
        case .between(let a, let b, let c, _):
            a.visit(body)
            b.visit(body)
            c.visit(body)
        case .inList(let a, let items, _):
            a.visit(body)
            for item in items { item.visit(body) }
        case .function(_, let arguments): for argument in arguments { argument.visit(body) }
        case .caseWhen(let operand, let branches, let otherwise):
            operand?.visit(body)
            for branch in branches {
                branch.when.visit(body)
                branch.then.visit(body)
            }
            otherwise?.visit(body)
        case .aggregate(let call): call.argument?.visit(body)
        }
    }

    /// The expression with `transform` applied to each node, children first; `transform`
    /// returns nil to keep a node as it is.
    func rewritten(_ transform: (SQLBound) throws -> SQLBound?) rethrows -> SQLBound {
        let node: SQLBound
        switch self {
        case .constant, .column, .groupSlot, .idIn, .aggregate: node = self
        case .unary(let op, let operand): node = .unary(op, try operand.rewritten(transform))
        case .isNull(let operand, let negated): node = .isNull(try operand.rewritten(transform), negated: negated)
        case .binary(let op, let a, let b): node = .binary(op, try a.rewritten(transform), try b.rewritten(transform))
        case .like(let a, let b, let negated): node = .like(try a.rewritten(transform), try b.rewritten(transform), negated: negated)
        case .isDistinct(let a, let b, let negated):
            node = .isDistinct(try a.rewritten(transform), try b.rewritten(transform), negated: negated)
        case .between(let a, let b, let c, let negated):
            node = .between(try a.rewritten(transform), try b.rewritten(transform), try c.rewritten(transform), negated: negated)
        case .inList(let a, let items, let negated):
            node = .inList(try a.rewritten(transform), try items.map { try $0.rewritten(transform) }, negated: negated)
        case .function(let function, let arguments): node = .function(function, try arguments.map { try $0.rewritten(transform) })
        case .caseWhen(let operand, let branches, let otherwise):
            node = .caseWhen(try operand?.rewritten(transform),
                             try branches.map { SQLCaseBranch(when: try $0.when.rewritten(transform), then: try $0.then.rewritten(transform)) },
                             try otherwise?.rewritten(transform))
        }
        return try transform(node) ?? node
    }

    /// The conjuncts of an AND tree.
    var conjuncts: [SQLBound] {
        if case .binary(.and, let a, let b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }
}

/// A set of ids (a full-text match's), compared by identity of its contents.
struct SQLIdSet: Equatable {
    let ids: Set<Id>
    /// The ids in ascending order, for a plan that visits them.
    let sorted: [Id]
}
