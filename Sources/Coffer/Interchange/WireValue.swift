import Foundation

/// The sync server's wire form of values (see the README's type mapping) turned into the
/// import format, so that a pulled value is checked and stored by the import's value reader
/// exactly as an imported one, and thus as a put of the same value stores it.
///
/// Differences the conversion covers:
/// - `UInt64`, `UInt` (and every unsigned type) arrive as decimal strings; the import
///   takes integers.
/// - `Double`, `Float`, `Date` arrive as numbers or the strings `"NaN"`, `"Infinity"`,
///   `"-Infinity"`, `"-0"`; the import takes `"nan"`, `"inf"`, `"-inf"` and `-0.0`.
/// - `[UInt8]` arrives as base64 (a `bytea` column); the import takes an array of integers.
/// - A string holding U+0000 arrives as `{"nul": "<base64 of its UTF-8>"}`.
/// - Arrays convert element by element. Documents, dictionaries and everything else are
///   the same in both forms.
enum WireValue {
    /// The import-format node of `node`, a wire value of a (non-link) property of `type`;
    /// values the conversion does not recognise are returned unchanged for the import's reader
    /// to refuse with its message.
    static func importNode(_ node: JSONNode, type: PropertyType) -> JSONNode {
        if case .null = node { return node }
        switch type {
        case .uint8, .uint16, .uint32, .uint64, .uint:
            return unsigned(node)
        case .float, .double, .date:
            return floatingPoint(node)
        case .string:
            return text(node)
        case .uint8Array:
            if case .string(let base64) = node, let bytes = Data(base64Encoded: base64) {
                return .array(bytes.map { .number(JSONNumber(text: String($0))) })
            }
            return node
        default:
            guard let element = type.elementType, case .array(let elements) = node else { return node }
            return .array(elements.map { importNode($0, type: element) })
        }
    }

    private static func unsigned(_ node: JSONNode) -> JSONNode {
        guard case .string(let text) = node, !text.isEmpty, text.utf8.count <= 20,
              text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return node }
        return .number(JSONNumber(text: text))
    }

    private static func floatingPoint(_ node: JSONNode) -> JSONNode {
        guard case .string(let text) = node else { return node }
        switch text {
        case "NaN": return .string("nan")
        case "Infinity": return .string("inf")
        case "-Infinity": return .string("-inf")
        case "-0": return .number(JSONNumber(text: "-0.0"))
        default: return node
        }
    }

    private static func text(_ node: JSONNode) -> JSONNode {
        guard case .object(let members) = node, members.count == 1, let member = members.first, member.key == "nul",
              case .string(let base64) = member.value, let bytes = Data(base64Encoded: base64),
              let decoded = String(bytes: bytes, encoding: .utf8) else { return node }
        return .string(decoded)
    }
}
