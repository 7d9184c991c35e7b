/// A parsed full-text search (the syntax of `Property.matches(_:)`), independent of any
/// tokenizer: words are tokenized with the searched property's tokenizer when it runs.
///
/// Syntax (SQLite FTS "enhanced query syntax", as Cloudant and SmartStore users write it):
/// - `doctor books`: every word must occur (implicit AND; `AND` may be written);
/// - `"is a doctor"`: a phrase, its words at consecutive positions;
/// - `doc*`: any term starting with `doc`;
/// - `cats OR dogs`: either (`OR` binds looser than AND);
/// - `cats NOT dogs`, `cats -dogs`, `NOT dogs`: without, wherever it stands (set difference
///   from what the rest of the enclosing conjunction matches);
/// - parentheses group: `(cats OR dogs) -fish`, `birds (cats OR -dogs)`;
/// - `cats NEAR dogs`, `cats NEAR/3 "big dogs"`: both within 10 (or 3) terms of each other in
///   one property (FTS4's NEAR; chains `a NEAR b NEAR c` need each next to the previous);
/// - `title:cats`, `title:"big dogs"`, `title:cat*`: only in the property named `title`.
/// Operators are upper case; lower-case `or`/`and`/`not`/`near` are words. A search must be
/// bounded (``isBounded``): `-dogs` or `cats OR -dogs` alone is refused.
indirect enum TextSearch: Sendable, Equatable {
    /// A word (its terms, once tokenized, must occur as a phrase); `prefix`: `word*`.
    case word(String, prefix: Bool)
    /// Words that must occur at consecutive positions.
    case phrase(String)
    case and([TextSearch])
    case or([TextSearch])
    case not(TextSearch)
    /// A word or phrase (`inner`) that must occur in the property named `property`.
    case field(String, TextSearch)
    /// Words, prefixes or phrases (possibly `field`), each occurring within `distances[i]`
    /// terms of the next one, in one property.
    case near([TextSearch], distances: [Int])

    /// The distance of `NEAR` without `/n` (FTS4's).
    static let defaultNearDistance = 10

    /// Parses `text`; throws ``CofferError/invalidSearch(search:reason:)`` naming the text.
    static func parse(_ text: String) throws -> TextSearch {
        var parser = Parser(text: text)
        let search = try parser.parse()
        guard search.isBounded else {
            throw CofferError.invalidSearch(search: text, reason: "a search needs a word or phrase that must occur: "
                + "it has only negations, or an alternative of only negations (as in 'cats OR -dogs'), and negations are "
                + "taken from what the rest of the search matches")
        }
        return search
    }

    /// Whether the search matches within the objects holding one of its terms, so needs no
    /// universal set: a negation alone is not; an alternative is when each of its branches
    /// is; a conjunction is when one of its parts is (its other parts, negations included,
    /// are then answered within that part's matches).
    var isBounded: Bool {
        switch self {
        case .word, .phrase, .field, .near: return true
        case .not: return false
        case .and(let parts): return parts.contains(where: \.isBounded)
        case .or(let parts): return parts.allSatisfy(\.isBounded)
        }
    }

    /// The property names used by `field` terms.
    var fields: Set<String> {
        switch self {
        case .word, .phrase: return []
        case .field(let name, _): return [name]
        case .not(let inner): return inner.fields
        case .and(let parts), .or(let parts), .near(let parts, _): return parts.reduce(into: []) { $0.formUnion($1.fields) }
        }
    }

    /// A `NEAR` whose operands name different properties (`title:cats NEAR body:dogs`),
    /// which no object can satisfy: its terms must occur in one property.
    var nearAcrossProperties: TextSearch? {
        switch self {
        case .word, .phrase: return nil
        case .field(_, let inner), .not(let inner): return inner.nearAcrossProperties
        case .and(let parts), .or(let parts): return parts.lazy.compactMap(\.nearAcrossProperties).first
        case .near: return fields.count > 1 ? self : nil
        }
    }

    /// The search in its canonical spelling, for `describe()`.
    var summary: String {
        switch self {
        case .word(let word, let prefix): return prefix ? word + "*" : word
        case .phrase(let text): return "\"" + text + "\""
        case .and(let parts): return parts.map { $0.isCompound ? "(\($0.summary))" : $0.summary }.joined(separator: " ")
        case .or(let parts): return parts.map { $0.isCompound ? "(\($0.summary))" : $0.summary }.joined(separator: " OR ")
        case .not(let inner): return "-" + (inner.isCompound || inner.isNegation ? "(\(inner.summary))" : inner.summary)
        case .field(let name, let inner): return name + ":" + inner.summary
        case .near(let parts, let distances):
            var text = parts[0].summary
            for (part, distance) in zip(parts.dropFirst(), distances) { text += " NEAR/\(distance) " + part.summary }
            return text
        }
    }

    private var isCompound: Bool {
        switch self {
        case .and, .or, .near: return true
        default: return false
        }
    }

    /// A word, prefix or phrase, possibly restricted to a property: what NEAR joins.
    var isTerm: Bool {
        switch self {
        case .word, .phrase, .field: return true
        default: return false
        }
    }

    private var isNegation: Bool {
        if case .not = self { return true }
        return false
    }

    /// A recursive-descent parser over the characters of the search.
    private struct Parser {
        enum Token: Equatable {
            case word(String, prefix: Bool)
            case phrase(String)
            /// `name:` right before a word or phrase.
            case field(String)
            case near(Int)
            case and, or, not, minus, open, close
        }

        let text: String
        var tokens: [Token] = []
        var position = 0
        var depth = 0

        init(text: String) {
            self.text = text
        }

        func failure(_ reason: String) -> CofferError {
            CofferError.invalidSearch(search: text, reason: reason)
        }

        mutating func parse() throws -> TextSearch {
            tokens = try tokenize()
            guard !tokens.isEmpty else { throw failure("the search is empty") }
            let search = try parseOr()
            guard position == tokens.count else {
                throw failure(tokens[position] == .close ? "a ')' has no matching '('" : "unexpected \(describe(tokens[position]))")
            }
            return search
        }

        func describe(_ token: Token) -> String {
            switch token {
            case .word(let word, let prefix): return "'\(word)\(prefix ? "*" : "")'"
            case .phrase(let phrase): return "\"\(phrase)\""
            case .field(let name): return "'\(name):'"
            case .near(let distance): return "NEAR/\(distance)"
            case .and: return "AND"
            case .or: return "OR"
            case .not: return "NOT"
            case .minus: return "'-'"
            case .open: return "'('"
            case .close: return "')'"
            }
        }

        /// The search's tokens: phrases, parentheses, `-`, operators, and words (each
        /// possibly after a `name:`).
        func tokenize() throws -> [Token] {
            var tokens: [Token] = []
            var characters = Array(text)[...]
            while let first = characters.first {
                if first.isWhitespace {
                    characters.removeFirst()
                } else if first == "\"" {
                    tokens.append(try phrase(&characters))
                } else if let punctuation = Self.punctuation[first] {
                    characters.removeFirst()
                    tokens.append(punctuation)
                } else {
                    let word = Self.word(&characters)
                    if let keyword = try keyword(word) {
                        tokens.append(keyword)
                    } else {
                        try appendTerm(word, to: &tokens, followedBy: characters.first)
                    }
                }
            }
            return tokens
        }

        /// The characters that are tokens by themselves.
        static let punctuation: [Character: Token] = ["(": .open, ")": .close, "-": .minus]

        /// The quoted phrase `characters` starts with; it must be closed and hold a word.
        func phrase(_ characters: inout ArraySlice<Character>) throws -> Token {
            characters.removeFirst()
            guard let end = characters.firstIndex(of: "\"") else { throw failure("a quote is not closed") }
            let phrase = String(characters[..<end])
            guard phrase.contains(where: { $0.isLetter || $0.isNumber }) else { throw failure("the phrase \"\(phrase)\" has no words") }
            characters = characters[characters.index(after: end)...]
            return .phrase(phrase)
        }

        /// The run of characters up to whitespace, a quote or a parenthesis.
        static func word(_ characters: inout ArraySlice<Character>) -> String {
            var word = ""
            while let next = characters.first, !next.isWhitespace, !"\"()".contains(next) {
                word.append(next)
                characters.removeFirst()
            }
            return word
        }

        /// The operator `word` spells (`AND`, `OR`, `NOT`, `NEAR`, `NEAR/n`), or nil for a term.
        func keyword(_ word: String) throws -> Token? {
            switch word {
            case "AND": return .and
            case "OR": return .or
            case "NOT": return .not
            case "NEAR": return .near(TextSearch.defaultNearDistance)
            case _ where word.hasPrefix("NEAR/"):
                let digits = word.dropFirst(5)
                guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                      let distance = Int(digits), distance <= Int(Int32.max) else {
                    throw failure("'\(word)': NEAR/ needs a distance in terms, a whole number from 0 to \(Int32.max)")
                }
                return .near(distance)
            default:
                return nil
            }
        }

        /// A term: a word or prefix (`word*`), possibly after a property name (`name:word`).
        /// `name:` alone must be followed directly by a quoted phrase (`next`).
        func appendTerm(_ word: String, to tokens: inout [Token], followedBy next: Character?) throws {
            var word = word
            if let colon = word.firstIndex(of: ":"), Self.isFieldName(word[..<colon]) {
                tokens.append(.field(String(word[..<colon])))
                word = String(word[word.index(after: colon)...])
                if word.isEmpty {
                    // `name:"a phrase"`: the quote follows the colon directly.
                    guard next == "\"" else {
                        throw failure("'\(tokens.last.map(describe) ?? "")' needs a word or phrase right after the colon")
                    }
                    return
                }
            }
            let prefix = word.hasSuffix("*")
            let body = prefix ? String(word.dropLast()) : word
            guard body.contains(where: { $0.isLetter || $0.isNumber }) else {
                throw failure("'\(word)' has no letters or digits to search for")
            }
            guard !body.contains("*") else { throw failure("'\(word)': '*' may only end a word") }
            tokens.append(.word(body, prefix: prefix))
        }

        /// A property name before `:`: a letter or `_`, then letters, digits or `_` (so
        /// `12:30` stays a word). Dots allow an embedded leaf's path.
        static func isFieldName(_ text: Substring) -> Bool {
            guard let first = text.first, first.isLetter || first == "_" else { return false }
            return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
        }

        mutating func parseOr() throws -> TextSearch {
            var parts = [try parseAnd()]
            while position < tokens.count, tokens[position] == .or {
                position += 1
                guard position < tokens.count, tokens[position] != .close, tokens[position] != .or else {
                    throw failure("OR needs a word, phrase or group after it")
                }
                parts.append(try parseAnd())
            }
            return parts.count == 1 ? parts[0] : .or(parts)
        }

        mutating func parseAnd() throws -> TextSearch {
            var parts: [TextSearch] = []
            while position < tokens.count, tokens[position] != .or, tokens[position] != .close {
                if tokens[position] == .and {
                    guard !parts.isEmpty else { throw failure("AND needs a word, phrase or group before it") }
                    position += 1
                    guard position < tokens.count, ![.or, .close, .and].contains(tokens[position]) else {
                        throw failure("AND needs a word, phrase or group after it")
                    }
                    continue
                }
                parts.append(try parseUnary())
            }
            guard !parts.isEmpty else {
                throw failure(position < tokens.count ? "\(describe(tokens[position])) needs a word, phrase or group before it" : "the search has nothing to look for")
            }
            return parts.count == 1 ? parts[0] : .and(parts)
        }

        mutating func parseUnary() throws -> TextSearch {
            let token = tokens[position]
            if token == .not || token == .minus {
                position += 1
                guard position < tokens.count, ![.or, .and, .close, .not, .minus].contains(tokens[position]) else {
                    throw failure("\(describe(token)) needs a word, phrase or group after it")
                }
                return .not(try parseNear())
            }
            return try parseNear()
        }

        /// A primary, or a NEAR chain of words, prefixes and phrases (NEAR binds tightest).
        mutating func parseNear() throws -> TextSearch {
            let first = try parsePrimary()
            var parts = [first]
            var distances: [Int] = []
            while position < tokens.count, case .near(let distance) = tokens[position] {
                position += 1
                guard parts[parts.count - 1].isTerm, position < tokens.count else {
                    throw failure("NEAR joins words, prefixes and phrases, one on each side")
                }
                let next = try parsePrimary()
                guard next.isTerm else { throw failure("NEAR joins words, prefixes and phrases, one on each side") }
                parts.append(next)
                distances.append(distance)
            }
            return parts.count == 1 ? first : .near(parts, distances: distances)
        }

        mutating func parsePrimary() throws -> TextSearch {
            let token = tokens[position]
            position += 1
            switch token {
            case .word(let word, let prefix): return .word(word, prefix: prefix)
            case .phrase(let phrase): return .phrase(phrase)
            case .field(let name):
                guard position < tokens.count else { throw failure("'\(name):' needs a word or phrase after it") }
                switch tokens[position] {
                case .word(let word, let prefix):
                    position += 1
                    return .field(name, .word(word, prefix: prefix))
                case .phrase(let phrase):
                    position += 1
                    return .field(name, .phrase(phrase))
                default:
                    throw failure("'\(name):' applies to a word or phrase, not \(describe(tokens[position]))")
                }
            case .near:
                throw failure("NEAR joins words, prefixes and phrases, one on each side")
            case .open:
                depth += 1
                // Deep nesting is refused before it can exhaust the stack.
                guard depth <= 64 else { throw failure("parentheses nest deeper than 64 levels") }
                guard position < tokens.count, tokens[position] != .close else { throw failure("'()' is empty") }
                let inner = try parseOr()
                guard position < tokens.count, tokens[position] == .close else { throw failure("a '(' is not closed") }
                position += 1
                depth -= 1
                return inner
            default:
                throw failure("unexpected \(describe(token))")
            }
        }
    }
}
