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
    /// from the digits, never through a Double: "9007199254740993.0" is 9007199254740993,
    /// not the Double 2^53 next to it, and "7.0000000000000001" is no integer.
    var int64: Int64? {
        if let exact = Int64(text) { return exact }   // a plain integer literal, the usual case
        guard let (negative, magnitude) = integerParts(truncating: false) else { return nil }
        return Self.signed(negative: negative, magnitude: magnitude)
    }

    /// The value when it is an integer that fits UInt64 exactly (read as `int64` is).
    var uint64: UInt64? {
        if let exact = UInt64(text) { return exact }
        guard let (negative, magnitude) = integerParts(truncating: false) else { return nil }
        return negative && magnitude != 0 ? nil : magnitude
    }

    /// The value truncated toward zero ("4.9" is 4, "-4.9" is -4), exactly from the digits,
    /// when the result fits Int64.
    var truncatedInt64: Int64? {
        if let exact = Int64(text) { return exact }
        guard let (negative, magnitude) = integerParts(truncating: true) else { return nil }
        return Self.signed(negative: negative, magnitude: magnitude)
    }

    private static func signed(negative: Bool, magnitude: UInt64) -> Int64? {
        guard negative else { return Int64(exactly: magnitude) }
        if magnitude == Int64.min.magnitude { return .min }
        return Int64(exactly: magnitude).map { -$0 }
    }

    /// The literal's integer value as sign and magnitude: nil when it has a fractional part
    /// (unless `truncating` drops it) or its magnitude needs more than 64 bits. The literal
    /// is one the parser validated: `-? digits (. digits)? ([eE] [+-]? digits)?`.
    private func integerParts(truncating: Bool) -> (negative: Bool, magnitude: UInt64)? {
        let utf8 = Array(text.utf8)
        var at = 0
        let negative = at < utf8.count && utf8[at] == UInt8(ascii: "-")
        if negative { at += 1 }
        var digits: [UInt8] = []   // integer and fraction digits, as values 0...9
        var fractionCount = 0
        var inFraction = false
        while at < utf8.count, utf8[at] != UInt8(ascii: "e"), utf8[at] != UInt8(ascii: "E") {
            if utf8[at] == UInt8(ascii: ".") {
                inFraction = true
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[at]) else { return nil }
                digits.append(utf8[at] - UInt8(ascii: "0"))
                if inFraction { fractionCount += 1 }
            }
            at += 1
        }
        // The exponent, saturated: beyond ±100,000 the answer no longer depends on it.
        var exponent = 0
        if at < utf8.count {
            at += 1
            var exponentNegative = false
            if at < utf8.count, utf8[at] == UInt8(ascii: "+") || utf8[at] == UInt8(ascii: "-") {
                exponentNegative = utf8[at] == UInt8(ascii: "-")
                at += 1
            }
            while at < utf8.count {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[at]) else { return nil }
                exponent = min(exponent * 10 + Int(utf8[at] - UInt8(ascii: "0")), 100_000)
                at += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        // value = digits × 10^scale
        let scale = exponent - fractionCount
        var integerDigits = digits
        if scale < 0 {
            let dropped = min(-scale, digits.count)
            let fraction = digits.suffix(dropped)
            integerDigits = Array(digits.dropLast(dropped))
            guard truncating || fraction.allSatisfy({ $0 == 0 }) else { return nil }
        }
        var magnitude: UInt64 = 0
        for digit in integerDigits {
            let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            magnitude = sum
        }
        if scale > 0, magnitude != 0 {
            for _ in 0..<scale {
                let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                magnitude = times
            }
        }
        return (negative, magnitude)
    }
}
