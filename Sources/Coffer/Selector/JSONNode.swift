/// A parsed JSON document as selectors need it: objects keep their members in order (error
/// messages name the first offending one) and numbers keep their text (so `7` is an exact
/// integer, `7.5` a decimal, and neither goes through a lossy conversion first).
indirect enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONNode])
    case object([JSONMember])

    /// The JSON kind, for messages ("a string", "an object").
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The node as compact JSON text, for messages.
    var text: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let number): return number.text
        case .string(let string): return FieldDescription.quoted(string)
        case .array(let elements): return "[" + elements.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { FieldDescription.quoted($0.key) + ":" + $0.value.text }.joined(separator: ",") + "}"
        }
    }
}

/// One member of a JSON object.
struct JSONMember: Sendable, Equatable {
    let key: String
    let value: JSONNode
}

/// A JSON number as written.
struct JSONNumber: Sendable, Equatable {
    /// The literal, as it appeared (validated by the parser).
    let text: String

    /// The value as a Double (finite: the parser refuses literals that overflow).
    var double: Double { Double(text) ?? .nan }

    /// The value when it is an integer that fits Int64 exactly ("7", "7.0", "7e2"), read
    /// from the text itself: "9007199254740993.0" is 9007199254740993 (not the nearest
    /// Double), and a fraction ("1.5", "1e-400") or a value out of range is nil.
    var int64: Int64? {
        guard let (negative, magnitude) = exactInteger else { return nil }
        if !negative { return Int64(exactly: magnitude) }
        if magnitude == UInt64(Int64.max) + 1 { return .min }
        return Int64(exactly: magnitude).map { -$0 }
    }

    /// The value when it is an integer that fits UInt64 exactly (read as `int64` is).
    var uint64: UInt64? {
        guard let (negative, magnitude) = exactInteger, !negative || magnitude == 0 else { return nil }
        return magnitude
    }

    /// The sign and magnitude of the literal when it is an integer below 2^64, exactly:
    /// digits and exponent are worked out in decimal, never through a Double.
    private var exactInteger: (negative: Bool, magnitude: UInt64)? {
        var rest = Substring(text)
        let negative = rest.first == "-"
        if negative || rest.first == "+" { rest = rest.dropFirst() }
        var exponent = 0
        if let e = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            let exponentText = rest[rest.index(after: e)...]
            rest = rest[..<e]
            // An exponent too long for an Int: only a zero mantissa can be an integer below 2^64.
            exponent = Int(exponentText) ?? (exponentText.hasPrefix("-") ? Int.min / 2 : Int.max / 2)
        }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var seenPoint = false
        for byte in rest.utf8 {
            if byte == UInt8(ascii: ".") { seenPoint = true; continue }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if seenPoint { fractionDigits += 1 }
            if digits.isEmpty && byte == UInt8(ascii: "0") { continue }   // leading zeros
            digits.append(byte - UInt8(ascii: "0"))
        }
        // Leading zeros of the fraction were skipped: they only move the point, which
        // `fractionDigits` still counts.
        guard !digits.isEmpty else { return (negative, 0) }
        var shift = exponent - fractionDigits   // value = digits * 10^shift
        while shift < 0, digits.last == 0 { digits.removeLast(); shift += 1 }
        guard shift >= 0, digits.count + shift <= 20 else { return nil }
        var magnitude: UInt64 = 0
        for digit in digits + [UInt8](repeating: 0, count: shift) {
            let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            magnitude = sum
        }
        return (negative, magnitude)
    }
}
