/// Walks the fields of a stored record; generated `_cofferDecode` functions drive it.
///
/// The reader works directly on LMDB's memory-mapped bytes (no copy). It skips fields whose
/// property the current schema does not have, and checks every length against the record's
/// end so that a damaged file gives ``CofferError/damagedRecord(entity:id:reason:)``, never
/// a crash.
///
/// ```swift
/// while let field = try reader.nextField() {
///     switch field {
///     case 1: firstName = try reader.value(String.self)
///     default: break
///     }
/// }
/// ```
///
/// Public under an underscored name, not `@_spi`: ``Entity/_cofferDecode(id:from:)`` names
/// it, and that requirement is public because the inlinable reads (`Box.get`, `Query.find`)
/// call it; the underscore keeps it out of code completion, and its members are
/// `@_spi(CofferGenerated)`. Coffer's own code calls it ``RecordReader``.
public struct _RecordReader {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let end: Int
    @usableFromInline var offset: Int
    /// Schema position for each stored property id; -1 where the schema has no such property.
    @usableFromInline let positions: UnsafePointer<Int16>
    @usableFromInline let positionCount: Int
    /// Stored property id for each schema position (the writer's table), for ``enter(_:)``.
    @usableFromInline let storedIds: UnsafePointer<UInt16>
    /// The format 2 tag of each schema position without its kind bits (see
    /// `RecordLayout.tagBases`), for the straight path.
    @usableFromInline let tagBases: UnsafePointer<UInt32>
    /// Whether the record is in format 2 (else format 1).
    @usableFromInline let compact: Bool
    /// `end` for a format 2 record, 0 for a format 1 record: the straight path checks its
    /// bounds against it, so it never reads a format 1 record (the general path does).
    @usableFromInline let straightEnd: Int
    @usableFromInline var kind: FieldKind = .boolFalse
    @usableFromInline var payload: Int = 0
    @usableFromInline var payloadLength: Int = 0
    @usableFromInline var field: Int = 0
    /// Set when ``nextField()`` skipped a field of a property the schema does not have: a
    /// put of the decoded object carries such fields into its new record.
    @usableFromInline var skippedUnknownField = false
    /// The entity's layout, unretained: a reader lives inside a call that holds it.
    let layout: Unmanaged<RecordLayout>
    /// The id of the object the record belongs to.
    @usableFromInline let id: Id

    init(bytes: UnsafeRawBufferPointer, layout: RecordLayout, id: Id) throws {
        guard let base = bytes.baseAddress, bytes.count >= 1 else {
            throw CofferError.damagedRecord(entity: layout.entityName, id: id, reason: "the record is empty")
        }
        let version = base.load(as: UInt8.self)
        guard version == recordFormatVersion || version == legacyRecordFormatVersion else {
            throw CofferError.damagedRecord(
                entity: layout.entityName, id: id, reason: "unknown record format version \(version)")
        }
        self.base = base
        self.end = bytes.count
        self.offset = 1
        self.positions = UnsafePointer(layout.positionsByStoredId)
        self.positionCount = layout.positionCount
        self.storedIds = UnsafePointer(layout.storedIds)
        self.tagBases = UnsafePointer(layout.tagBases)
        self.compact = version == recordFormatVersion
        self.straightEnd = compact ? bytes.count : 0
        self.layout = Unmanaged.passUnretained(layout)
        self.id = id
    }

    /// A reader positioned on one field, for reading a single value (property queries).
    init(field: RecordFields.Field, position: Int, layout: RecordLayout, id: Id) {
        self.base = field.payload.baseAddress ?? emptyPayloadBase
        self.end = field.payload.count
        self.offset = field.payload.count
        self.positions = UnsafePointer(layout.positionsByStoredId)
        self.positionCount = layout.positionCount
        self.storedIds = UnsafePointer(layout.storedIds)
        self.tagBases = UnsafePointer(layout.tagBases)
        // Positioned past the end: there is no next field to parse in either format.
        self.compact = true
        self.straightEnd = 0
        self.layout = Unmanaged.passUnretained(layout)
        self.id = id
        self.kind = field.kind
        self.payload = 0
        self.payloadLength = field.payload.count
        self.field = position
    }

    /// Moves to the next field the schema knows and returns its schema position, or nil at
    /// the end of the record.
    ///
    /// ```swift
    /// while let field = try reader.nextField() { ... }
    /// ```
    @_spi(CofferGenerated) @inlinable
    @_spi(CofferGenerated) public mutating func nextField() throws -> Int? {
        while offset < end {
            let header: FieldHeader
            switch FieldHeader.parse(base, at: offset, end: end, compact: compact) {
            case .success(let parsed): header = parsed
            case .failure(let damage): throw corrupt(damage.reason)
            }
            assert(header.payloadStart > offset && header.payloadEnd <= end, "a parsed field lies after its header and inside the record")
            offset = header.payloadEnd
            let storedId = header.fieldId
            let kind = header.kind
            let start = header.payloadStart
            let length = header.payloadLength
            let position = storedId < positionCount ? Int(positions[storedId]) : -1
            if position >= 0 {
                self.kind = kind
                self.payload = start
                self.payloadLength = length
                self.field = position
                return position
            }
            skippedUnknownField = true
        }
        return nil
    }

