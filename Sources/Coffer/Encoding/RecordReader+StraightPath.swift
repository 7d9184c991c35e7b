import Foundation

/// The straight path of generated decoders for the standard value types.
///
/// A record written by the current schema holds its fields in schema order, each with the
/// kind the writer gives the property's type. `take(_:_:)` reads such a field in one step:
/// it compares the field's format 2 tag (property id and kind in two bytes) with the expected
/// one, checks the payload against the record's end, reads the value and moves past it.
/// Anything else (a field of another build, another order, another kind, a value out of the
/// type's range, an escaped property id, damage, and every field of a format 1 record)
/// returns nil without moving, and the generated `nextField()` loop that follows reads it the
/// general way, converting or reporting it exactly as before.
///
/// Unlike ``enter(_:)`` followed by ``value(_:)``, no reader state is written and the reader
/// is not copied per field; and nothing can fail once the checks pass, so the path does not
/// throw.
///
/// Invariant the wrapping arithmetic below relies on: `0 <= offset <= end`, `straightEnd` is
/// `end` or 0, and `end` is the length of a record in the map (far below `Int.max`); every
/// addition is checked against `straightEnd - offset` first, and lengths are 32-bit. With
/// `straightEnd == 0` (format 1) every check fails, since `offset >= 1`.
extension RecordReader {
    /// Whether the general field loop, started at `start`, reads the field at schema position
    /// `field` as `value` and ends where the straight path did: the straight path's promise,
    /// checked by `assert` in debug builds (of the generated code's module). The straight
    /// path takes only well-formed format 2 fields, so a difference is a bug, never damage.
    @usableFromInline
    func fieldLoopAgrees<V: RecordValue & Equatable>(from start: Int, field: Int, _ value: V) -> Bool {
        var general = self
        general.offset = start
        guard let position = try? general.nextField(), position == field, general.offset == offset,
              let read = V.cofferRead(from: general) else { return false }
        // NaN equals nothing, itself included.
        return read == value || (read != read && value != value)
    }

