/// The one reader of record bytes without generated code: finds fields by stored property
/// id for conditions, index maintenance, unique checks, sorting, property queries, link
/// clearing and the tools.
///
/// Invariant: a record is either well formed or damage. Every walk checks the version byte,
/// each field header, kind and length against the record's end; damage throws
/// ``CofferError/corruptRecord(entity:id:reason:)`` naming the entity and id. A property
/// is nil only when the whole record was walked intact: a damaged record can never read as
/// "this property is nil" (which would make `isNil()` match it, or leave a stale index
/// entry). A field that is found is returned at once (`field(_:)`): the bytes after it do not
/// change its value, and they are checked whenever the record is decoded, rewritten or
/// verified.
///
/// The generated decoders use ``RecordReader``, which applies the same checks field by
/// field.
struct RecordFields {
    struct Field {
        let kind: FieldKind
        let payload: UnsafeRawBufferPointer
    }

    let bytes: UnsafeRawBufferPointer
    /// Whose record this is, for error messages.
    let entity: String
    let id: Id

    init(bytes: UnsafeRawBufferPointer, entity: String, id: Id) {
        self.bytes = bytes
        self.entity = entity
        self.id = id
    }

    /// Calls `body` for every field in record order; throws at the first damage.
    func forEach(_ body: (UInt16, Field) throws -> Void) throws {
        guard bytes.count >= 1 else { throw damage("the record is empty") }
        guard bytes[0] == recordFormatVersion else { throw damage("unknown record format version \(bytes[0])") }
        guard let base = bytes.baseAddress else { throw damage("the record is empty") }
        var offset = 1
        while offset < bytes.count {
            switch FieldHeader.parse(base, at: offset, end: bytes.count) {
            case .failure(let problem):
                throw damage(problem.reason)
            case .success(let header):
                let payload = UnsafeRawBufferPointer(start: base + header.payloadStart, count: header.payloadLength)
                try body(UInt16(header.fieldId), Field(kind: header.kind, payload: payload))
                offset = header.payloadStart + header.payloadLength
            }
        }
    }

    /// Checks the whole record's structure.
    func validate() throws {
        try forEach { _, _ in }
    }

    /// The field with stored property id `fieldId`, or nil when the well-formed record has
    /// none (a nil value). Throws at damage before or in the field, and at damage anywhere
    /// when the field is missing: nil is only ever the answer of a whole, intact record.
    ///
    /// Conditions call this for every scanned record, so it walks the headers inline (no
    /// closure) and stops at the field: the fields after it do not change its value (they
    /// are checked when the record is decoded, rewritten or verified).
    func field(_ fieldId: UInt16) throws -> Field? {
        guard let base = bytes.baseAddress, bytes.count >= 1 else { throw damage("the record is empty") }
        let version = base.load(as: UInt8.self)
        guard version == recordFormatVersion else { throw damage("unknown record format version \(version)") }
        let end = bytes.count
        let wanted = Int(fieldId)
        var offset = 1
        while offset < end {
            switch FieldHeader.parse(base, at: offset, end: end) {
            case .failure(let problem):
                throw damage(problem.reason)
            case .success(let header):
                if header.fieldId == wanted {
                    return Field(kind: header.kind, payload: UnsafeRawBufferPointer(start: base + header.payloadStart, count: header.payloadLength))
                }
                offset = header.payloadStart + header.payloadLength
            }
        }
        return nil
    }

    func damage(_ reason: String) -> CofferError {
        CofferError.corruptRecord(entity: entity, id: id, reason: reason)
    }
}
