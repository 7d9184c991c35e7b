import CLMDB
import Foundation

/// Reads the columns a statement needs from one table's records into the row's slots: one
/// walk over each record's fields, decoding only the fields a column reads. Bytes that do
/// not fit the property's type are damage (`CofferError.damagedRecord`), never a NULL.
/// A class: the per-record closures of a walk capture it, and a struct this size was copied
/// out of the closure's context for every record.
final class SQLRecordReader {
    /// Plain values only, so the per-field loop copies no reference (the property's
    /// schema is looked up by `position` for error messages).
    private struct FieldColumn {
        let slot: Int
        let position: Int
        let type: PropertyType
        /// -1: the value itself; else the index of the path inside a document in `paths`.
        let path: Int
        let lastModified: Bool
    }

    let table: SQLTable
    let binding: EntityBinding
    private let idSlot: Int?
    private let soupSlot: Int?
    /// The columns of stored property id `k` are `columns[starts[k]..<starts[k + 1]]`.
    private let columns: [FieldColumn]
    private let starts: [Int]
    private let paths: [[String]]
    private let fieldSlots: [Int]
    private let soup: (byId: [UInt16: CatalogProperty], nesting: EmbeddedNesting, relations: [(name: String, table: MDB_dbi)])?

    /// Seconds between 1970 and 2001, the reference date Coffer stores dates from.
    static let referenceDateOffset = 978_307_200.0

