/// Parses one `SELECT` statement (optionally `EXPLAIN SELECT`) by recursive descent, with
/// SQLite's operator precedence. Errors are `CofferError.invalidSQL` at the token where the
/// statement stops making sense; nesting is bounded, so no input exhausts the stack.
struct SQLParser {
    private let tokens: [SQLToken]
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var depth = 0
    /// The next `?` number (`?` after `?N` continues from N + 1, as in SQLite).
    private var nextParameter = 1

    /// The deepest expression nesting accepted; deeper is an error, not a crash. Each
    /// parenthesis, prefix operator and operator of a chain counts one level, a function
    /// call or CASE two; the deepest statement fits a 512 KiB stack in a debug build.
    static let depthLimit = 64

    /// Words that end an expression or a clause: never an implicit alias.
    private static let reserved: Set<String> = [
        "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "JOIN", "LEFT", "INNER", "CROSS",
        "OUTER", "ON", "AS", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN", "MATCH", "CASE", "WHEN", "THEN",
        "ELSE", "END", "DISTINCT", "ALL", "ASC", "DESC", "NULLS", "UNION", "EXCEPT", "INTERSECT", "EXPLAIN", "ESCAPE",
        "NATURAL", "USING", "RIGHT", "FULL",
    ]

    init(statement: String, tokens: [SQLToken]) {
        self.tokens = tokens
        self.scalars = Array(statement.unicodeScalars)
    }

    /// The statement parsed, or an error naming the position.
    static func parse(_ statement: String) throws -> SQLSelect {
        var parser = SQLParser(statement: statement, tokens: try SQLLexer.tokens(statement))
        return try parser.statement()
    }

    // MARK: - Tokens

