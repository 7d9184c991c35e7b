/// Order-preserving byte encodings of property values, for index keys.
///
/// An index key is `tag ‖ value ‖ id`: comparing keys byte by byte (LMDB's default order)
/// orders them by value, then by id. The tag puts nil (`0x00`) before every value (`0x01`);
/// a string too long for LMDB's 511-byte key limit is cut and tagged `0x02` after the
/// shared prefix, so lookups know to recheck the record.
///
/// - Signed integers (every width, so widening needs no rebuild): 8 bytes big-endian with
///   the sign bit flipped.
/// - Unsigned integers: 8 bytes big-endian.
/// - Float, Double and Date: the Double's bits, all flipped when negative, else the sign bit
///   flipped. NaN sorts after +infinity; -0.0 just below +0.0.
/// - Bool: one byte. UUID: its 16 bytes.
/// - String: the canonical UTF-8 (NFC for non-ASCII text, so canonically equivalent strings
///   share a key, as they are `==` in Swift) with `0x00` escaped as `0x00 0xFF`, terminated
///   by `0x00 0x00`, so that a string sorts before every longer string it is a prefix of.
enum IndexKey {
    static let nilTag: UInt8 = 0x00
    static let valueTag: UInt8 = 0x01
    /// Strings are cut to this many encoded bytes (keys stay far below LMDB's 511 bytes).
    static let maxStringBytes = 400
    /// The version of the key encodings; an index written with another is rebuilt when a
    /// writable store opens it, and not used by a read-only one. Version 2: canonical
    /// (NFC) strings, escaping before cutting.
    static let version = 2

    /// The encoded value (without the id) of the reader's current field, or nil when its
    /// kind does not fit `type`.
    static func encode<Sink: IndexKeySink>(_ type: PropertyType, kind: FieldKind, payload: UnsafeRawBufferPointer, into key: inout Sink) -> Bool {
        switch type {
        case .bool:
            guard kind == .boolTrue || kind == .boolFalse else { return false }
            key.append(valueTag)
            key.append(kind == .boolTrue ? 1 : 0)
        case .int8, .int16, .int32, .int64, .int:
            guard let value = FieldValue.signed(kind, payload) else { return false }
            key.append(valueTag)
            appendBigEndian(UInt64(bitPattern: value) ^ (1 << 63), to: &key)
        case .uint8, .uint16, .uint32, .uint64, .uint:
            guard let value = FieldValue.unsigned(kind, payload) else { return false }
            key.append(valueTag)
            appendBigEndian(value, to: &key)
        case .float, .double, .date:
            guard let value = FieldValue.double(kind, payload) else { return false }
            key.append(valueTag)
            appendBigEndian(orderedBits(value), to: &key)
        case .string:
            guard kind == .bytes else { return false }
            appendString(payload, to: &key)
        case .uuid:
            guard kind == .uuid else { return false }
            key.append(valueTag)
            key.append(contentsOf: payload)
        case .data, .stringArray, .intArray, .doubleArray, .boolArray, .int8Array, .int16Array, .int32Array, .int64Array,
             .uintArray, .uint8Array, .uint16Array, .uint32Array, .uint64Array, .floatArray, .dateArray, .uuidArray,
             .json, .stringDictionary, .intDictionary, .doubleDictionary, .boolDictionary:
            return false
        }
        return true
    }

    /// Whether `type` can be indexed.
    static func isIndexable(_ type: PropertyType) -> Bool {
        switch type {
        case .data: return false
        case _ where type.isDocument: return false
        case _ where type.elementType != nil: return true   // an element index
        default: return true
        }
    }

    /// Appends the key of a string: its canonical form (see ``CanonicalString``) with NUL
    /// bytes escaped, cut to at most `maxStringBytes` encoded bytes (never between a NUL and
    /// its escape), then the terminator and the cut flag.
    static func appendString<Sink: IndexKeySink>(_ utf8: UnsafeRawBufferPointer, to key: inout Sink) {
        key.append(valueTag)
        if utf8.count <= maxStringBytes, isASCIIWithoutNul(utf8) {
            // The usual string: canonical as it is, nothing to escape or cut; one copy.
            if let base = utf8.baseAddress {
                key.append(contentsOf: UnsafeRawBufferPointer(start: base, count: utf8.count))
            }
            key.append(0)
            key.append(0)
            return
        }
        let truncated = CanonicalString.withCanonicalUTF8(utf8) { appendEscaped($0, to: &key) }
        key.append(0)
        // 0x01 after the terminator marks a cut string: it sorts after the exact prefix.
        key.append(truncated ? 1 : 0)
    }

