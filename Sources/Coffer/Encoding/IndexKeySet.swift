/// The keys of an element index for one array value: the index key of each distinct
/// element (`IndexKey` encoding of the element type), sorted, each as a 2-byte big-endian
/// length and its bytes, concatenated. Empty for an empty or nil array.
///
/// Invariants: keys are unique and ascending, so two sets are equal exactly when their
/// encodings are (an update compares buffers before touching the index); an encoding is
/// never one byte long, so it cannot be mistaken for the nil key of a single-value index.
enum IndexKeySet {
    /// Appends the set of a stored array field to `set`; false when the field's kind does not
    /// fit an array of `elementType`.
    static func encode<Sink: IndexKeySink>(_ elementType: PropertyType, kind: FieldKind, payload: UnsafeRawBufferPointer, into set: inout Sink) -> Bool {
        guard let elements = elementKeys(elementType, kind: kind, payload: payload) else { return false }
        for key in Set(elements).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            set.append(UInt8(truncatingIfNeeded: key.count >> 8))
            set.append(UInt8(truncatingIfNeeded: key.count))
            key.withUnsafeBytes { set.append(contentsOf: $0) }
        }
        return true
    }

    /// The keys of a set, in order. A set cut short ends where it is cut (sets are built here,
    /// never read from disk).
    static func keys(_ set: [UInt8]) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        var offset = 0
        while set.count - offset >= 2 {
            let length = Int(set[offset]) << 8 | Int(set[offset + 1])
            offset += 2
            guard set.count - offset >= length else { break }
            keys.append(Array(set[offset..<offset + length]))
            offset += length
        }
        return keys
    }

    /// The index key of each element, or nil when the kind does not fit.
    private static func elementKeys(_ elementType: PropertyType, kind: FieldKind, payload: UnsafeRawBufferPointer) -> [[UInt8]]? {
        func scalar(_ kind: FieldKind, _ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
            var key: [UInt8] = []
            return IndexKey.encode(elementType, kind: kind, payload: bytes, into: &key) ? key : nil
        }
        func fixed(_ size: Int, _ elementKind: FieldKind) -> [[UInt8]]? {
            guard payload.count % size == 0 else { return nil }
            var keys: [[UInt8]] = []
            for offset in stride(from: 0, to: payload.count, by: size) {
                guard let key = scalar(elementKind, UnsafeRawBufferPointer(rebasing: payload[offset..<offset + size])) else { return nil }
                keys.append(key)
            }
            return keys
        }
        switch kind {
        case .stringArray:
            // Strict: the count and lengths must use up the payload exactly (damage is never
            // indexed as fewer elements).
            guard payload.count >= 4 else { return nil }
            let count = Int(UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self)))
            var keys: [[UInt8]] = []
            var offset = 4
            for _ in 0..<min(count, payload.count) {
                guard payload.count - offset >= 4 else { return nil }
                let length = Int(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                offset += 4
                guard payload.count - offset >= length,
                      let key = scalar(.bytes, UnsafeRawBufferPointer(rebasing: payload[offset..<offset + length])) else { return nil }
                keys.append(key)
                offset += length
            }
            return keys.count == count && offset == payload.count ? keys : nil
        case .int64Array: return fixed(8, .int64)
        case .uint64Array: return fixed(8, .uint64)
        case .float64Array: return fixed(8, .float64)
        case .uuidArray: return fixed(16, .uuid)
        case .boolArray:
            var keys: [[UInt8]] = []
            for byte in payload {
                guard byte <= 1, let key = scalar(byte == 1 ? .boolTrue : .boolFalse, UnsafeRawBufferPointer(start: nil, count: 0)) else { return nil }
                keys.append(key)
            }
            return keys
        default:
            return nil
        }
    }
}
