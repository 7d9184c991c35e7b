/// A compiled regular expression for `$regex`, with its source for `describe()`.
///
/// The pattern language is the PCRE subset Cloudant documents, without the constructs that
/// need backtracking: literals and escapes, `.`, classes (`[a-z]`, `[^0-9]`, `\d \w \s` and
/// their negations, `[:alpha:]`-style names, `\p{L}`-style general categories), anchors
/// (`^ $ \A \z \Z \b \B`), groups (`(...)`, `(?:...)`, `(?<name>...)`), alternation,
/// quantifiers (`* + ? {n} {n,} {n,m}`, lazy or not) and the flags `i`, `m`, `s` (`(?i)`,
/// `(?i:...)`). Backreferences, lookaround, atomic groups and possessive quantifiers are
/// refused at compile time. It matches Unicode scalars, and the match may start anywhere.
///
/// Matching simulates the compiled automaton on all its states at once (a Pike VM without
/// captures): every text is read once, so the work is at most the text's length times the
/// program's size, whatever the pattern (`(a+)+$` on a long run of a's finishes as fast as
/// `a+$`). The program is capped at ``maximumProgramSize`` instructions.
final class RegexPattern: Sendable {
    let source: String
    private let program: [Instruction]
    private let sets: [ScalarSet]

    /// The largest compiled program accepted (repetitions are expanded into copies).
    static let maximumProgramSize = 20_000
    /// The largest bound in `{n,m}`.
    static let maximumRepetition = 1_000
    /// The deepest nesting of groups accepted.
    static let maximumNesting = 100

    /// A pattern that cannot be compiled: the reason and the offset (in Unicode scalars).
    struct SyntaxError: Error, CustomStringConvertible {
        let reason: String
        let offset: Int
        var description: String { "\(reason) (at offset \(offset))" }
    }

    init(_ source: String) throws {
        self.source = source
        var parser = Parser(Array(source.unicodeScalars))
        let node = try parser.parse()
        var compiler = Compiler()
        try compiler.emit(node)
        compiler.program.append(.match)
        program = compiler.program
        sets = parser.sets
    }

    /// Whether the pattern matches somewhere in `text`.
    func matches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var current = StateSet(capacity: program.count)
        var next = StateSet(capacity: program.count)
        var stack: [Int] = []
        for i in 0...scalars.count {
            // A match may start at every position: the start state joins each step.
            if add(0, to: &current, at: i, in: scalars, stack: &stack) { return true }
            guard i < scalars.count else { break }
            let scalar = scalars[i]
            next.removeAll()
            for pc in current.states {
                let advances: Bool
                switch program[pc] {
                case .scalar(let wanted, let fold): advances = wanted == scalar || (fold && Self.fold(scalar) == wanted)
                case .any(let dotAll): advances = dotAll || scalar != "\n"
                case .set(let index, let fold): advances = sets[index].contains(scalar, fold: fold)
                default: advances = false
                }
                if advances, add(pc + 1, to: &next, at: i + 1, in: scalars, stack: &stack) { return true }
            }
            swap(&current, &next)
        }
        return false
    }

    /// Adds `start` and every state reachable from it without reading (jumps, splits,
    /// assertions that hold at `position`); true when the match state is reached.
    private func add(_ start: Int, to set: inout StateSet, at position: Int, in scalars: [Unicode.Scalar], stack: inout [Int]) -> Bool {
        stack.removeAll(keepingCapacity: true)
        stack.append(start)
        while let pc = stack.popLast() {
            guard set.insert(pc) else { continue }
            switch program[pc] {
            case .match: return true
            case .jump(let target): stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .assert(let assertion):
                if assertion.holds(at: position, in: scalars) { stack.append(pc + 1) }
            case .scalar, .any, .set: break
            }
        }
        return false
    }

    /// Simple case folding of one scalar (its lowercase mapping when that is one scalar).
    static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.isASCII {
            return ("A"..."Z").contains(scalar) ? Unicode.Scalar(UInt8(truncatingIfNeeded: scalar.value + 32)) : scalar
        }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        if lower.count == 1, let first = lower.first { return first }
        return scalar
    }

    enum Instruction: Sendable {
        case scalar(Unicode.Scalar, fold: Bool)
        case any(dotAll: Bool)
        case set(Int, fold: Bool)
        case split(Int, Int)
        case jump(Int)
        case assert(Assertion)
        case match
    }

    enum Assertion: Sendable {
        case textStart, textEnd, textEndOrFinalNewline, lineStart, lineEnd, wordBoundary, notWordBoundary

        func holds(at position: Int, in scalars: [Unicode.Scalar]) -> Bool {
            let before = position > 0 ? scalars[position - 1] : nil
            let after = position < scalars.count ? scalars[position] : nil
            switch self {
            case .textStart: return position == 0
            case .textEnd: return position == scalars.count
            case .textEndOrFinalNewline: return position == scalars.count || (position == scalars.count - 1 && after == "\n")
            case .lineStart: return position == 0 || before == "\n"
            case .lineEnd: return position == scalars.count || after == "\n"
            case .wordBoundary, .notWordBoundary:
                let boundary = (before.map(ScalarSet.isWord) ?? false) != (after.map(ScalarSet.isWord) ?? false)
                return boundary == (self == .wordBoundary)
            }
        }
    }

    /// States of the automaton at one position, in insertion order, each once (a sparse set).
    struct StateSet {
        private(set) var states: [Int] = []
        private var slots: [Int]

        init(capacity: Int) {
            slots = [Int](repeating: 0, count: capacity)
            states.reserveCapacity(capacity)
        }

        /// Inserts `state`; false when it was there.
        mutating func insert(_ state: Int) -> Bool {
            let slot = slots[state]
            if slot < states.count, states[slot] == state { return false }
            slots[state] = states.count
            states.append(state)
            return true
        }

        mutating func removeAll() { states.removeAll(keepingCapacity: true) }
    }
}