    /// Whether every byte is in 0x01...0x7F, eight bytes at a time.
    @inline(__always)
    static func isASCIIWithoutNul(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        var offset = 0
        while count - offset >= 8 {
            let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // A high bit set, or a zero byte (the classic "has zero byte" test).
            if word & high != 0 || (word &- ones) & ~word & high != 0 { return false }
            offset += 8
        }
        while offset < count {
            let byte = base.load(fromByteOffset: offset, as: UInt8.self)
            if byte == 0 || byte >= 0x80 { return false }
            offset += 1
        }
        return true
    }

    /// Appends `content` with NULs escaped, up to `maxStringBytes` encoded bytes; returns
    /// whether it had to stop early.
    private static func appendEscaped<Sink: IndexKeySink>(_ content: UnsafeRawBufferPointer, to key: inout Sink) -> Bool {
        if content.count <= maxStringBytes, !content.contains(0) {
            key.append(contentsOf: content)   // the common case: nothing to escape or cut
            return false
        }
        var written = 0
        for byte in content {
            let size = byte == 0 ? 2 : 1
            if written + size > maxStringBytes { return true }
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
            written += size
        }
        return false
    }

    /// Whether two stored strings are the same value for keys and unique checks
    /// (canonically equivalent, as Swift's `==` decides).
    static func sameString(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CanonicalString.order(x, y) == 0 } }
    }

    /// Whether an encoded key (without id) holds a cut string that needs a recheck.
    static func isTruncatedString(_ key: ArraySlice<UInt8>) -> Bool {
        key.count >= 2 && key[key.endIndex - 2] == 0 && key[key.endIndex - 1] == 1
    }

    /// ``isTruncatedString(_:)`` for a key in raw memory.
    static func isTruncatedString(_ key: UnsafeRawBufferPointer) -> Bool {
        key.count >= 2 && key[key.count - 2] == 0 && key[key.count - 1] == 1
    }

    static func orderedBits(_ value: Double) -> UInt64 {
        let bits = value.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func appendBigEndian<Sink: IndexKeySink>(_ value: UInt64, to key: inout Sink) {
        withUnsafeBytes(of: value.bigEndian) { key.append(contentsOf: $0) }
    }
}

/// Reads scalar values from a field's kind and payload, normalised to 64 bits; shared by the
/// index encoder and the tools that read records without generated code.
enum FieldValue {
    static func signed(_ kind: FieldKind, _ payload: UnsafeRawBufferPointer) -> Int64? {
        switch kind {
        case .int8: return Int64(payload.loadUnaligned(as: Int8.self))
        case .int16: return Int64(Int16(littleEndian: payload.loadUnaligned(as: Int16.self)))
        case .int32: return Int64(Int32(littleEndian: payload.loadUnaligned(as: Int32.self)))
        case .int64: return Int64(littleEndian: payload.loadUnaligned(as: Int64.self))
        case .uint8, .uint16, .uint32, .uint64: return unsigned(kind, payload).flatMap { Int64(exactly: $0) }
        default: return nil
        }
    }

    static func unsigned(_ kind: FieldKind, _ payload: UnsafeRawBufferPointer) -> UInt64? {
        switch kind {
        case .uint8: return UInt64(payload.loadUnaligned(as: UInt8.self))
        case .uint16: return UInt64(UInt16(littleEndian: payload.loadUnaligned(as: UInt16.self)))
        case .uint32: return UInt64(UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self)))
        case .uint64: return UInt64(littleEndian: payload.loadUnaligned(as: UInt64.self))
        case .int8, .int16, .int32, .int64: return signed(kind, payload).flatMap { UInt64(exactly: $0) }
        default: return nil
        }
    }

    static func double(_ kind: FieldKind, _ payload: UnsafeRawBufferPointer) -> Double? {
        switch kind {
        case .float64: return Double(bitPattern: UInt64(littleEndian: payload.loadUnaligned(as: UInt64.self)))
        case .float32: return Double(Float(bitPattern: UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self))))
        default: return nil
        }
    }
}
