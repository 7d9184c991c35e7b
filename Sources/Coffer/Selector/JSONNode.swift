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

    /// The value when it is an integer that fits Int64 exactly ("7", "7.0", "7e2").
    var int64: Int64? {
        if let exact = Int64(text) { return exact }
        let value = double
        guard value.isFinite, value == value.rounded(.towardZero), let exact = Int64(exactly: value) else { return nil }
        return exact
    }

    /// The value when it is an integer that fits UInt64 exactly.
    var uint64: UInt64? {
        if let exact = UInt64(text) { return exact }
        let value = double
        guard value.isFinite, value == value.rounded(.towardZero), let exact = UInt64(exactly: value) else { return nil }
        return exact
    }
}
