extension RegexPattern {
    /// A parsed pattern.
    indirect enum Node {
        case empty
        case scalar(Unicode.Scalar, fold: Bool)
        case any(dotAll: Bool)
        case set(Int, fold: Bool)
        case assert(Assertion)
        case sequence([Node])
        case alternatives([Node])
        case repetition(Node, min: Int, max: Int?)
    }

    /// Flags in effect: `i` (case-insensitive), `m` (`^ $` at lines), `s` (`.` matches
    /// newlines).
    struct Flags {
        var caseInsensitive = false
        var multiline = false
        var dotAll = false
    }

    /// A recursive-descent parser over the pattern's scalars.
    struct Parser {
        let pattern: [Unicode.Scalar]
        var position = 0
        var depth = 0
        var flags = Flags()
        var sets: [ScalarSet] = []

        init(_ pattern: [Unicode.Scalar]) {
            self.pattern = pattern
        }

        func failure(_ reason: String) -> SyntaxError {
            SyntaxError(reason: reason, offset: position)
        }

        var peek: Unicode.Scalar? { position < pattern.count ? pattern[position] : nil }

        mutating func take() -> Unicode.Scalar? {
            guard position < pattern.count else { return nil }
            position += 1
            return pattern[position - 1]
        }

        mutating func take(_ scalar: Unicode.Scalar) -> Bool {
            guard peek == scalar else { return false }
            position += 1
            return true
        }

        mutating func parse() throws -> Node {
            let node = try alternatives()
            guard position == pattern.count else { throw failure("')' has no matching '('") }
            return node
        }

        mutating func alternatives() throws -> Node {
            // Flags set inside a group end with it; saved by the group.
            var branches = [try sequence()]
            while take("|") { branches.append(try sequence()) }
            return branches.count == 1 ? branches[0] : .alternatives(branches)
        }

        mutating func sequence() throws -> Node {
            var items: [Node] = []
            while let next = peek, next != "|", next != ")" {
                guard let atom = try atom() else { continue }
                items.append(try quantified(atom))
            }
            return items.isEmpty ? .empty : items.count == 1 ? items[0] : .sequence(items)
        }

        /// The atom with its quantifier, if one follows. One quantifier per atom (as PCRE):
        /// a chain such as `a**` is refused, which also bounds the nesting of the tree.
        mutating func quantified(_ atom: Node) throws -> Node {
            guard let next = peek else { return atom }
            let bounds: (Int, Int?)
            switch next {
            case "*": position += 1; bounds = (0, nil)
            case "+": position += 1; bounds = (1, nil)
            case "?": position += 1; bounds = (0, 1)
            case "{":
                guard let parsed = try braces() else { return atom }
                bounds = parsed
            default: return atom
            }
            // Lazy quantifiers match the same texts; possessive ones would need backtracking rules.
            _ = take("?")
            if peek == "+" { throw failure("possessive quantifiers are not supported") }
            if let after = peek, after == "*" || after == "?" || (after == "{" && isBraces) {
                throw failure("a quantifier cannot follow another; group the repeated part: (?:a*)+")
            }
            return .repetition(atom, min: bounds.0, max: bounds.1)
        }

        /// Whether a `{` at the position starts a repetition (not a literal brace); one with
        /// bad bounds is a repetition too.
        var isBraces: Bool {
            var copy = self
            do {
                return try copy.braces() != nil
            } catch {
                return true
            }
        }

        /// `{n}`, `{n,}`, `{n,m}`; nil (and nothing read) when the brace is a literal.
        mutating func braces() throws -> (Int, Int?)? {
            let start = position
            position += 1
            func number() -> Int? {
                var value: Int?
                while let digit = peek, ("0"..."9").contains(digit) {
                    position += 1
                    value = min((value ?? 0) * 10 + Int(digit.value - 48), RegexPattern.maximumRepetition + 1)
                }
                return value
            }
            let low = number()
            var high = low
            if take(",") { high = number() }
            guard let low, take("}") else {
                position = start
                return nil
            }
            if let high, high < low { throw SyntaxError(reason: "{\(low),\(high)}: the bounds are in the wrong order", offset: start) }
            guard max(low, high ?? 0) <= RegexPattern.maximumRepetition else {
                throw SyntaxError(reason: "a repetition bound may be at most \(RegexPattern.maximumRepetition)", offset: start)
            }
            return (low, pattern[position - 2] == "," ? nil : high)
        }

