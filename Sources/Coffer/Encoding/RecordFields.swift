import Foundation

/// The one reader of record bytes without generated code: finds fields by stored property
/// id for conditions, index maintenance, unique checks, sorting, property queries, link
/// clearing and the tools.
///
/// Invariant: a record is either well formed or damage. Every walk checks the version byte,
/// each field header, kind and length against the record's end; damage throws
/// ``CofferError/damagedRecord(entity:id:reason:)`` naming the entity and id. A property
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

        /// The value of a signed integer field (the four widths the writer picks from), or nil
        /// for any other kind.
        @inline(__always)
        var signedInteger: Int64? {
            switch kind {
            case .int8: return Int64(payload.loadUnaligned(as: Int8.self))
            case .int16: return Int64(Int16(littleEndian: payload.loadUnaligned(as: Int16.self)))
            case .int32: return Int64(Int32(littleEndian: payload.loadUnaligned(as: Int32.self)))
            case .int64: return Int64(littleEndian: payload.loadUnaligned(as: Int64.self))
            default: return nil
            }
        }

        /// Whether two fields (nil: absent) store the same value byte for byte, so that
        /// everything derived from them (index keys) is the same too.
        static func sameStoredValue(_ a: Field?, _ b: Field?) -> Bool {
            switch (a, b) {
            case (nil, nil): return true
            case (let a?, let b?):
                return a.kind == b.kind && a.payload.count == b.payload.count && ByteSearch.order(a.payload, b.payload) == 0
            default: return false
            }
        }
    }

    /// Whose record this is, for error messages: a layout, whose name is read only for a
    /// message (copying the name into every record view cost the write path a retain and a
    /// release per view), or a name.
    enum Owner {
        /// Unretained: a record view lives inside a call that holds the layout.
        case layout(Unmanaged<RecordLayout>)
        case name(String)
    }

    let bytes: UnsafeRawBufferPointer
    let owner: Owner
    let id: Id

    init(bytes: UnsafeRawBufferPointer, entity: String, id: Id) {
        self.bytes = bytes
        self.owner = .name(entity)
        self.id = id
    }

    /// A view of a record of `layout`'s entity.
    init(bytes: UnsafeRawBufferPointer, layout: RecordLayout, id: Id) {
        self.bytes = bytes
        self.owner = .layout(Unmanaged.passUnretained(layout))
        self.id = id
    }

    /// The entity's name, for messages.
    var entity: String {
        switch owner {
        case .layout(let layout): return layout.takeUnretainedValue().entityName
        case .name(let name): return name
        }
    }

    /// A walk over the fields in record order that throws at the first damage; the loops
    /// of hot paths use it directly (a closure that captured their state was checked for
    /// exclusive access at run time on every field).
    ///
    /// ```swift
    /// var walk = try record.walk()
    /// while let (fieldId, field) = try walk.next() { ... }
    /// ```
    struct Walk {
        let record: RecordFields
        let base: UnsafeRawPointer
        /// Format 2 headers (else format 1).
        let compact: Bool
        var offset = 1

        mutating func next() throws -> (fieldId: UInt16, field: Field)? {
            guard offset < record.bytes.count else { return nil }
            switch FieldHeader.parse(base, at: offset, end: record.bytes.count, compact: compact) {
            case .failure(let problem):
                throw record.damage(problem.reason)
            case .success(let header):
                assert(header.payloadStart > offset && header.payloadStart <= header.payloadEnd && header.payloadEnd <= record.bytes.count,
                       "a parsed field lies after its header and inside the record")
                offset = header.payloadEnd
                let payload = UnsafeRawBufferPointer(start: base + header.payloadStart, count: header.payloadLength)
                return (UInt16(header.fieldId), Field(kind: header.kind, payload: payload))
            }
        }
    }

    /// Starts a walk; throws when the record is empty or of an unknown format version.
    func walk() throws -> Walk {
        guard bytes.count >= 1, let base = bytes.baseAddress else { throw damage("the record is empty") }
        let version = bytes[0]
        guard version == recordFormatVersion || version == legacyRecordFormatVersion else {
            throw damage("unknown record format version \(version)")
        }
        return Walk(record: self, base: base, compact: version == recordFormatVersion)
    }

    /// Whether this record holds the same bytes as `other` from its start through the end of
    /// `field`, a field found in `other`. Then a walk of this record reads the same headers up
    /// to `field` (each header is parsed from its own bytes, and every payload up to there
    /// ends inside both records), so `field(_:)` finds the same field here, holding the same
    /// value: an update that kept an indexed value and everything before it needs no look-up.
    func hasSamePrefix(as other: RecordFields, through field: Field) -> Bool {
        guard let base = bytes.baseAddress, let otherBase = other.bytes.baseAddress,
              let payload = field.payload.baseAddress else { return false }
        let end = payload - otherBase + field.payload.count
        // `field` must lie in `other` (a defensive check: callers pass one of its fields).
        guard end > 0, end <= other.bytes.count, end <= bytes.count else { return false }
        return memcmp(base, otherBase, end) == 0
    }

    /// Calls `body` for every field in record order; throws at the first damage.
    func forEach(_ body: (UInt16, Field) throws -> Void) throws {
        var walk = try walk()
        while let (fieldId, field) = try walk.next() { try body(fieldId, field) }
    }

    /// Checks the whole record's structure.
    func validate() throws {
        try forEach { _, _ in }
    }

    /// The field with stored property id `fieldId`, or nil when the well-formed record has
    /// none (a nil value). Throws at damage before or in the field, and at damage anywhere
    /// when the field is missing: nil is only ever the answer of a whole, intact record.
    ///
    /// It stops at the field: the fields after it do not change its value (they are checked
    /// when the record is decoded, rewritten or verified). Per-record loops of scans call
    /// ``inlinedField(_:)``, the same walk inlined into them.
    func field(_ fieldId: UInt16) throws -> Field? {
        try inlinedField(fieldId)
    }

    /// ``field(_:)`` inlined into its caller, for the per-record condition of scans, where a
    /// call per scanned record (saved registers, the record passed in memory) is a large part
    /// of the work. Walks the headers without a closure and keeps the error paths out of
    /// line. Inlined into the write path, it grows the code more than it saves, so everything
    /// else calls ``field(_:)``.
    @inline(__always)
    func inlinedField(_ fieldId: UInt16) throws -> Field? {
        try inlinedField(fieldId, shortcut: nil)
    }

    /// ``inlinedField(_:)``, and for a scan that tests one field of every record, with the
    /// scan's `shortcut`: the walk starts at the field's header when the shortcut knows the
    /// record's layout (see ``Shortcut``), and a walk from the first header teaches it the
    /// record's layout. The same answers and the same damage either way. (Inlined with nil,
    /// the shortcut's branches fold away.)
    @inline(__always)
    func inlinedField(_ fieldId: UInt16, shortcut: Shortcut?) throws -> Field? {
        #if DEBUG
        if let shortcut { return try fieldCheckingShortcut(fieldId, shortcut: shortcut) }
        #endif
        return try walkToField(fieldId, shortcut: shortcut)
    }

    #if DEBUG
    /// ``inlinedField(_:shortcut:)`` in debug builds: the answer with the shortcut, checked
    /// against a walk from the first header. The shortcut is exact (see ``Shortcut``), so the
    /// two agree on every record, damaged ones included: a difference is a bug.
    func fieldCheckingShortcut(_ fieldId: UInt16, shortcut: Shortcut) throws -> Field? {
        let answer = Result { try walkToField(fieldId, shortcut: shortcut) }
        shortcut.checkInvariants()
        let walked = Result { try walkToField(fieldId, shortcut: nil) }
        switch (answer, walked) {
        case (.success(let found), .success(let expected)):
            assert(found?.kind == expected?.kind && found?.payload.baseAddress == expected?.payload.baseAddress
                   && found?.payload.count == expected?.payload.count,
                   "the scan shortcut found another field than the walk of record \(id)")
        case (.failure, .failure):
            break
        default:
            assertionFailure("the scan shortcut and the walk of record \(id) disagree on damage")
        }
        return try answer.get()
    }
    #endif

    /// The walk of ``inlinedField(_:shortcut:)``.
    @inline(__always)
    private func walkToField(_ fieldId: UInt16, shortcut: Shortcut?) throws -> Field? {
        guard let base = bytes.baseAddress, bytes.count >= 1 else { throw badStart() }
        let version = base.load(as: UInt8.self)
        guard version == recordFormatVersion || version == legacyRecordFormatVersion else { throw badStart() }
        let end = bytes.count
        guard version == recordFormatVersion else {
            switch Self.legacyField(fieldId, base: base, end: end) {
            case .failure(let problem): throw damage(problem)
            case .success(let field): return field
            }
        }
        let wanted = Int(fieldId)
        var offset = 1
        var learns = false
        if let shortcut {
            if let known = shortcut.start(base, end: end) {
                offset = known
            } else {
                learns = true
                shortcut.restart()
            }
        }
        while offset < end {
            switch FieldHeader.parseCompact(base, at: offset, end: end) {
            case .failure(let problem):
                throw damage(problem)
            case .success(let header):
                assert(header.payloadStart > offset && header.payloadStart <= header.payloadEnd && header.payloadEnd <= end,
                       "a parsed field lies after its header and inside the record")
                if header.fieldId == wanted {
                    if learns { shortcut?.found(at: offset, base: base, end: end) }
                    return Field(kind: header.kind, payload: UnsafeRawBufferPointer(start: base + header.payloadStart, count: header.payloadLength))
                }
                if learns { shortcut?.learn(headerAt: offset, payloadStart: header.payloadStart, base: base) }
                offset = header.payloadEnd
            }
        }
        return nil
    }

    /// ``inlinedField(_:)`` for a record of format 1 (the first record layout, still read and
    /// never written: see ``FieldKind``), out of line and without the record's names (a copy
    /// of them would cost the scan loop a retain per record): the hot loops read format 2.
    @inline(never)
    static func legacyField(_ fieldId: UInt16, base: UnsafeRawPointer, end: Int) -> Result<Field?, FieldHeader.Damage> {
        var offset = 1
        while offset < end {
            switch FieldHeader.parseLegacy(base, at: offset, end: end) {
            case .failure(let problem):
                return .failure(problem)
            case .success(let header):
                if header.fieldId == Int(fieldId) {
                    return .success(Field(kind: header.kind, payload: UnsafeRawBufferPointer(start: base + header.payloadStart, count: header.payloadLength)))
                }
                offset = header.payloadEnd
            }
        }
        return .success(nil)
    }

    /// Why a record's first byte cannot be read: it is empty or of an unknown format version.
    @inline(never)
    func badStart() -> CofferError {
        guard let first = bytes.first else { return damage("the record is empty") }
        return damage("unknown record format version \(first)")
    }

    @inline(never)
    func damage(_ problem: FieldHeader.Damage) -> CofferError {
        damage(problem.reason)
    }

    func damage(_ reason: String) -> CofferError {
        CofferError.damagedRecord(entity: entity, id: id, reason: reason)
    }
}
