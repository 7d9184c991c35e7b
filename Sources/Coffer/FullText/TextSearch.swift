/// A parsed full-text search (the syntax of `Property.matches(_:)`), independent of any
/// tokenizer: words are tokenized with the searched property's tokenizer when it runs.
///
/// Syntax (SQLite FTS "enhanced query syntax", as Cloudant and SmartStore users write it):
/// - `doctor books`: every word must occur (implicit AND; `AND` may be written);
/// - `"is a doctor"`: a phrase, its words at consecutive positions;
/// - `doc*`: any term starting with `doc`;
/// - `cats OR dogs`: either (`OR` binds looser than AND);
/// - `cats NOT dogs`, `cats -dogs`, `NOT dogs` beside a positive part: without;
/// - parentheses group: `(cats OR dogs) -fish`.
/// Operators are upper case; lower-case `or`/`and`/`not` are words. A search must have at
/// least one positive part: `-dogs` alone is refused.
indirect enum TextSearch: Sendable, Equatable {
    /// A word (its terms, once tokenized, must occur as a phrase); `prefix`: `word*`.
    case word(String, prefix: Bool)
    /// Words that must occur at consecutive positions.
    case phrase(String)
    case and([TextSearch])
    case or([TextSearch])
    case not(TextSearch)

    /// Parses `text`; throws ``CofferError/invalidSearch(search:reason:)`` naming the text.
    static func parse(_ text: String) throws -> TextSearch {
        var parser = Parser(text: text)
        let search = try parser.parse()
        guard search.hasPositivePart else {
            throw CofferError.invalidSearch(search: text, reason: "a search needs a word or phrase that must occur; it has only negations")
        }
        return search
    }

    /// Whether the search can match without a universal set (a negation alone cannot).
    var hasPositivePart: Bool {
        switch self {
        case .word, .phrase: return true
        case .not: return false
        case .and(let parts): return parts.contains(where: \.hasPositivePart)
        case .or(let parts): return parts.allSatisfy(\.hasPositivePart)
        }
    }

    /// The search in its canonical spelling, for `describe()`.
    var summary: String {
        switch self {
        case .word(let word, let prefix): return prefix ? word + "*" : word
        case .phrase(let text): return "\"" + text + "\""
        case .and(let parts): return parts.map { $0.isCompound ? "(\($0.summary))" : $0.summary }.joined(separator: " ")
        case .or(let parts): return parts.map { $0.isCompound ? "(\($0.summary))" : $0.summary }.joined(separator: " OR ")
        case .not(let inner): return "-" + (inner.isCompound ? "(\(inner.summary))" : inner.summary)
        }
    }

    private var isCompound: Bool {
        switch self {
        case .and, .or: return true
        default: return false
        }
    }

    /// A recursive-descent parser over the characters of the search.
    private struct Parser {
        enum Token: Equatable {
            case word(String, prefix: Bool)
            case phrase(String)
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
            case .and: return "AND"
            case .or: return "OR"
            case .not: return "NOT"
            case .minus: return "'-'"
            case .open: return "'('"
            case .close: return "')'"
            }
        }

        func tokenize() throws -> [Token] {
            var tokens: [Token] = []
            var characters = Array(text)[...]
            while let first = characters.first {
                if first.isWhitespace {
                    characters.removeFirst()
                } else if first == "\"" {
                    characters.removeFirst()
                    guard let end = characters.firstIndex(of: "\"") else { throw failure("a quote is not closed") }
                    let phrase = String(characters[..<end])
                    guard phrase.contains(where: { $0.isLetter || $0.isNumber }) else { throw failure("the phrase \"\(phrase)\" has no words") }
                    tokens.append(.phrase(phrase))
                    characters = characters[characters.index(after: end)...]
                } else if first == "(" {
                    characters.removeFirst()
                    tokens.append(.open)
                } else if first == ")" {
                    characters.removeFirst()
                    tokens.append(.close)
                } else if first == "-" {
                    characters.removeFirst()
                    tokens.append(.minus)
                } else {
                    var word = ""
                    while let next = characters.first, !next.isWhitespace, !"\"()".contains(next) {
                        word.append(next)
                        characters.removeFirst()
                    }
                    switch word {
                    case "AND": tokens.append(.and)
                    case "OR": tokens.append(.or)
                    case "NOT": tokens.append(.not)
                    default:
                        let prefix = word.hasSuffix("*")
                        let body = prefix ? String(word.dropLast()) : word
                        guard body.contains(where: { $0.isLetter || $0.isNumber }) else {
                            throw failure("'\(word)' has no letters or digits to search for")
                        }
                        guard !body.contains("*") else { throw failure("'\(word)': '*' may only end a word") }
                        tokens.append(.word(body, prefix: prefix))
                    }
                }
            }
            return tokens
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
                return .not(try parsePrimary())
            }
            return try parsePrimary()
        }

        mutating func parsePrimary() throws -> TextSearch {
            let token = tokens[position]
            position += 1
            switch token {
            case .word(let word, let prefix): return .word(word, prefix: prefix)
            case .phrase(let phrase): return .phrase(phrase)
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