    private var current: SQLToken { tokens[min(index, tokens.count - 1)] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private func error(_ reason: String, at token: SQLToken? = nil) -> CofferError {
        let token = token ?? current
        return CofferError.invalidSQL(position: token.position, near: token.kind == .end ? "the end" : token.text, reason: reason)
    }

    private func isKeyword(_ word: String) -> Bool { current.keyword == word }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private mutating func accept(keyword word: String) -> Bool {
        guard isKeyword(word) else { return false }
        advance()
        return true
    }

    private mutating func accept(symbol: String) -> Bool {
        guard isSymbol(symbol) else { return false }
        advance()
        return true
    }

    private mutating func expect(keyword word: String, _ context: String) throws {
        guard accept(keyword: word) else { throw error("expected \(word) \(context)") }
    }

    private mutating func expect(symbol: String, _ context: String) throws {
        guard accept(symbol: symbol) else { throw error("expected \(symbol) \(context)") }
    }

    /// A name (an identifier, quoted or not, that is not a reserved word).
    private mutating func name(_ what: String) throws -> String {
        if case .word(let word, let quoted) = current.kind, quoted || !Self.reserved.contains(word.uppercased()) {
            advance()
            return word
        }
        throw error("expected \(what)")
    }

    // MARK: - Statement

    private mutating func statement() throws -> SQLSelect {
        var select = SQLSelect()
        select.explain = accept(keyword: "EXPLAIN")
        guard accept(keyword: "SELECT") else {
            throw error(current.kind == .end ? "the statement is empty: expected SELECT" : "expected SELECT (only SELECT statements are supported)")
        }
        if accept(keyword: "DISTINCT") {
            select.distinct = true
        } else {
            _ = accept(keyword: "ALL")
        }
        repeat {
            select.items.append(try item())
        } while accept(symbol: ",")
        if accept(keyword: "FROM") {
            select.from = try table()
            try joins(into: &select)
        }
        if accept(keyword: "WHERE") { select.condition = try expression() }
        if accept(keyword: "GROUP") {
            try expect(keyword: "BY", "after GROUP")
            repeat { select.groupBy.append(try expression()) } while accept(symbol: ",")
        }
        if accept(keyword: "HAVING") { select.having = try expression() }
        if accept(keyword: "ORDER") {
            try expect(keyword: "BY", "after ORDER")
            repeat { select.orderBy.append(try order()) } while accept(symbol: ",")
        }
        if accept(keyword: "LIMIT") {
            let first = try expression()
            if accept(keyword: "OFFSET") {
                select.limit = first
                select.offset = try expression()
            } else if accept(symbol: ",") {
                // LIMIT offset, count (SQLite's and MySQL's form).
                select.offset = first
                select.limit = try expression()
            } else {
                select.limit = first
            }
        }
        _ = accept(symbol: ";")
        guard current.kind == .end else {
            if isKeyword("UNION") || isKeyword("EXCEPT") || isKeyword("INTERSECT") {
                throw error("compound selects (\(current.keyword ?? "")) are not supported")
            }
            throw error("unexpected text after the statement")
        }
        return select
    }

    private mutating func item() throws -> SQLSelect.Item {
        let start = current
        if accept(symbol: "*") { return .all(position: start.position) }
        // table.* : a name, a dot and a star.
        if case .word(let word, let quoted) = current.kind, quoted || !Self.reserved.contains(word.uppercased()),
           index + 2 < tokens.count, tokens[index + 1].kind == .symbol("."), tokens[index + 2].kind == .symbol("*") {
            advance(); advance(); advance()
            return .allOf(table: word, position: start.position)
        }
        if case .descriptor(let entity, nil) = current.kind, index + 2 < tokens.count,
           tokens[index + 1].kind == .symbol("."), tokens[index + 2].kind == .symbol("*") {
            advance(); advance(); advance()
            return .allOf(table: entity, position: start.position)
        }
        let first = index
        let value = try expression()
        let last = tokens[max(first, index - 1)]
        // The item's text: from its first token to the end of its last.
        let from = max(0, start.position - 1)
        let to = min(scalars.count, last.position - 1 + last.text.unicodeScalars.count)
        let text = from < to ? String(String.UnicodeScalarView(scalars[from..<to])) : start.text
        return .expression(value, alias: try alias(), text: text)
    }

    /// `AS name`, or a bare name that is not a reserved word.
    private mutating func alias() throws -> String? {
        if accept(keyword: "AS") {
            if case .string(let text) = current.kind {
                advance()
                return text
            }
            return try name("a name after AS")
        }
        if case .word(let word, let quoted) = current.kind, quoted || !Self.reserved.contains(word.uppercased()) {
            advance()
            return word
        }
        return nil
    }

    private mutating func table() throws -> SQLSelect.Table {
        let start = current
        let entity: String
        switch current.kind {
        case .descriptor(let name, nil):
            entity = name
            advance()
        case .descriptor(_, .some):
            throw error("a table is {Entity}, without a path")
        case .symbol("("):
            throw error("subqueries are not supported")
        default:
            entity = try name("an entity name")
        }
        return SQLSelect.Table(entity: entity, alias: try alias(), position: start.position)
    }

    private mutating func joins(into select: inout SQLSelect) throws {
        while true {
            let start = current
            var kind = SQLSelect.JoinKind.inner
            var needsCondition = true
            if accept(symbol: ",") {
                needsCondition = false
            } else if accept(keyword: "CROSS") {
                try expect(keyword: "JOIN", "after CROSS")
                needsCondition = false
            } else if accept(keyword: "LEFT") {
                _ = accept(keyword: "OUTER")
                try expect(keyword: "JOIN", "after LEFT")
                kind = .left
            } else if accept(keyword: "INNER") {
                try expect(keyword: "JOIN", "after INNER")
            } else if accept(keyword: "JOIN") {
            } else if isKeyword("RIGHT") || isKeyword("FULL") || isKeyword("NATURAL") {
                throw error("\(current.keyword ?? "") joins are not supported: inner, left and cross joins are")
            } else {
                return
            }
            let table = try table()
            var condition = SQLExpression.literal(.integer(1), position: start.position)
            if needsCondition {
                if accept(keyword: "ON") {
                    condition = try expression()
                } else if isKeyword("USING") {
                    throw error("JOIN ... USING is not supported: write JOIN ... ON")
                } else if kind == .left {
                    throw error("expected ON after LEFT JOIN \(table.name)")
                }
            }
            select.joins.append(SQLSelect.Join(kind: kind, table: table, condition: condition))
        }
    }

    private mutating func order() throws -> SQLSelect.Order {
        let value = try expression()
        var descending = false
        if accept(keyword: "DESC") {
            descending = true
        } else {
            _ = accept(keyword: "ASC")
        }
        var nullsFirst: Bool?
        if accept(keyword: "NULLS") {
            if accept(keyword: "FIRST") {
                nullsFirst = true
            } else if accept(keyword: "LAST") {
                nullsFirst = false
            } else {
                throw error("expected FIRST or LAST after NULLS")
            }
        }
        return SQLSelect.Order(expression: value, descending: descending, nullsFirst: nullsFirst)
    }

    // MARK: - Expressions

    /// One level more: a parenthesis, a prefix operator, a function call, or one more
    /// operator of a chain (`a + b + c` is a tree as deep as it is long). The caller gives
    /// the level back.
    private mutating func deepen() throws {
        depth += 1
        guard depth <= Self.depthLimit else { throw error("the expression nests deeper than \(Self.depthLimit) levels") }
    }

    mutating func expression() throws -> SQLExpression {
        try binary(Self.orLevel)
    }

    // The binding levels, loosest first (SQLite's): OR, AND, NOT, the equality family
    // (= <> IS IN LIKE BETWEEN MATCH), comparisons, + -, * / %, ||.
    private static let orLevel = 1, andLevel = 2, notLevel = 3, equalityLevel = 4, comparisonLevel = 5
    private static let additiveLevel = 6, multiplicativeLevel = 7, concatenationLevel = 8

    /// The binding level of the infix operator at the current token, or nil when none starts
    /// there (`NOT` is infix only before IN, LIKE, BETWEEN or NULL).
    private var infixLevel: Int? {
        switch current.kind {
        case .symbol("=="), .symbol("="), .symbol("<>"), .symbol("!="): return Self.equalityLevel
        case .symbol("<"), .symbol("<="), .symbol(">"), .symbol(">="): return Self.comparisonLevel
        case .symbol("+"), .symbol("-"): return Self.additiveLevel
        case .symbol("*"), .symbol("/"), .symbol("%"): return Self.multiplicativeLevel
        case .symbol("||"): return Self.concatenationLevel
        default: break
        }
        switch current.keyword {
        case "OR": return Self.orLevel
        case "AND": return Self.andLevel
        case "IS", "IN", "LIKE", "BETWEEN", "MATCH": return Self.equalityLevel
        case "NOT":
            let next = index + 1 < tokens.count ? tokens[index + 1].keyword : nil
            return ["IN", "LIKE", "BETWEEN", "NULL"].contains(next ?? "") ? Self.equalityLevel : nil
        default: return nil
        }
    }

    /// An expression of operators binding at `minimum` or tighter, by precedence climbing:
    /// one frame per level of nesting, not one per precedence level, so that deep input stays
    /// within a small stack.
    private mutating func binary(_ minimum: Int) throws -> SQLExpression {
        try deepen()
        defer { depth -= 1 }
        var left: SQLExpression
        if minimum <= Self.notLevel, isKeyword("NOT") {
            let position = current.position
            advance()
            left = .unary(.not, try binary(Self.notLevel), position: position)
        } else {
            left = try unary()
        }
        var levels = 0
        defer { depth -= levels }
        while let level = infixLevel, level >= minimum {
            try deepen()
            levels += 1
            left = try infix(left, level: level)
        }
        return left
    }

    /// The operator at the current token applied to `left`, its right side binding tighter
    /// (operators of one level associate to the left).
    private mutating func infix(_ left: SQLExpression, level: Int) throws -> SQLExpression {
        let position = current.position
        let tighter = level + 1
        if level == Self.concatenationLevel {
            advance()
            return .binary(.concatenate, left, try unary(), position: position)
        }
        let simple: [String: SQLExpression.BinaryOperator] = [
            "OR": .or, "AND": .and, "=": .equal, "==": .equal, "<>": .notEqual, "!=": .notEqual, "<": .less, "<=": .lessOrEqual,
            ">": .greater, ">=": .greaterOrEqual, "+": .add, "-": .subtract, "*": .multiply, "/": .divide, "%": .remainder,
        ]
        let name: String? = if case .symbol(let symbol) = current.kind { symbol } else { current.keyword }
        if let name, let op = simple[name] {
            advance()
            return .binary(op, left, try binary(op == .or ? Self.andLevel : (op == .and ? Self.notLevel : tighter)), position: position)
        }
        if accept(keyword: "IS") {
            let negated = accept(keyword: "NOT")
            if accept(keyword: "NULL") { return .isNull(left, negated: negated, position: position) }
            return .isDistinct(left, try binary(tighter), negated: negated, position: position)
        }
        if accept(keyword: "MATCH") { return .match(left, search: try binary(tighter), position: position) }
        let negated = accept(keyword: "NOT")
        if accept(keyword: "IN") { return .inList(left, try list(), negated: negated, position: position) }
        if accept(keyword: "LIKE") {
            let pattern = try binary(tighter)
            if isKeyword("ESCAPE") { throw error("LIKE ... ESCAPE is not supported") }
            return .like(left, pattern: pattern, negated: negated, position: position)
        }
        if accept(keyword: "BETWEEN") {
            let low = try binary(tighter)
            try expect(keyword: "AND", "in BETWEEN ... AND ...")
            return .between(left, low: low, high: try binary(tighter), negated: negated, position: position)
        }
        if negated, accept(keyword: "NULL") {
            // `x NOT NULL` (SQLite's postfix form).
            return .isNull(left, negated: true, position: position)
        }
        throw error("expected an operator")
    }

    private mutating func list() throws -> [SQLExpression] {
        try expect(symbol: "(", "after IN")
        if isKeyword("SELECT") { throw error("subqueries are not supported") }
        var items: [SQLExpression] = []
        if accept(symbol: ")") { return items }
        repeat { items.append(try expression()) } while accept(symbol: ",")
        try expect(symbol: ")", "to close the IN list")
        return items
    }

    private mutating func unary() throws -> SQLExpression {
        let position = current.position
        if accept(symbol: "-") {
            // A negative literal is one literal, so that -9223372036854775808 is an integer.
            if case .integer(let digits) = current.kind {
                advance()
                // Decimal digits up to 9223372036854775808; a hex literal is already its Int64.
                if let value = Int64("-" + digits) { return .literal(.integer(value), position: position) }
                if let value = Int64(digits) {
                    let (negated, overflow) = Int64(0).subtractingReportingOverflow(value)
                    return .literal(overflow ? .real(-Double(value)) : .integer(negated), position: position)
                }
                return .literal(.real(-(Double(digits) ?? .infinity)), position: position)
            }
            try deepen()
            defer { depth -= 1 }
            return .unary(.negate, try unary(), position: position)
        }
        if accept(symbol: "+") {
            try deepen()
            defer { depth -= 1 }
            return .unary(.plus, try unary(), position: position)
        }
        return try primary()
    }

    private mutating func primary() throws -> SQLExpression {
        let token = current
        let position = token.position
        switch token.kind {
        case .integer(let digits):
            advance()
            if let value = Int64(digits) { return .literal(.integer(value), position: position) }
            // Too large for an integer: a real, as SQLite reads it.
            return .literal(.real(Double(digits) ?? .infinity), position: position)
        case .real(let digits):
            advance()
            guard let value = Double(digits) else { throw error("not a number", at: token) }
            return .literal(.real(value), position: position)
        case .string(let text):
            advance()
            return .literal(.text(text), position: position)
        case .blob(let bytes):
            advance()
            return .literal(.blob(bytes), position: position)
        case .positionalParameter(let number):
            advance()
            let index = number ?? nextParameter
            nextParameter = index + 1
            return .parameter(index: index, name: nil, position: position)
        case .namedParameter(let name):
            advance()
            return .parameter(index: nil, name: name, position: position)
        case .descriptor(let entity, let path):
            advance()
            // {Entity} alone stands for the whole entity (in MATCH).
            return .column(table: entity, path: path ?? "", descriptor: true, position: position)
        case .symbol("("):
            advance()
            if isKeyword("SELECT") { throw error("subqueries are not supported") }
            let inner = try expression()
            try expect(symbol: ")", "to close the parenthesis")
            return inner
        case .word(let word, let quoted):
            if !quoted {
                switch word.uppercased() {
                case "NULL":
                    advance()
                    return .literal(.null, position: position)
                case "TRUE":
                    advance()
                    return .literal(.integer(1), position: position)
                case "FALSE":
                    advance()
                    return .literal(.integer(0), position: position)
                case "CASE":
                    advance()
                    return try caseWhen(position)
                case "EXISTS", "SELECT":
                    throw error("subqueries are not supported")
                default:
                    if Self.reserved.contains(word.uppercased()) { throw error("expected an expression") }
                }
            }
            advance()
            if !quoted, isSymbol("(") {
                return try call(word, position: position)
            }
            // A dotted path: name(.name)*; the first part may be a table.
            var parts = [word]
            while isSymbol(".") {
                advance()
                parts.append(try name("a name after the dot"))
            }
            if parts.count == 1 { return .column(table: nil, path: word, descriptor: false, position: position) }
            // Resolved later: `a.b.c` is table `a`, path `b.c` when `a` names a table, else the path `a.b.c`.
            return .column(table: parts[0], path: parts.dropFirst().joined(separator: "."), descriptor: false, position: position)
        case .end:
            throw error("the statement ends where an expression was expected")
        default:
            throw error("expected an expression")
        }
    }

    private mutating func call(_ name: String, position: Int) throws -> SQLExpression {
        // A call counts one level more than a parenthesis: binding one takes more stack.
        try deepen()
        defer { depth -= 1 }
        try expect(symbol: "(", "after \(name)")
        if accept(symbol: "*") {
            try expect(symbol: ")", "after \(name)(*")
            return .function(name: name.uppercased(), arguments: [], distinct: false, star: true, position: position)
        }
        let distinct = accept(keyword: "DISTINCT")
        var arguments: [SQLExpression] = []
        if !isSymbol(")") {
            repeat { arguments.append(try expression()) } while accept(symbol: ",")
        }
        try expect(symbol: ")", "to close \(name)(")
        return .function(name: name.uppercased(), arguments: arguments, distinct: distinct, star: false, position: position)
    }

    private mutating func caseWhen(_ position: Int) throws -> SQLExpression {
        try deepen()
        defer { depth -= 1 }
        let operand = isKeyword("WHEN") ? nil : try expression()
        var branches: [(SQLExpression, SQLExpression)] = []
        while accept(keyword: "WHEN") {
            let condition = try expression()
            try expect(keyword: "THEN", "after CASE ... WHEN ...")
            branches.append((condition, try expression()))
        }
        guard !branches.isEmpty else { throw error("CASE needs at least one WHEN") }
        let otherwise = accept(keyword: "ELSE") ? try expression() : nil
        try expect(keyword: "END", "to close CASE")
        return .caseWhen(operand: operand, branches: branches, otherwise: otherwise, position: position)
    }
}
