/// The wire kind that prefixes every field of a record.
///
/// Records are self-describing so that a reader can skip fields it does not know (a removed
/// property) and widen values it does (an `Int32` written before the property became
/// `Int64`). Integers are written in the narrowest kind that holds the value.
///
/// Record layout (little-endian), format 2, which every write produces:
///
///     record := 0x02 field*
///     field  := tag:u16 [propertyId:u16] [length] payload
///     tag    := propertyId << 5 | kind          (propertyId < 2047)
///             | 2047 << 5 | kind                (then the u16 property id follows)
///     length := n:u8                            (n < 255)
///             | 0xFF n:u32
///
/// Fixed kinds have an implied payload size; variable kinds have a length (writers that
/// learn it only after the payload use the long form). A nil optional is not written at all.
/// Format 1, the first record layout (version byte 0x01), is still read but never written;
/// an update rewrites a record in format 2. It has `propertyId:u16 kind:u8` headers and a
/// `u32` length for every variable kind: 1 byte more per field and 3 more per length.
@usableFromInline
enum FieldKind: UInt8 {
    case boolFalse = 1
    case boolTrue = 2
    case int8 = 3
    case int16 = 4
    case int32 = 5
    case int64 = 6
    case uint8 = 7
    case uint16 = 8
    case uint32 = 9
    case uint64 = 10
    case float32 = 11
    case float64 = 12
    /// UTF-8 strings and Data: the length, then the bytes.
    case bytes = 13
    /// 16 raw bytes.
    case uuid = 14
    /// The length, `u32 count`, then `count` times (`u32 length`, UTF-8 bytes).
    case stringArray = 15
    /// The length, then little-endian `Int64`s.
    case int64Array = 16
    /// The length, then little-endian `Double` bit patterns.
    case float64Array = 17
    /// The length, then little-endian `UInt64`s.
    case uint64Array = 18
    /// The length, then 16 raw bytes per UUID.
    case uuidArray = 19
    /// The length, then one byte (0 or 1) per Bool.
    case boolArray = 20
    /// The length, then one document value (see `DocumentCodec`).
    case document = 21

    /// The kind a stored byte names, or nil for a byte that names none.
    ///
    /// Every field header of every scanned record goes through this, so it is a range check
    /// and a bit cast instead of the synthesized `init(rawValue:)` (a call per field).
    /// Sound because the cases are declared in raw-value order from 1 with no gaps, so the
    /// case index is `raw - 1`; `FieldKindTests` checks every byte against `init(rawValue:)`.
    @inlinable @inline(__always)
    static func decoded(_ raw: UInt8) -> FieldKind? {
        let index = raw &- 1
        guard index < 21 else { return nil }
        return unsafeBitCast(index, to: FieldKind.self)
    }

    /// The payload size of a fixed kind, or nil for a length-prefixed kind.
    @inlinable
    var fixedSize: Int? {
        switch self {
        case .boolFalse, .boolTrue: return 0
        case .int8, .uint8: return 1
        case .int16, .uint16: return 2
        case .int32, .uint32, .float32: return 4
        case .int64, .uint64, .float64: return 8
        case .uuid: return 16
        case .bytes, .stringArray, .int64Array, .float64Array, .uint64Array, .uuidArray, .boolArray, .document: return nil
        }
    }
}

/// The version byte every record written now starts with: format 2, compact headers.
@usableFromInline
let recordFormatVersion: UInt8 = 2

/// The version byte of records written before format 2 (3-byte headers, 4-byte lengths),
/// which every reader still reads.
@usableFromInline
let legacyRecordFormatVersion: UInt8 = 1

/// In a format 2 tag, the property id that says the real id follows as a `u16`.
@usableFromInline
let escapedPropertyId = 2047

/// In a format 2 length, the byte that says the length follows as a `u32`.
@usableFromInline
let longLengthMarker: UInt8 = 0xFF

/// The framing of one stored field: the single definition of how a record's fields are
/// delimited, used by ``RecordReader`` (generated decoders) and `RecordFields` (everything
/// else), so both read records the same way and apply the same bounds checks.
@usableFromInline
struct FieldHeader {
    /// The catalog property id the field belongs to.
    @usableFromInline let fieldId: Int
    @usableFromInline let kind: FieldKind
    /// Where the payload starts, from the record's first byte.
    @usableFromInline let payloadStart: Int
    @usableFromInline let payloadLength: Int

    /// What is wrong with a field that cannot be read.
    @usableFromInline
    enum Damage: Error {
        case headerCutOff(at: Int)
        case unknownKind(UInt8, at: Int)
        case lengthCutOff(field: Int)
        case pastEnd(field: Int, length: Int)

        @usableFromInline
        var reason: String {
            switch self {
            case .headerCutOff(let offset): return "a field header is cut off at byte \(offset)"
            case .unknownKind(let kind, let offset): return "unknown field kind \(kind) at byte \(offset)"
            case .lengthCutOff(let field): return "the length of field \(field) is cut off"
            case .pastEnd(let field, let length): return "field \(field) of \(length) bytes runs past the record's end"
            }
        }
    }

    @inlinable
    init(fieldId: Int, kind: FieldKind, payloadStart: Int, payloadLength: Int) {
        self.fieldId = fieldId
        self.kind = kind
        self.payloadStart = payloadStart
        self.payloadLength = payloadLength
    }

