/// One token of a Smart SQL statement, with its position (1-based, in characters) for
/// error messages.
struct SQLToken: Equatable {
    enum Kind: Equatable {
        /// A name: a keyword or an identifier (a `"quoted"` or `` `quoted` `` identifier is
        /// never a keyword).
        case word(String, quoted: Bool)
        case integer(String)
        case real(String)
        case string(String)
        case blob([UInt8])
        /// `{Entity}` or `{Entity:path}`: a SmartStore descriptor.
        case descriptor(entity: String, path: String?)
        /// `?`, `?3` (1-based), or `:name` / `@name` / `$name`.
        case positionalParameter(Int?)
        case namedParameter(String)
        /// Punctuation and operators: `( ) , . * + - / % || = == <> != < <= > >= ;`.
        case symbol(String)
        case end
    }

    let kind: Kind
    let position: Int
    /// The statement's text of the token, for "near" in messages.
    let text: String

    /// The keyword this token is (upper-cased), or nil for anything else.
    var keyword: String? {
        if case .word(let word, false) = kind { return word.uppercased() }
        return nil
    }
}

/// Splits a statement into tokens. Everything it refuses is `CofferError.invalidSQL` at the
/// offending character; it never traps, whatever the input.
struct SQLLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ statement: String) {
        scalars = Array(statement.unicodeScalars)
    }

    /// The statement's tokens, ending with `.end`.
    static func tokens(_ statement: String) throws -> [SQLToken] {
        var lexer = SQLLexer(statement)
        var tokens: [SQLToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let at = index + offset
        return at < scalars.count ? scalars[at] : nil
    }

    private func text(from start: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<index])
        return String(view)
    }

    private func error(_ reason: String, at position: Int, near: String) -> CofferError {
        CofferError.invalidSQL(position: position + 1, near: near, reason: reason)
    }

    private mutating func skipSpaceAndComments() throws {
        while let scalar = peek() {
            if scalar.properties.isWhitespace {
                index += 1
            } else if scalar == "-", peek(1) == "-" {
                while let next = peek(), next != "\n" { index += 1 }
            } else if scalar == "/", peek(1) == "*" {
                let start = index
                index += 2
                while true {
                    guard let next = peek() else { throw error("a comment is not closed with */", at: start, near: "/*") }
                    if next == "*", peek(1) == "/" {
                        index += 2
                        break
                    }
                    index += 1
                }
            } else {
                return
            }
        }
    }

    private static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    private static func isNamePart(_ scalar: Unicode.Scalar) -> Bool {
        isNameStart(scalar) || ("0"..."9").contains(scalar) || scalar == "$"
    }

    mutating func next() throws -> SQLToken {
        try skipSpaceAndComments()
        let start = index
        guard let scalar = peek() else { return SQLToken(kind: .end, position: start + 1, text: "") }
        let kind: SQLToken.Kind
        switch scalar {
        case "'":
            kind = .string(try quoted("'", what: "a string"))
        case "\"", "`":
            kind = .word(try quoted(scalar, what: "a quoted name"), quoted: true)
        case "[":
            index += 1
            while let next = peek(), next != "]" { index += 1 }
            guard peek() == "]" else { throw error("a [name] is not closed", at: start, near: text(from: start)) }
            index += 1
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[(start + 1)..<(index - 1)])
            kind = .word(String(view), quoted: true)
        case "{":
            kind = try descriptor(start)
        case "?":
            index += 1
            let digits = start + 1
            while let next = peek(), ("0"..."9").contains(next) { index += 1 }
            if index > digits {
                let number = text(from: digits)
                guard let value = Int(number), value >= 1, value <= 999_999 else {
                    throw error("a parameter number runs from 1 to 999999", at: start, near: text(from: start))
                }
                kind = .positionalParameter(value)
            } else {
                kind = .positionalParameter(nil)
            }
        case ":", "@", "$":
            index += 1
            guard let first = peek(), Self.isNameStart(first) else {
                throw error("a parameter name must follow \(scalar)", at: start, near: String(scalar))
            }
            while let next = peek(), Self.isNamePart(next) { index += 1 }
            kind = .namedParameter(text(from: start + 1))
        case "0"..."9":
            kind = try number(start)
        case "." where peek(1).map({ ("0"..."9").contains($0) }) == true:
            kind = try number(start)
        case "x" where peek(1) == "'", "X" where peek(1) == "'":
            index += 1
            let hex = try quoted("'", what: "a blob literal")
            kind = .blob(try blob(hex, at: start))
        default:
            if Self.isNameStart(scalar) {
                while let next = peek(), Self.isNamePart(next) { index += 1 }
                kind = .word(text(from: start), quoted: false)
            } else {
                kind = .symbol(try symbol(start))
            }
        }
        return SQLToken(kind: kind, position: start + 1, text: text(from: start))
    }

    /// A quoted run (the quote doubled inside stands for itself); the index is on the quote.
    private mutating func quoted(_ quote: Unicode.Scalar, what: String) throws -> String {
        let start = index
        index += 1
        var view = String.UnicodeScalarView()
        while true {
            guard let next = peek() else { throw error("\(what) is not closed", at: start, near: text(from: start)) }
            index += 1
            if next == quote {
                if peek() == quote {
                    index += 1
                    view.append(quote)
                    continue
                }
                return String(view)
            }
            view.append(next)
        }
    }

    private func blob(_ hex: String, at start: Int) throws -> [UInt8] {
        let digits = Array(hex.unicodeScalars)
        guard digits.count % 2 == 0 else { throw error("a blob literal needs an even number of hex digits", at: start, near: text(from: start)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var pair = 0
        while pair < digits.count {
            guard let high = Self.hexValue(digits[pair]),
                  let low = Self.hexValue(digits[pair + 1]) else {
                throw error("a blob literal holds only hex digits", at: start, near: text(from: start))
            }
            bytes.append(high << 4 | low)
            pair += 2
        }
        return bytes
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "0"..."9": return UInt8(scalar.value - 48)
        case "a"..."f": return UInt8(scalar.value - 87)
        case "A"..."F": return UInt8(scalar.value - 55)
        default: return nil
        }
    }

    private mutating func number(_ start: Int) throws -> SQLToken.Kind {
        var isReal = false
        if peek() == "0", peek(1) == "x" || peek(1) == "X" {
            index += 2
            let digits = index
            while let next = peek(), Self.hexValue(next) != nil { index += 1 }
            guard index > digits, index - digits <= 16 else {
                throw error("a hex integer needs 1 to 16 hex digits", at: start, near: text(from: start))
            }
            // Hex literals are 64-bit patterns, as in SQLite: 0xFFFFFFFFFFFFFFFF is -1.
            guard let bits = UInt64(text(from: digits), radix: 16) else {
                throw error("not a hex integer", at: start, near: text(from: start))
            }
            return .integer(String(Int64(bitPattern: bits)))
        }
        while let next = peek(), ("0"..."9").contains(next) { index += 1 }
        if peek() == "." {
            isReal = true
            index += 1
            while let next = peek(), ("0"..."9").contains(next) { index += 1 }
        }
        if peek() == "e" || peek() == "E" {
            let mark = index
            index += 1
            if peek() == "+" || peek() == "-" { index += 1 }
            let digits = index
            while let next = peek(), ("0"..."9").contains(next) { index += 1 }
            if index == digits {
                index = mark
                throw error("an exponent needs digits", at: start, near: text(from: start))
            }
            isReal = true
        }
        if let next = peek(), Self.isNameStart(next) {
            throw error("a number runs into a name", at: start, near: text(from: start) + String(next))
        }
        let literal = text(from: start)
        return isReal ? .real(literal) : .integer(literal)
    }

    private mutating func descriptor(_ start: Int) throws -> SQLToken.Kind {
        index += 1
        while let next = peek(), next != "}" { index += 1 }
        guard peek() == "}" else { throw error("a {descriptor} is not closed with }", at: start, near: text(from: start)) }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[(start + 1)..<index])
        index += 1
        let body = String(view)
        let parts = body.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let entity = parts[0].trimmingSpaces
        guard !entity.isEmpty else { throw error("a {descriptor} names an entity: {Entity} or {Entity:path}", at: start, near: text(from: start)) }
        if parts.count == 2 {
            let path = parts[1].trimmingSpaces
            guard !path.isEmpty else { throw error("a {descriptor} with a colon names a path: {Entity:path}", at: start, near: text(from: start)) }
            return .descriptor(entity: entity, path: path)
        }
        return .descriptor(entity: entity, path: nil)
    }

    private mutating func symbol(_ start: Int) throws -> String {
        guard let scalar = peek() else { return "" }
        let two = peek(1).map { String(scalar) + String($0) }
        if let two, ["||", "==", "<>", "!=", "<=", ">="].contains(two) {
            index += 2
            return two
        }
        if "(),.*+-/%=<>;".unicodeScalars.contains(scalar) {
            index += 1
            return String(scalar)
        }
        throw error("unexpected character \(String(scalar).debugDescription)", at: start, near: String(scalar))
    }
}

extension Substring {
    /// The text without leading and trailing spaces.
    fileprivate var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