        /// One atom; nil for a flag group that only changes the flags.
        mutating func atom() throws -> Node? {
            let start = position
            guard let scalar = take() else { throw failure("the pattern ends early") }
            switch scalar {
            case ".": return .any(dotAll: flags.dotAll)
            case "^": return .assert(flags.multiline ? .lineStart : .textStart)
            case "$": return .assert(flags.multiline ? .lineEnd : .textEndOrFinalNewline)
            case "[": return .set(try set(), fold: flags.caseInsensitive)
            case "\\": return try escape()
            case "(": return try group()
            case "*", "+", "?":
                throw SyntaxError(reason: "'\(scalar)' needs something before it to repeat", offset: start)
            default: return literal(scalar)
            }
        }

        func literal(_ scalar: Unicode.Scalar) -> Node {
            flags.caseInsensitive ? .scalar(RegexPattern.fold(scalar), fold: true) : .scalar(scalar, fold: false)
        }

        mutating func group() throws -> Node? {
            depth += 1
            defer { depth -= 1 }
            // Deep nesting is refused before it can exhaust the stack.
            guard depth <= RegexPattern.maximumNesting else { throw failure("groups nest deeper than \(RegexPattern.maximumNesting) levels") }
            let saved = flags
            if take("?") {
                let kind = peek
                if take(":") {
                    // A group that does not capture: captures mean nothing here.
                } else if kind == "<", position + 1 < pattern.count, pattern[position + 1] != "=", pattern[position + 1] != "!" {
                    position += 1
                    try name()
                } else if kind == "P", position + 1 < pattern.count, pattern[position + 1] == "<" {
                    position += 2
                    try name()
                } else if take("'") {
                    try name(until: "'")
                } else if kind == "=" || kind == "!" || kind == "<" {
                    throw failure("lookaround assertions are not supported")
                } else if kind == ">" {
                    throw failure("atomic groups are not supported")
                } else if take("#") {
                    while let next = take() {
                        if next == ")" { return nil }
                    }
                    throw failure("the comment (?#... is not closed")
                } else if try flagGroup() {
                    // `(?flags)`: they hold until the enclosing group ends. `(?flags:...)` goes on.
                    return nil
                }
            }
            let inner = try alternatives()
            guard take(")") else { throw failure("a '(' is not closed") }
            flags = saved
            return inner
        }

        /// Reads `flags)` (true: they hold for the rest of the enclosing group) or `flags:`
        /// (false: a group follows, its flags restored after it by `group`).
        mutating func flagGroup() throws -> Bool {
            var on = true
            while let next = take() {
                switch next {
                case "-": on = false
                case "i": flags.caseInsensitive = on
                case "m": flags.multiline = on
                case "s": flags.dotAll = on
                case ")": return true
                case ":": return false
                default:
                    position -= 1
                    if let next = peek, ("0"..."9").contains(next) || next == "R" || next == "&" || next == "(" {
                        throw failure("recursion and conditional groups are not supported")
                    }
                    throw failure("unknown group flag '\(next)' (flags are i, m and s)")
                }
            }
            throw failure("a '(' is not closed")
        }

        mutating func name(until end: Unicode.Scalar = ">") throws {
            while let next = take() {
                if next == end { return }
                guard next.properties.isAlphabetic || ("0"..."9").contains(next) || next == "_" else {
                    throw failure("a group name holds letters, digits and '_'")
                }
            }
            throw failure("a group name is not closed")
        }

        mutating func escape() throws -> Node {
            guard let scalar = take() else { throw failure("the pattern ends with '\\'") }
            switch scalar {
            case "A": return .assert(.textStart)
            case "z": return .assert(.textEnd)
            case "Z": return .assert(.textEndOrFinalNewline)
            case "b": return .assert(.wordBoundary)
            case "B": return .assert(.notWordBoundary)
            default:
                position -= 1
                switch try escapeInSet() {
                case .scalar(let value): return literal(value)
                case .set(let set):
                    sets.append(set)
                    return .set(sets.count - 1, fold: false)
                }
            }
        }

        enum Escaped {
            case scalar(Unicode.Scalar)
            case set(ScalarSet)
        }