    init(table: SQLTable, binding: EntityBinding, store: Store, transaction: Transaction) throws {
        self.table = table
        self.binding = binding
        var idSlot: Int?
        var soupSlot: Int?
        var byStoredId: [[FieldColumn]] = []
        var paths: [[String]] = []
        var fieldSlots: [Int] = []
        for column in table.columns {
            switch column.source {
            case .id: idSlot = column.slot
            case .soup: soupSlot = column.slot
            case .field(let position), .documentPath(let position, _), .lastModified(let position):
                let storedId = Int(binding.storedIds[position])
                if storedId >= byStoredId.count { byStoredId += Array(repeating: [], count: storedId + 1 - byStoredId.count) }
                var path = -1
                if case .documentPath(_, let inner) = column.source {
                    path = paths.count
                    paths.append(inner)
                }
                var lastModified = false
                if case .lastModified = column.source { lastModified = true }
                byStoredId[storedId].append(FieldColumn(slot: column.slot, position: position, type: binding.schema.properties[position].type,
                                                        path: path, lastModified: lastModified))
                fieldSlots.append(column.slot)
            }
        }
        self.idSlot = idSlot
        self.soupSlot = soupSlot
        columns = byStoredId.flatMap { $0 }
        var starts = [0]
        for list in byStoredId { starts.append(starts[starts.count - 1] + list.count) }
        self.starts = starts
        self.paths = paths
        self.fieldSlots = fieldSlots
        if soupSlot != nil {
            let byId = Dictionary(table.entity.properties.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            soup = (byId, EmbeddedNesting(table.entity), try store.relationColumns(of: table.entity, fields: nil, in: transaction))
        } else {
            soup = nil
        }
    }

    /// Fills the table's slots from a record.
    func fill(_ row: SQLSlots, id: Id, record: UnsafeRawBufferPointer, transaction: Transaction) throws {
        if let idSlot { row[idSlot] = Self.id(id) }
        for slot in fieldSlots { row[slot] = .null }
        let fields = RecordFields(bytes: record, layout: binding, id: id)
        if !fieldSlots.isEmpty {
            var walk = try fields.walk()
            let last = starts.count - 1
            while let (storedId, field) = try walk.next() {
                let index = Int(storedId)
                guard index < last else { continue }
                var at = starts[index]
                let end = starts[index &+ 1]
                while at < end {
                    let column = columns[at]
                    row[column.slot] = try value(field, column, id: id)
                    at &+= 1
                }
            }
        }
        if let soupSlot, let soup {
            // The whole object: every field checked as its column would be.
            try fields.validate()
            try fields.forEach { storedId, field in
                guard let property = soup.byId[storedId] else { return }
                if let problem = FieldPayload.problem(field) ?? Self.stringArrayProblem(field) {
                    throw CofferError.damagedRecord(entity: table.entity.name, id: id, reason: "property \(property.name) holds \(problem)")
                }
                if property.type == .string, field.kind == .bytes, Self.text(field.payload) == nil {
                    throw CofferError.damagedRecord(entity: table.entity.name, id: id, reason: "property \(property.name) holds bytes that are not UTF-8")
                }
            }
            row[soupSlot] = .text(try Store.jsonObject(id: id, record: record, entity: table.entity, byId: soup.byId, nesting: soup.nesting,
                                                       fields: nil, relations: soup.relations, in: transaction))
        }
    }

    /// Sets the table's slots to NULL: the row a left join adds when nothing matches.
    func fillNull(_ row: SQLSlots) {
        for column in table.columns { row[column.slot] = .null }
    }

    static func id(_ id: Id) -> SQLValue {
        id <= UInt64(Int64.max) ? .integer(Int64(id)) : .unsigned(id)
    }

    private func damage(_ id: Id, _ column: FieldColumn, _ field: RecordFields.Field) -> CofferError {
        let property = binding.schema.properties[column.position]
        return CofferError.damagedRecord(entity: table.entity.name, id: id,
                                         reason: "property \(property.name) holds a \(field.kind) value, which a \(property.swiftType) cannot hold")
    }

    /// The name of the property a column reads, for error messages.
    private func name(_ column: FieldColumn) -> String { binding.schema.properties[column.position].name }

    private func value(_ field: RecordFields.Field, _ column: FieldColumn, id: Id) throws -> SQLValue {
        let type = column.type
        guard FieldOperand.fits(field.kind, type) || (type.isDocument && field.kind == .document) else {
            throw damage(id, column, field)
        }
        if column.lastModified {
            guard let seconds = FieldValue.double(field.kind, field.payload) else { throw damage(id, column, field) }
            let milliseconds = ((seconds + Self.referenceDateOffset) * 1000).rounded()
            return milliseconds.isFinite && abs(milliseconds) < 9.2e18 ? .integer(Int64(milliseconds)) : .real(milliseconds)
        }
        if column.path >= 0 {
            switch DocumentCodec.find(paths[column.path], in: field.payload) {
            case .value(let node): return Self.value(node)
            case .missing: return .null
            case .damaged:
                throw CofferError.damagedRecord(entity: table.entity.name, id: id, reason: "the document in property \(name(column)) is damaged")
            }
        }
        let payload = field.payload
        switch type {
        case .bool:
            return .integer(field.kind == .boolTrue ? 1 : 0)
        case .int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32:
            guard let value = FieldValue.signed(field.kind, payload) else { throw damage(id, column, field) }
            return .integer(value)
        case .uint64, .uint:
            // A negative value in an unsigned property is damage, as queries read it.
            guard let value = FieldValue.unsigned(field.kind, payload) else { throw damage(id, column, field) }
            return Self.id(value)
        case .float, .double:
            guard let value = FieldValue.double(field.kind, payload) else { throw damage(id, column, field) }
            return .real(value)
        case .date:
            guard let value = FieldValue.double(field.kind, payload) else { throw damage(id, column, field) }
            return .real(value + Self.referenceDateOffset)
        case .string:
            guard let text = Self.text(payload) else {
                throw CofferError.damagedRecord(entity: table.entity.name, id: id, reason: "property \(name(column)) holds bytes that are not UTF-8")
            }
            return .text(text)
        case .data:
            return .blob(Data(payload))
        case .uuid:
            guard payload.count == 16 else { throw damage(id, column, field) }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: payload) }
            return .text(UUID(uuid: uuid).uuidString)
        default:
            if field.kind == .document {
                guard let json = DocumentCodec.json(payload, tagged: FieldDescription.isTagged(type)) else {
                    throw CofferError.damagedRecord(entity: table.entity.name, id: id, reason: "the document in property \(name(column)) is damaged")
                }
                return .text(json)
            }
            // Arrays: checked whole (no element cut off or read as null), then as JSON.
            if let problem = FieldPayload.problem(field) ?? Self.stringArrayProblem(field) {
                throw CofferError.damagedRecord(entity: table.entity.name, id: id, reason: "property \(name(column)) holds \(problem)")
            }
            return .text(FieldDescription.json(field, type: type))
        }
    }

    // MARK: - Columns one at a time (SQLAggregateKernel)

    /// The index of the column that reads a property's own value (not a path inside a
    /// document, not a modification time) into `slot`, or nil.
    func plainColumn(slot: Int) -> Int? {
        columns.firstIndex { $0.slot == slot && $0.path < 0 && !$0.lastModified }
    }

    /// The stored field id the column at `index` reads.
    func storedId(ofColumn index: Int) -> UInt16 {
        // `columns[starts[k]..<starts[k + 1]]` read stored id k.
        var storedId = 0
        while starts[storedId &+ 1] <= index { storedId &+= 1 }
        return UInt16(truncatingIfNeeded: storedId)
    }

    /// Whether the column at `index` reads a text property.
    func isText(column index: Int) -> Bool { columns[index].type == .string }

    /// The value of `field` as the column at `index` reads it (the checks and the damage of
    /// `fill`).
    @inline(__always)
    func value(_ field: RecordFields.Field, column index: Int, id: Id) throws -> SQLValue {
        try value(field, columns[index], id: id)
    }

    /// The payload of a text field when it is ASCII, else nil (the column's value is then
    /// read by `value(_:column:id:)`, which also reports damage). ASCII is valid UTF-8.
    @inline(__always)
    static func asciiText(_ field: RecordFields.Field) -> UnsafeRawBufferPointer? {
        guard FieldOperand.fits(field.kind, .string) else { return nil }
        let payload = field.payload
        for byte in payload where byte & 0x80 != 0 { return nil }
        return payload
    }

    /// The text a `.bytes` payload holds, or nil when it is not UTF-8. Not
    /// `String(validating:as:)`: it is generic in the standard library and looked up type
    /// metadata on every call (a fifth of a GROUP BY on a text column). ASCII, the usual
    /// text, is checked inline; other bytes are valid exactly when decoding them repaired
    /// nothing.
    static func text(_ payload: UnsafeRawBufferPointer) -> String? {
        var isASCII = true
        for byte in payload where byte & 0x80 != 0 {
            isASCII = false
            break
        }
        let text = String(recordBytes: payload)
        if isASCII { return text }
        return text.utf8.elementsEqual(payload) ? text : nil
    }

    /// A string array whose strings are not all UTF-8, or nil (its layout is checked by
    /// `FieldPayload.problem` first).
    static func stringArrayProblem(_ field: RecordFields.Field) -> String? {
        guard field.kind == .stringArray, field.payload.count >= 4 else { return nil }
        let payload = field.payload
        let count = Int(UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self)))
        var offset = 4
        for index in 0..<count {
            guard payload.count - offset >= 4 else { return nil }
            let length = Int(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard payload.count - offset >= length else { return nil }
            if text(UnsafeRawBufferPointer(rebasing: payload[offset..<offset + length])) == nil {
                return "a string array whose string \(index) is not UTF-8"
            }
            offset += length
        }
        return nil
    }

    /// A value inside a document: scalars as themselves (a Bool as 1 or 0), arrays and
    /// objects as their JSON text.
    static func value(_ node: DocumentCodec.Node) -> SQLValue {
        switch node {
        case .null: return .null
        case .scalar(.bool(let value)): return .integer(value ? 1 : 0)
        case .scalar(.integer(let value)): return .integer(value)
        case .scalar(.unsigned(let value)): return id(value)
        case .scalar(.double(let value)): return .real(value)
        case .scalar(.string(let value)): return .text(value)
        case .array, .object: return .text(DocumentCodec.json(node, tagged: true))
        }
    }
}