    /// The field starting at `offset` in the `end` bytes at `base`, checked against `end`.
    ///
    /// Requires `0 <= offset <= end` (every caller starts inside the record and moves only
    /// to `payloadEnd`, which this check keeps `<= end`). With that, and `end` being a record's
    /// length, no sum or difference below can overflow, so they use wrapping operators (no
    /// overflow checks on the hottest loop).
    @inlinable @inline(__always)
    static func parse(_ base: UnsafeRawPointer, at offset: Int, end: Int, compact: Bool) -> Result<FieldHeader, Damage> {
        compact ? parseCompact(base, at: offset, end: end) : parseLegacyOutOfLine(base, at: offset, end: end)
    }

    /// ``parseLegacy(_:at:end:)`` as a call: format 1 records are rare (never written), and
    /// inlining both formats into every field loop makes the loops too large to inline.
    @usableFromInline @inline(never)
    static func parseLegacyOutOfLine(_ base: UnsafeRawPointer, at offset: Int, end: Int) -> Result<FieldHeader, Damage> {
        parseLegacy(base, at: offset, end: end)
    }

    /// A format 2 header (see ``FieldKind``). The usual header (a property id below the
    /// escape, a fixed kind or a length below 255, not at the record's very end) is read
    /// here; everything else goes to ``parseCompactInFull(_:at:end:)``, out of line, which
    /// keeps this small enough to inline into every field loop.
    @inlinable @inline(__always)
    static func parseCompact(_ base: UnsafeRawPointer, at offset: Int, end: Int) -> Result<FieldHeader, Damage> {
        guard end &- offset >= 3 else { return parseCompactInFull(base, at: offset, end: end) }
        let tag = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        let fieldId = tag >> 5
        guard fieldId != escapedPropertyId, let kind = FieldKind.decoded(UInt8(truncatingIfNeeded: tag & 31)) else {
            return parseCompactInFull(base, at: offset, end: end)
        }
        var start = offset &+ 2
        let length: Int
        if let size = kind.fixedSize {
            length = size
        } else {
            let short = base.load(fromByteOffset: start, as: UInt8.self)
            guard short != longLengthMarker else { return parseCompactInFull(base, at: offset, end: end) }
            length = Int(short)
            start = start &+ 1
        }
        guard end &- start >= length else { return .failure(.pastEnd(field: fieldId, length: length)) }
        return .success(FieldHeader(fieldId: fieldId, kind: kind, payloadStart: start, payloadLength: length))
    }

    /// Any format 2 header, with every check.
    @usableFromInline @inline(never)
    static func parseCompactInFull(_ base: UnsafeRawPointer, at offset: Int, end: Int) -> Result<FieldHeader, Damage> {
        guard end &- offset >= 2 else { return .failure(.headerCutOff(at: offset)) }
        let tag = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        let rawKind = UInt8(truncatingIfNeeded: tag & 31)
        guard let kind = FieldKind.decoded(rawKind) else { return .failure(.unknownKind(rawKind, at: offset)) }
        var fieldId = tag >> 5
        var start = offset &+ 2
        if fieldId == escapedPropertyId {
            guard end &- start >= 2 else { return .failure(.headerCutOff(at: offset)) }
            fieldId = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
            start = start &+ 2
        }
        let length: Int
        if let size = kind.fixedSize {
            length = size
        } else {
            guard end &- start >= 1 else { return .failure(.lengthCutOff(field: fieldId)) }
            let short = base.load(fromByteOffset: start, as: UInt8.self)
            start = start &+ 1
            if short != longLengthMarker {
                length = Int(short)
            } else {
                guard end &- start >= 4 else { return .failure(.lengthCutOff(field: fieldId)) }
                length = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
                start = start &+ 4
            }
        }
        guard end &- start >= length else { return .failure(.pastEnd(field: fieldId, length: length)) }
        return .success(FieldHeader(fieldId: fieldId, kind: kind, payloadStart: start, payloadLength: length))
    }

    /// A format 1 header: `propertyId:u16 kind:u8`, then a `u32` length for variable kinds.
    @inlinable @inline(__always)
    static func parseLegacy(_ base: UnsafeRawPointer, at offset: Int, end: Int) -> Result<FieldHeader, Damage> {
        guard end &- offset >= 3 else { return .failure(.headerCutOff(at: offset)) }
        let fieldId = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        let rawKind = base.load(fromByteOffset: offset &+ 2, as: UInt8.self)
        guard let kind = FieldKind.decoded(rawKind) else { return .failure(.unknownKind(rawKind, at: offset)) }
        var start = offset &+ 3
        let length: Int
        if let size = kind.fixedSize {
            length = size
        } else {
            guard end &- start >= 4 else { return .failure(.lengthCutOff(field: fieldId)) }
            length = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
            start = start &+ 4
        }
        guard end &- start >= length else { return .failure(.pastEnd(field: fieldId, length: length)) }
        return .success(FieldHeader(fieldId: fieldId, kind: kind, payloadStart: start, payloadLength: length))
    }

    /// Where the next field starts: `<= end` of the record the header was parsed in.
    @inlinable
    var payloadEnd: Int { payloadStart &+ payloadLength }
}