        /// An escape after `\`, as a scalar or a class (the escapes valid inside `[...]`).
        mutating func escapeInSet() throws -> Escaped {
            let start = position - 1
            guard let scalar = take() else { throw failure("the pattern ends with '\\'") }
            switch scalar {
            case "d": return .set(ScalarSet(classes: [(.digit, false)]))
            case "D": return .set(ScalarSet(classes: [(.digit, true)]))
            case "w": return .set(ScalarSet(classes: [(.word, false)]))
            case "W": return .set(ScalarSet(classes: [(.word, true)]))
            case "s": return .set(ScalarSet(classes: [(.space, false)]))
            case "S": return .set(ScalarSet(classes: [(.space, true)]))
            case "p", "P":
                let category = try categories()
                return .set(ScalarSet(classes: [(.category(category), scalar == "P")]))
            case "n": return .scalar("\n")
            case "t": return .scalar("\t")
            case "r": return .scalar("\r")
            case "f": return .scalar("\u{0C}")
            case "v": return .scalar("\u{0B}")
            case "e": return .scalar("\u{1B}")
            case "a": return .scalar("\u{07}")
            case "0": return .scalar("\0")
            case "x", "u":
                let braced = scalar == "x" && take("{")
                var digits = ""
                while let next = peek, next.properties.isASCIIHexDigit, digits.count < (braced ? 8 : scalar == "u" ? 4 : 2) {
                    digits.unicodeScalars.append(next)
                    position += 1
                }
                guard !digits.isEmpty, !braced || take("}"), let value = UInt32(digits, radix: 16), let result = Unicode.Scalar(value) else {
                    throw SyntaxError(reason: "\\\(scalar) needs hexadecimal digits naming a Unicode scalar", offset: start)
                }
                return .scalar(result)
            case "1"..."9", "k", "g":
                throw SyntaxError(reason: "backreferences are not supported", offset: start)
            default:
                guard !scalar.properties.isAlphabetic, !("0"..."9").contains(scalar) else {
                    throw SyntaxError(reason: "unknown escape \\\(scalar)", offset: start)
                }
                return .scalar(scalar)
            }
        }

        /// `{L}`, `{Lu}`, `L`: a general category or a group of them.
        mutating func categories() throws -> Set<Unicode.GeneralCategory> {
            var name = ""
            if take("{") {
                while let next = take(), next != "}" { name.unicodeScalars.append(next) }
            } else if let next = take() {
                name.unicodeScalars.append(next)
            }
            guard let categories = ScalarSet.categories(named: name) else {
                throw failure("unknown Unicode category '\(name)' (use a general category such as L, Lu, N, Nd, P, S, Z)")
            }
            return categories
        }

        /// The class after `[`, up to and with its `]`.
        mutating func set() throws -> Int {
            var set = ScalarSet()
            set.negated = take("^")
            var first = true
            while true {
                guard let scalar = take() else { throw failure("a '[' is not closed") }
                if scalar == "]", !first { break }
                first = false
                var low: Unicode.Scalar
                switch scalar {
                case "[" where peek == ":":
                    position += 1
                    var name = ""
                    while let next = take(), next != ":" { name.unicodeScalars.append(next) }
                    guard take("]"), let posix = ScalarSet.Class.posix(name) else {
                        throw failure("unknown class [:\(name):]")
                    }
                    set.classes.append((posix, false))
                    continue
                case "\\":
                    switch try escapeInSet() {
                    case .set(let inner):
                        set.classes.append(contentsOf: inner.classes)
                        continue
                    case .scalar(let value): low = value
                    }
                default: low = scalar
                }
                // A range `a-z`, unless the '-' ends the class.
                if peek == "-", position + 1 < pattern.count, pattern[position + 1] != "]" {
                    position += 1
                    guard var high = take() else { throw failure("a '[' is not closed") }
                    if high == "\\" {
                        guard case .scalar(let value) = try escapeInSet() else { throw failure("a range cannot end with a class") }
                        high = value
                    }
                    guard low <= high else { throw failure("the range \(low)-\(high) is in the wrong order") }
                    set.ranges.append(low.value...high.value)
                } else {
                    set.ranges.append(low.value...low.value)
                }
            }
            sets.append(set)
            return sets.count - 1
        }
    }
}