    /// The format 2 tag at the reader's offset, widened for comparison with `tagBases`.
    /// Requires 2 readable bytes.
    @inlinable @inline(__always)
    func tagHere() -> UInt32 {
        UInt32(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }

    /// The payload offset of the next field when it is the field at schema position `field`,
    /// stored with `kind` and a fixed payload of `size` bytes; nil otherwise.
    @inlinable @inline(__always)
    mutating func straightFixed(_ field: Int, _ kind: FieldKind, size: Int) -> Int? {
        guard straightEnd &- offset >= 2 &+ size, tagHere() == tagBases[field] | UInt32(kind.rawValue) else { return nil }
        let payload = offset &+ 2
        offset = payload &+ size
        return payload
    }

    /// The payload of the next field when it is the field at schema position `field` stored
    /// as `.bytes`; nil otherwise.
    @inlinable @inline(__always)
    mutating func straightBytes(_ field: Int) -> UnsafeRawBufferPointer? {
        guard straightEnd &- offset >= 3, tagHere() == tagBases[field] | UInt32(FieldKind.bytes.rawValue) else { return nil }
        var length = Int(base.load(fromByteOffset: offset &+ 2, as: UInt8.self))
        var payload = offset &+ 3
        if length == Int(longLengthMarker) {
            guard straightEnd &- payload >= 4 else { return nil }
            length = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: UInt32.self)))
            payload = payload &+ 4
        }
        guard straightEnd &- payload >= length else { return nil }
        offset = payload &+ length
        return UnsafeRawBufferPointer(start: base + payload, count: length)
    }

    /// Moves past the next field when it is the field at schema position `field` holding an
    /// integer of one of the four kinds from `narrowest` on (8, 16, 32 and 64 bits, the widths
    /// the writer picks from); returns the width's step (0 ... 3: 1 << step bytes) and where
    /// the payload starts; nil otherwise.
    ///
    /// The kind is the tag's low 5 bits, so the tag minus the expected tag of the narrowest
    /// kind is the step when the property id matches; for another id it differs by at least
    /// 32 minus the spread of the kinds, never below 4.
    @inlinable @inline(__always)
    mutating func straightInteger(_ field: Int, from narrowest: FieldKind) -> (step: UInt8, payload: Int)? {
        let available = straightEnd &- offset
        guard available >= 3 else { return nil }
        let step = tagHere() &- (tagBases[field] | UInt32(narrowest.rawValue))
        guard step < 4 else { return nil }
        let size = 1 &<< Int(step)
        guard available >= 2 &+ size else { return nil }
        let payload = offset &+ 2
        offset = payload &+ size
        return (UInt8(truncatingIfNeeded: step), payload)
    }

    /// The next field's value when it is the field at schema position `field` holding a
    /// signed integer; nil otherwise.
    @inlinable @inline(__always)
    mutating func straightSigned(_ field: Int) -> Int64? {
        guard let (step, payload) = straightInteger(field, from: .int8) else { return nil }
        switch step {
        case 0: return Int64(base.load(fromByteOffset: payload, as: Int8.self))
        case 1: return Int64(Int16(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: Int16.self)))
        case 2: return Int64(Int32(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: Int32.self)))
        default: return Int64(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: Int64.self))
        }
    }

    /// The next field's value when it is the field at schema position `field` holding an
    /// unsigned integer; nil otherwise.
    @inlinable @inline(__always)
    mutating func straightUnsigned(_ field: Int) -> UInt64? {
        guard let (step, payload) = straightInteger(field, from: .uint8) else { return nil }
        switch step {
        case 0: return UInt64(base.load(fromByteOffset: payload, as: UInt8.self))
        case 1: return UInt64(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: UInt16.self)))
        case 2: return UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: UInt32.self)))
        default: return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: UInt64.self))
        }
    }

    /// Reads the next field as a `String` when it is the field at schema position `field`
    /// written by the current schema; nil otherwise (the reader does not move).
    ///
    /// ```swift
    /// stored_name = reader.take(1, String.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: String.Type) -> String? {
        let start = offset
        guard let bytes = straightBytes(field) else { return nil }
        let value = String(recordBytes: bytes)
        assert(fieldLoopAgrees(from: start, field: field, value))
        return value
    }

    /// Reads the next field as `Data`, as the `String` overload does.
    ///
    /// ```swift
    /// stored_avatar = reader.take(4, Data.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: Data.Type) -> Data? {
        let start = offset
        guard let bytes = straightBytes(field) else { return nil }
        let value = Data(recordBytes: bytes)
        assert(fieldLoopAgrees(from: start, field: field, value))
        return value
    }

    /// Reads the next field as a `Bool`, as the `String` overload does.
    ///
    /// ```swift
    /// stored_done = reader.take(2, Bool.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: Bool.Type) -> Bool? {
        guard straightEnd &- offset >= 2 else { return nil }
        let value: Bool
        switch tagHere() &- tagBases[field] {
        case UInt32(FieldKind.boolTrue.rawValue): value = true
        case UInt32(FieldKind.boolFalse.rawValue): value = false
        default: return nil
        }
        offset = offset &+ 2
        assert(fieldLoopAgrees(from: offset &- 2, field: field, value))
        return value
    }

    /// Reads the next field as a `Double`, as the `String` overload does.
    ///
    /// ```swift
    /// stored_price = reader.take(3, Double.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: Double.Type) -> Double? {
        guard let payload = straightFixed(field, .float64, size: 8) else { return nil }
        let value = Double(bitPattern: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: UInt64.self)))
        assert(fieldLoopAgrees(from: payload &- 2, field: field, value))
        return value
    }

    /// Reads the next field as a `Float`, as the `String` overload does.
    ///
    /// ```swift
    /// stored_ratio = reader.take(3, Float.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: Float.Type) -> Float? {
        guard let payload = straightFixed(field, .float32, size: 4) else { return nil }
        let value = Float(bitPattern: UInt32(littleEndian: base.loadUnaligned(fromByteOffset: payload, as: UInt32.self)))
        assert(fieldLoopAgrees(from: payload &- 2, field: field, value))
        return value
    }

    /// Reads the next field as a `Date`, as the `String` overload does.
    ///
    /// ```swift
    /// stored_created = reader.take(5, Date.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: Date.Type) -> Date? {
        take(field, Double.self).map(Date.init(timeIntervalSinceReferenceDate:))
    }

    /// Reads the next field as a `UUID`, as the `String` overload does.
    ///
    /// ```swift
    /// stored_token = reader.take(6, UUID.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take(_ field: Int, _: UUID.Type) -> UUID? {
        guard let payload = straightFixed(field, .uuid, size: 16) else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + payload, count: 16)) }
        let uuid = UUID(uuid: value)
        assert(fieldLoopAgrees(from: payload &- 2, field: field, uuid))
        return uuid
    }

    /// Reads the next field as a signed integer type; a stored value outside the type's range
    /// is left to the general reader, which reports it.
    ///
    /// ```swift
    /// stored_age = reader.take(2, Int.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take<V: RecordValue & FixedWidthInteger & SignedInteger>(_ field: Int, _: V.Type) -> V? {
        let start = offset
        guard let wide = straightSigned(field) else { return nil }
        guard let value = V(exactly: wide) else {
            offset = start
            return nil
        }
        assert(fieldLoopAgrees(from: start, field: field, value))
        return value
    }

    /// Reads the next field as an unsigned integer type; a stored value outside the type's
    /// range is left to the general reader, which reports it.
    ///
    /// ```swift
    /// stored_count = reader.take(2, UInt32.self)   // generated
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func take<V: RecordValue & FixedWidthInteger & UnsignedInteger>(_ field: Int, _: V.Type) -> V? {
        let start = offset
        guard let wide = straightUnsigned(field) else { return nil }
        guard let value = V(exactly: wide) else {
            offset = start
            return nil
        }
        assert(fieldLoopAgrees(from: start, field: field, value))
        return value
    }
}

extension String {
    /// The string a `.bytes` payload holds: copied and validated in one step (invalid UTF-8 is
    /// repaired, as `String(decoding:as:)` does), without the slower general decoding path.
    @inlinable @inline(__always)
    init(recordBytes bytes: UnsafeRawBufferPointer) {
        self.init(unsafeUninitializedCapacity: bytes.count) { buffer in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return 0 }
            UnsafeMutableRawPointer(target).copyMemory(from: source, byteCount: bytes.count)
            return bytes.count
        }
    }
}

extension Data {
    /// A copy of a `.bytes` payload. `Data(bytes:count:)` copies in one step; the Sequence
    /// initializer goes byte by byte.
    @inlinable @inline(__always)
    init(recordBytes bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress, bytes.count > 0 {
            self.init(bytes: base, count: bytes.count)
        } else {
            self.init()
        }
    }
}
