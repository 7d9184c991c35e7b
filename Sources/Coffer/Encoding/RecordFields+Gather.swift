extension RecordFields {
    /// Several fields of the record in one walk from the first header, for loops that read
    /// the same few fields of every record (Smart SQL's aggregate kernel). Field id `i` is
    /// wanted when `slots[i] >= 0`, and is put at `found[slots[i]]`; `found` is cleared first,
    /// so a field the record lacks is nil. The walk ends once `wanted` fields are found (the
    /// count of wanted ids), so damage past them is not read, as a lookup of one field does
    /// not read past it; a field id stored twice counts its first copy.
    ///
    /// One walk costs a header parse per field up to the last one wanted; a shortcut per field
    /// (see ``Shortcut``) misses whenever a text of another length comes before the field.
    @inline(__always)
    func gather(_ slots: UnsafeBufferPointer<Int32>, wanted: Int, into found: UnsafeMutableBufferPointer<Field?>) throws {
        for index in found.indices { found[index] = nil }
        if wanted == 0 { return }
        guard let base = bytes.baseAddress, bytes.count >= 1 else { throw badStart() }
        let version = base.load(as: UInt8.self)
        guard version == recordFormatVersion || version == legacyRecordFormatVersion else { throw badStart() }
        let end = bytes.count
        guard version == recordFormatVersion else {
            try gatherLegacy(slots, base: base, end: end, into: found)
            return
        }
        var remaining = wanted
        var offset = 1
        while offset < end {
            switch FieldHeader.parseCompact(base, at: offset, end: end) {
            case .failure(let problem):
                throw damage(problem)
            case .success(let header):
                if header.fieldId < slots.count {
                    let slot = Int(slots[header.fieldId])
                    if slot >= 0, found[slot] == nil {
                        found[slot] = Field(kind: header.kind, payload: UnsafeRawBufferPointer(start: base + header.payloadStart, count: header.payloadLength))
                        remaining &-= 1
                        if remaining == 0 { return }
                    }
                }
                offset = header.payloadEnd
            }
        }
    }

    /// ``gather(_:wanted:into:)`` for a record of format 1 (never written, still read): a
    /// lookup per wanted field, out of line.
    @inline(never)
    private func gatherLegacy(_ slots: UnsafeBufferPointer<Int32>, base: UnsafeRawPointer, end: Int,
                              into found: UnsafeMutableBufferPointer<Field?>) throws {
        for fieldId in slots.indices where slots[fieldId] >= 0 {
            switch Self.legacyField(UInt16(truncatingIfNeeded: fieldId), base: base, end: end) {
            case .failure(let problem): throw damage(problem)
            case .success(let field): found[Int(slots[fieldId])] = field
            }
        }
    }
}
