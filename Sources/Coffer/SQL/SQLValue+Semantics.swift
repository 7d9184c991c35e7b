import Foundation

/// How Smart SQL compares, combines and groups values: SQL's rules (three-valued logic,
/// integer and floating-point arithmetic as SQLite does them, NULLs first), and Coffer's
/// where SQL has none (text compares by Unicode canonical equivalence, as the DSL does).
extension SQLValue {
    /// The storage classes in SQLite's sort order: NULL, numbers, text, bytes.
    private var classRank: Int {
        switch self {
        case .null: return 0
        case .integer, .unsigned, .real: return 1
        case .text: return 2
        case .blob: return 3
        }
    }

    /// The total order of ORDER BY, MIN, MAX and sorting: NULL first, then numbers (exact
    /// across integers and reals; NaN after every other number), text (canonical
    /// equivalence: Swift's `String` order), bytes (byte order).
    static func order(_ a: SQLValue, _ b: SQLValue) -> Int {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.text(let x), .text(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.null, .null): return 0
        case (.blob(let x), .blob(let y)):
            return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        default:
            let (rankA, rankB) = (a.classRank, b.classRank)
            if rankA != rankB { return rankA < rankB ? -1 : 1 }
            return numericOrder(a, b) ?? (a.isNaN ? (b.isNaN ? 0 : 1) : -1)
        }
    }

    private var isNaN: Bool {
        if case .real(let value) = self { return value.isNaN }
        return false
    }

    /// The order of two numbers, exact across integers and reals; nil when one is NaN.
    static func numericOrder(_ a: SQLValue, _ b: SQLValue) -> Int? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.unsigned(let x), .unsigned(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer, .unsigned): return -1   // an unsigned value is above Int64.max
        case (.unsigned, .integer): return 1
        case (.real(let x), .real(let y)):
            if x.isNaN || y.isNaN { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .real(let y)): return integerOrder(x, y)
        case (.real(let x), .integer(let y)): return integerOrder(y, x).map { -$0 }
        case (.unsigned(let x), .real(let y)):
            if y.isNaN { return nil }
            // x is in (Int64.max, UInt64.max]: compare in the unsigned range.
            if y < 9_223_372_036_854_775_808.0 { return 1 }
            if y >= 18_446_744_073_709_551_616.0 { return -1 }
            let whole = UInt64(y.rounded(.down))
            if x != whole { return x < whole ? -1 : 1 }
            return y > y.rounded(.down) ? -1 : 0
        case (.real, .unsigned): return numericOrder(b, a).map { -$0 }
        default: return nil
        }
    }

    /// The order of the integer `x` against the real `y`, exactly (an Int64 need not be a
    /// Double: 2^53 + 1 is not, and must still be above 2^53).
    private static func integerOrder(_ x: Int64, _ y: Double) -> Int? {
        if y.isNaN { return nil }
        if y < -9_223_372_036_854_775_808.0 { return 1 }
        if y >= 9_223_372_036_854_775_808.0 { return -1 }
        let floor = y.rounded(.down)
        let whole = Int64(floor)
        if x != whole { return x < whole ? -1 : 1 }
        return y > floor ? -1 : 0
    }

    /// SQL comparison: nil (unknown) when either side is NULL, or when one is NaN; values of
    /// different classes compare by class, as in SQLite.
    static func compare(_ a: SQLValue, _ b: SQLValue) -> Int? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.text(let x), .text(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default:
            if a.classRank == 1 && b.classRank == 1 { return numericOrder(a, b) }
            return order(a, b)
        }
    }

    /// Truth in WHERE, HAVING, ON, AND, OR, NOT, CASE WHEN: a non-zero number is true;
    /// NULL is unknown (nil). Text is a number when it reads as one (a document's value).
    var truth: Bool? {
        switch self {
        case .null: return nil
        case .integer(let value): return value != 0
        case .unsigned: return true
        case .real(let value): return value != 0
        case .text(let value): return Self.numericPrefix(value) != 0
        case .blob: return false
        }
    }

    /// 1, 0, or NULL.
    static func boolean(_ value: Bool?) -> SQLValue {
        value.map { .integer($0 ? 1 : 0) } ?? .null
    }

    /// The value as a double, for real arithmetic.
    var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .unsigned(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }

    /// The value as an Int64, as SQLite converts a real: truncated toward zero, clamped to
    /// the Int64 range, NaN as 0.
    var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .unsigned: return .max
        case .real(let value):
            if value.isNaN { return 0 }
            if value <= -9_223_372_036_854_775_808.0 { return .min }
            if value >= 9_223_372_036_854_775_808.0 { return .max }
            return Int64(value)
        default: return nil
        }
    }

    /// A real result: NaN (0/0 of infinities, say) is NULL, as in SQLite.
    private static func realOrNull(_ value: Double) -> SQLValue {
        value.isNaN ? .null : .real(value)
    }

    /// `a <op> b` for + - * / %: integers stay integers until they overflow, then the result
    /// is real (SQLite's rule); a division or remainder by zero is NULL; NULL gives NULL.
    static func arithmetic(_ op: SQLExpression.BinaryOperator, _ a: SQLValue, _ b: SQLValue) -> SQLValue {
        if case .null = a { return .null }
        if case .null = b { return .null }
        if case .integer(let x) = a, case .integer(let y) = b {
            switch op {
            case .add:
                let (sum, overflow) = x.addingReportingOverflow(y)
                return overflow ? realOrNull(Double(x) + Double(y)) : .integer(sum)
            case .subtract:
                let (difference, overflow) = x.subtractingReportingOverflow(y)
                return overflow ? realOrNull(Double(x) - Double(y)) : .integer(difference)
            case .multiply:
                let (product, overflow) = x.multipliedReportingOverflow(by: y)
                return overflow ? realOrNull(Double(x) * Double(y)) : .integer(product)
            case .divide:
                if y == 0 { return .null }
                if x == .min && y == -1 { return .real(-Double(Int64.min)) }
                return .integer(x / y)
            case .remainder:
                if y == 0 { return .null }
                if y == -1 { return .integer(0) }
                return .integer(x % y)
            default:
                return .null
            }
        }
        guard let x = a.doubleValue, let y = b.doubleValue else { return .null }
        switch op {
        case .add: return realOrNull(x + y)
        case .subtract: return realOrNull(x - y)
        case .multiply: return realOrNull(x * y)
        case .divide: return y == 0 ? .null : realOrNull(x / y)
        case .remainder:
            // SQLite: both operands as integers, the remainder as a real.
            guard let i = a.integerValue, let j = b.integerValue, j != 0 else { return .null }
            return .real(j == -1 ? 0 : Double(i % j))
        default: return .null
        }
    }

    /// `-a`: the negation of Int64.min is real, as in SQLite.
    static func negate(_ a: SQLValue) -> SQLValue {
        switch a {
        case .integer(let value): return value == .min ? .real(-Double(value)) : .integer(-value)
        case .unsigned(let value): return .real(-Double(value))
        case .real(let value): return .real(-value)
        default: return .null
        }
    }

    /// The text of a value in `||` (and LENGTH of a number): text as it is, an integer in
    /// decimal, a real as SQLite writes it (15 significant digits, always with a point or an
    /// exponent), bytes as UTF-8.
    var concatenationText: String? {
        switch self {
        case .text(let value): return value
        case .integer(let value): return String(value)
        case .unsigned(let value): return String(value)
        case .real(let value): return Self.sqliteText(value)
        case .blob(let value): return String(decoding: value, as: UTF8.self)
        case .null: return nil
        }
    }

    /// A real as SQLite's `%!.15g` writes it: `1.0`, `0.1`, `9.22337203685478e+18`, `1.0e+301`, `Inf`.
    static func sqliteText(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "Inf" }
        let text = String(format: "%.15g", value)
        guard !text.contains(".") else { return text }
        // The `!` flag: a point even in exponent form (`1.0e+301`).
        if let exponent = text.firstIndex(of: "e") { return text[..<exponent] + ".0" + text[exponent...] }
        return text + ".0"
    }

    /// The number a text starts with, as SQLite reads text in a numeric context: leading
    /// spaces, a sign, digits, a fraction, an exponent; 0 when there is none.
    static func numericPrefix(_ text: String) -> Double {
        let scalars = Array(text.unicodeScalars.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        var end = 0
        func digits() -> Int {
            let start = end
            while end < scalars.count, ("0"..."9").contains(scalars[end]) { end += 1 }
            return end - start
        }
        if end < scalars.count, scalars[end] == "+" || scalars[end] == "-" { end += 1 }
        var count = digits()
        if end < scalars.count, scalars[end] == "." {
            end += 1
            count += digits()
        }
        guard count > 0 else { return 0 }
        let mantissaEnd = end
        if end < scalars.count, scalars[end] == "e" || scalars[end] == "E" {
            end += 1
            if end < scalars.count, scalars[end] == "+" || scalars[end] == "-" { end += 1 }
            if digits() == 0 { end = mantissaEnd }
        }
        return Double(String(String.UnicodeScalarView(scalars[..<end]))) ?? 0
    }
}

/// A value as a key of GROUP BY, DISTINCT, COUNT(DISTINCT) and hash joins: equal keys are
/// equal values under SQL's `=` (1 and 1.0 are one key, canonically equivalent strings are
/// one key), and NULLs are one key.
enum SQLKey: Hashable {
    case null
    case integer(Int64)
    case unsigned(UInt64)
    /// A real that is not a whole Int64 value; all NaNs are one key.
    case real(UInt64)
    case text(String)
    case blob(Data)

    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let value): self = .integer(value)
        case .unsigned(let value): self = .unsigned(value)
        case .real(let value):
            if value.isNaN {
                self = .real(Double.nan.bitPattern)
            } else if let whole = Int64(exactly: value) {
                self = .integer(whole)
            } else if value > 0, let whole = UInt64(exactly: value) {
                self = .unsigned(whole)
            } else {
                self = .real(value.bitPattern)
            }
        case .text(let value): self = .text(value)
        case .blob(let value): self = .blob(value)
        }
    }
}
