/// Checks of a field's payload beyond its framing, for `coffer check`: the inner layout of
/// string arrays, fixed-size array elements, Bool bytes and documents. (Reads apply the same
/// rules as they decode; this reports them for every record without decoding objects.)
enum FieldPayload {
    /// What is wrong with the payload, or nil when it is well formed.
    static func problem(_ field: RecordFields.Field) -> String? {
        let payload = field.payload
        switch field.kind {
        case .stringArray:
            guard payload.count >= 4 else { return "a string array without its count" }
            let count = Int(UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self)))
            var offset = 4
            var seen = 0
            while seen < count {
                guard payload.count - offset >= 4 else { return "a string array cut off after \(seen) of \(count) strings" }
                let length = Int(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                offset += 4
                guard payload.count - offset >= length else { return "a string array whose string \(seen) runs past its end" }
                offset += length
                seen += 1
            }
            return offset == payload.count ? nil : "a string array with \(payload.count - offset) bytes after its last string"
        case .int64Array, .uint64Array, .float64Array:
            return payload.count % 8 == 0 ? nil : "an array of 8-byte values with \(payload.count) bytes"
        case .uuidArray:
            return payload.count % 16 == 0 ? nil : "an array of UUIDs with \(payload.count) bytes"
        case .boolArray:
            return payload.allSatisfy { $0 <= 1 } ? nil : "a Bool array with a byte other than 0 or 1"
        case .document:
            return DocumentCodec.decode(payload) == nil ? "a damaged document" : nil
        default:
            return nil
        }
    }
}