    /// The straight path of generated decoders: when the next field is the one at schema
    /// position `field`, moves onto it and returns true; otherwise returns false and leaves
    /// the reader where it was.
    ///
    /// The current schema writes every field in schema order, so a decoder that tries each
    /// position in order reads such a record with one header and one id comparison per field
    /// instead of a look-up and a dispatch. Whatever it does not take (a field of another build, a field
    /// out of order, damage) is left to the ``nextField()`` loop that follows, which reads
    /// from where this stopped and reports damage.
    ///
    /// ```swift
    /// if reader.enter(1) { name = try reader.value(String.self) }
    /// if reader.enter(2) { age = try reader.value(Int.self) }
    /// while let field = try reader.nextField() { ... }   // anything left
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public mutating func enter(_ field: Int) -> Bool {
        guard offset < end, case .success(let header) = FieldHeader.parse(base, at: offset, end: end, compact: compact),
              header.fieldId == Int(storedIds[field]) else { return false }
        kind = header.kind
        payload = header.payloadStart
        payloadLength = header.payloadLength
        self.field = field
        offset = header.payloadEnd
        return true
    }

    /// Decodes the current field as `V`.
    ///
    /// ```swift
    /// case 2: age = try reader.value(Int.self)
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public func value<V: RecordValue>(_ type: V.Type) throws -> V {
        guard let value = V.cofferRead(from: self) else { throw mismatch(String(describing: V.self)) }
        return value
    }

    /// Decodes the current field as an enum from its raw value.
    ///
    /// ```swift
    /// case 4: color = try reader.value(Color.self)
    /// ```
    @_spi(CofferGenerated) @inlinable @inline(__always)
    @_spi(CofferGenerated) public func value<V: RawRepresentable>(_ type: V.Type) throws -> V where V.RawValue: RecordValue {
        guard let raw = V.RawValue.cofferRead(from: self) else { throw mismatch(String(describing: V.self)) }
        guard let value = V(rawValue: raw) else {
            throw corrupt("\(V.self) has no case with raw value \(raw)")
        }
        return value
    }

    /// Reports a non-optional property without a stored value and without a default.
    ///
    /// ```swift
    /// firstName: try firstName ?? reader.missing(1)
    /// ```
    @_spi(CofferGenerated) public func missing<T>(_ field: Int) throws -> T {
        let layout = layout.takeUnretainedValue()
        throw CofferError.damagedRecord(
            entity: layout.entityName, id: id,
            reason: "no stored value for the non-optional property \(layout.propertyName(field)), which has no default value")
    }

    @usableFromInline
    func corrupt(_ reason: String) -> CofferError {
        CofferError.damagedRecord(entity: layout.takeUnretainedValue().entityName, id: id, reason: reason)
    }

    @usableFromInline
    func mismatch(_ type: String) -> CofferError {
        let layout = layout.takeUnretainedValue()
        return CofferError.damagedRecord(
            entity: layout.entityName, id: id,
            reason: "property \(layout.propertyName(field)) holds a \(kind) value, which cannot be read as \(type)")
    }

    // MARK: Typed payload access used by RecordValue conformances

    @inlinable
    func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inlinable @inline(__always)
    var signedValue: Int64? {
        switch kind {
        case .int8: return Int64(load(Int8.self, at: payload))
        case .int16: return Int64(load(Int16.self, at: payload))
        case .int32: return Int64(load(Int32.self, at: payload))
        case .int64: return load(Int64.self, at: payload)
        case .uint8: return Int64(load(UInt8.self, at: payload))
        case .uint16: return Int64(load(UInt16.self, at: payload))
        case .uint32: return Int64(load(UInt32.self, at: payload))
        case .uint64: return Int64(exactly: load(UInt64.self, at: payload))
        default: return nil
        }
    }

    @inlinable @inline(__always)
    var unsignedValue: UInt64? {
        switch kind {
        case .uint8: return UInt64(load(UInt8.self, at: payload))
        case .uint16: return UInt64(load(UInt16.self, at: payload))
        case .uint32: return UInt64(load(UInt32.self, at: payload))
        case .uint64: return load(UInt64.self, at: payload)
        case .int8, .int16, .int32, .int64: return signedValue.flatMap { UInt64(exactly: $0) }
        default: return nil
        }
    }

    @inlinable @inline(__always)
    var doubleValue: Double? {
        switch kind {
        case .float64: return Double(bitPattern: load(UInt64.self, at: payload))
        case .float32: return Double(Float(bitPattern: load(UInt32.self, at: payload)))
        default: return nil
        }
    }

    @inlinable
    var payloadBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + payload, count: payloadLength)
    }
}

/// A valid address for readers of empty payloads (an empty buffer may have no base address).
nonisolated(unsafe) let emptyPayloadBase = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))

/// The record reader under Coffer's own name (see ``_RecordReader`` for why the public type
/// is underscored).
@usableFromInline typealias RecordReader = _RecordReader
