import Foundation

/// Stored values in the sync server's wire form (the README's type mapping), as a pusher
/// sends them: the inverse of `WireValue.importNode(_:type:)`, which reads pulled ones.
///
/// It differs from the export format (`coffer dump`) where the server's decoders need it:
/// - `Double`, `Float` and `Date` are numbers (a `Date` its seconds since 2001, as stored),
///   or the strings `"NaN"`, `"Infinity"`, `"-Infinity"`, `"-0"`; the export writes `"nan"`,
///   `"inf"`, `-0.0` (which a `numeric` would read as 0) and dates as ISO 8601 text.
/// - `[UInt8]` is base64 (a `bytea` column); the export writes an array of integers.
/// - A -0.0 in a document is `{"$number":"-0"}` (`"-0"` in a `[String: Double]`): `jsonb`
///   keeps numbers as `numeric`, which would make it 0.
/// - Everything else (strings, integers, UUIDs, documents, dictionaries) is the same in both.
enum SyncWireValue {
    /// The wire JSON text of a stored field of a (non-link) property of `type`.
    static func json(_ field: RecordFields.Field, type: PropertyType) -> String {
        let payload = field.payload
        switch field.kind {
        case .float32, .float64:
            guard let value = FieldValue.double(field.kind, payload) else { return "null" }
            return number(value)
        case .float64Array:
            var json = "["
            for offset in stride(from: 0, to: payload.count - 7, by: 8) {
                if offset > 0 { json += "," }
                json += number(Double(bitPattern: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
            }
            return json + "]"
        case .uint64Array where type == .uint8Array:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(payload.count / 8)
            for offset in stride(from: 0, to: payload.count - 7, by: 8) {
                // Every element was checked to fit a byte when it was stored.
                bytes.append(UInt8(truncatingIfNeeded: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
            }
            return "\"" + Data(bytes).base64EncodedString() + "\""
        case .document:
            return DocumentCodec.json(payload, tagged: FieldDescription.isTagged(type), wire: true) ?? "null"
        default:
            return FieldDescription.json(field, type: type)
        }
    }

    /// A double as the server's `double precision` decoder takes it exactly: the shortest
    /// decimal that reads back as the same value, or `"NaN"` (every NaN), `"Infinity"`,
    /// `"-Infinity"`, `"-0"` (a JSON number becomes a `numeric` first, which has no -0).
    static func number(_ value: Double) -> String {
        if value.isNaN { return "\"NaN\"" }
        if value == .infinity { return "\"Infinity\"" }
        if value == -.infinity { return "\"-Infinity\"" }
        if value == 0, value.sign == .minus { return "\"-0\"" }
        return FieldDescription.number(value)
    }
}
