/// The parsed form of a Smart SQL statement, before its names are resolved against the
/// store's entities. Every node keeps its position in the statement for error messages.
struct SQLSelect {
    /// One `SELECT` item: `*`, `alias.*`, or an expression with an optional `AS` name.
    enum Item {
        case all(position: Int)
        case allOf(table: String, position: Int)
        /// `text`: the expression as written, which names the column when there is no alias.
        case expression(SQLExpression, alias: String?, text: String)
    }

    /// A table of the `FROM` clause: an entity name or `{Entity}`, with an optional alias.
    struct Table {
        let entity: String
        let alias: String?
        let position: Int

        /// The name columns use to refer to this table.
        var name: String { alias ?? entity }
    }

    enum JoinKind { case inner, left }

    /// A join after the first table: `[LEFT] JOIN table ON condition`, or a `ToOne` link /
    /// many-to-many relation by name, `JOIN table ON owner.link` (the link's target).
    struct Join {
        let kind: JoinKind
        let table: Table
        let condition: SQLExpression
    }

    struct Order {
        let expression: SQLExpression
        let descending: Bool
        /// `NULLS FIRST` (true), `NULLS LAST` (false), or SQL's default: NULLs are the
        /// smallest values, first ascending and last descending (nil).
        let nullsFirst: Bool?
    }

    var explain = false
    var distinct = false
    var items: [Item] = []
    var from: Table?
    var joins: [Join] = []
    var condition: SQLExpression?
    var groupBy: [SQLExpression] = []
    var having: SQLExpression?
    var orderBy: [Order] = []
    var limit: SQLExpression?
    var offset: SQLExpression?
}

/// An expression of the statement, with its position (1-based, in characters).
indirect enum SQLExpression {
    enum Literal {
        case null
        case integer(Int64)
        /// An integer literal beyond Int64 (as SQLite reads it: a real), kept as its digits.
        case real(Double)
        case text(String)
        case blob([UInt8])
    }

    enum BinaryOperator: String {
        case or = "OR", and = "AND"
        case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
        case concatenate = "||"
    }

    enum UnaryOperator: String {
        case not = "NOT", negate = "-", plus = "+"
    }

    case literal(Literal, position: Int)
    /// `?` (nil: the next one), `?N`, or `:name`.
    case parameter(index: Int?, name: String?, position: Int)
    /// A column: `path`, `table.path`, `{Entity:path}`; `path` may be dotted (`address.city`).
    /// `descriptor` marks the SmartStore form, whose special paths (`_soup`,
    /// `_soupEntryId`, `_soupLastModifiedDate`) it resolves.
    case column(table: String?, path: String, descriptor: Bool, position: Int)
    case unary(UnaryOperator, SQLExpression, position: Int)
    case binary(BinaryOperator, SQLExpression, SQLExpression, position: Int)
    /// `x [NOT] BETWEEN low AND high`.
    case between(SQLExpression, low: SQLExpression, high: SQLExpression, negated: Bool, position: Int)
    /// `x [NOT] IN (a, b, ...)`.
    case inList(SQLExpression, [SQLExpression], negated: Bool, position: Int)
    /// `x [NOT] LIKE pattern`.
    case like(SQLExpression, pattern: SQLExpression, negated: Bool, position: Int)
    /// `x IS [NOT] NULL`, and `x IS [NOT] y` (NULL-safe equality).
    case isNull(SQLExpression, negated: Bool, position: Int)
    case isDistinct(SQLExpression, SQLExpression, negated: Bool, position: Int)
    /// `column MATCH 'search'` on a `@FullText` property (or `{Entity} MATCH`, every one).
    case match(SQLExpression, search: SQLExpression, position: Int)
    /// A function call: an aggregate (`COUNT(*)` has `star`) or a scalar function.
    case function(name: String, arguments: [SQLExpression], distinct: Bool, star: Bool, position: Int)
    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
    case caseWhen(operand: SQLExpression?, branches: [(SQLExpression, SQLExpression)], otherwise: SQLExpression?, position: Int)

    var position: Int {
        switch self {
        case .literal(_, let position), .parameter(_, _, let position), .column(_, _, _, let position),
             .unary(_, _, let position), .binary(_, _, _, let position), .between(_, _, _, _, let position),
             .inList(_, _, _, let position), .like(_, _, _, let position), .isNull(_, _, let position),
             .isDistinct(_, _, _, let position), .match(_, _, let position), .function(_, _, _, _, let position),
             .caseWhen(_, _, _, let position):
            return position
        }
    }
}
