import Foundation

/// Renders stored field values as JSON text, without the app's generated code: for error
/// messages (`uniqueViolation` names the value) and for `coffer dump`.
enum FieldDescription {
    /// The JSON text of a field whose catalog type is `type`.
    static func json(_ field: RecordFields.Field, type: PropertyType) -> String {
        let payload = field.payload
        switch field.kind {
        case .boolTrue: return "true"
        case .boolFalse: return "false"
        case .int8, .int16, .int32, .int64:
            return FieldValue.signed(field.kind, payload).map { String($0) } ?? "null"
        case .uint8, .uint16, .uint32, .uint64:
            return FieldValue.unsigned(field.kind, payload).map { String($0) } ?? "null"
        case .float32, .float64:
            guard let value = FieldValue.double(field.kind, payload) else { return "null" }
            return type == .date ? date(value) : number(value)
        case .bytes:
            if type == .data { return quoted(Data(payload).base64EncodedString()) }
            return quoted(String(decoding: payload, as: UTF8.self))
        case .uuid:
            return uuid(payload)
        case .stringArray:
            return stringArray(payload)
        case .int64Array:
            return list(payload, width: 8) { String(Int64(littleEndian: payload.loadUnaligned(fromByteOffset: $0, as: Int64.self))) }
        case .uint64Array:
            return list(payload, width: 8) { String(UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: $0, as: UInt64.self))) }
        case .float64Array:
            return list(payload, width: 8) { offset in
                let value = Double(bitPattern: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                return type == .dateArray ? date(value) : number(value)
            }
        case .uuidArray:
            return list(payload, width: 16) { uuid(UnsafeRawBufferPointer(rebasing: payload[$0..<$0 + 16])) }
        case .document:
            return DocumentCodec.json(payload, tagged: isTagged(type)) ?? "null"
        case .boolArray:
            return "[" + payload.map { $0 == 0 ? "false" : ($0 == 1 ? "true" : "null") }.joined(separator: ",") + "]"
        }
    }

    /// Whether a document of `type` writes its non-finite numbers tagged
    /// (`{"$number":"nan"}`): not a typed dictionary, whose declared type says its values
    /// are numbers, so `"nan"` is one.
    static func isTagged(_ type: PropertyType) -> Bool {
        !(type == .stringDictionary || type == .intDictionary || type == .doubleDictionary || type == .boolDictionary)
    }

    /// A date as ISO 8601 text, or as its number of seconds when it has no such text.
    private static func date(_ seconds: Double) -> String {
        ISODate.string(seconds: seconds).map(quoted) ?? number(seconds)
    }

    /// A UUID's string form, from its 16 bytes.
    private static func uuid(_ bytes: UnsafeRawBufferPointer) -> String {
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
        return quoted(UUID(uuid: value).uuidString)
    }

    /// An array of fixed-width elements: `render` gets each whole element's offset (a
    /// partial one at the end is left out).
    private static func list(_ payload: UnsafeRawBufferPointer, width: Int, _ render: (Int) -> String) -> String {
        "[" + stride(from: 0, to: payload.count - (width - 1), by: width).map(render).joined(separator: ",") + "]"
    }

    /// An array of strings: a count, then each string's length and bytes; the strings a
    /// cut payload still holds whole.
    private static func stringArray(_ payload: UnsafeRawBufferPointer) -> String {
        guard payload.count >= 4 else { return "[]" }
        var items: [String] = []
        var offset = 4
        let count = Int(UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self)))
        for _ in 0..<count {
            guard payload.count - offset >= 4 else { break }
            let length = Int(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard payload.count - offset >= length else { break }
            items.append(quoted(String(decoding: UnsafeRawBufferPointer(rebasing: payload[offset..<offset + length]), as: UTF8.self)))
            offset += length
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    /// A JSON number, or a string for values JSON cannot hold: `"nan"` (every NaN),
    /// `"inf"`, `"-inf"`.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "\"nan\"" }
        guard value.isFinite else { return quoted(String(value)) }
        if value == 0, value.sign == .minus { return "-0.0" }  // "0" would lose the sign
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
