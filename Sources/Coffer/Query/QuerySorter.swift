/// Sorts matches by the query's orderings. Sort keys are read from each record once.
struct QuerySorter {
    let orders: [QueryOrder]
    let binding: EntityBinding

    enum Key {
        case none
        case number(Number)
        case bytes([UInt8])
        case bool(Bool)
        /// An array property's elements, compared as CouchDB collates arrays: element by
        /// element, a shorter array before every longer one it is a prefix of.
        case array([Key])
    }

    func sort<M>(_ matches: [M]) throws -> [M] where M: QueryMatch {
        let keyed = try matches.map { match -> (M, [Key]) in
            (match, try keys(id: match.id, fields: RecordFields(bytes: match.record, entity: binding.schema.name, id: match.id)))
        }
        return keyed.sorted { a, b in precedes(a.0.id, a.1, b.0.id, b.1) }.map(\.0)
    }

    /// The sort keys of one record, one per ordering.
    func keys(id: Id, fields: RecordFields) throws -> [Key] {
        try orders.map { try key(for: $0, id: id, fields: fields) }
    }

    /// Whether the object with `aId` and keys `a` comes before the one with `bId` and `b`:
    /// the orderings in turn, then ids ascending (so the order is total).
    func precedes(_ aId: Id, _ a: [Key], _ bId: Id, _ b: [Key]) -> Bool {
        for (position, order) in orders.enumerated() {
            let result = compare(a[position], b[position], flags: order.flags)
            if result != 0 { return result < 0 }
        }
        return aId < bId
    }

    private func key(for order: QueryOrder, id: Id, fields: RecordFields) throws -> Key {
        let property = binding.schema.properties[order.position]
        if property.flags.contains(.id) { return .number(.unsigned(id)) }
        guard let field = try fields.field(binding.storedIds[order.position]) else {
            guard order.flags.contains(.nullsZero) else { return .none }
            switch property.type {
            case .string, .data, .uuid: return .bytes([])
            case .bool: return .bool(false)
            default: return property.type.elementType == nil ? .number(.signed(0)) : .array([])
            }
        }
        guard let operand = FieldOperand(field, type: property.type) else {
            throw fields.damage("property \(property.name) holds a \(field.kind) value, which a \(property.swiftType) cannot hold")
        }
        if operand.isArray { return .array(operand.elements.map { key(of: $0, flags: order.flags) }) }
        return key(of: operand, flags: order.flags)
    }

    /// The sort key of one value (a property's, or an array's element).
    private func key(of operand: FieldOperand, flags: OrderFlags) -> Key {
        switch operand {
        case .number(let number):
            if flags.contains(.unsigned), case .signed(let value) = number {
                return .number(.unsigned(UInt64(bitPattern: value)))
            }
            return .number(number)
        case .bool(let value):
            return .bool(value)
        case .string(let bytes):
            if flags.contains(.caseSensitive) { return .bytes(CanonicalString.withCanonicalUTF8(bytes) { Array($0) }) }
            return .bytes(Array(CaseFolding.fold(String(decoding: bytes, as: UTF8.self)).utf8))
        case .uuid(let bytes):
            return .bytes(bytes)
        default:
            return .none
        }
    }

    /// nil placement does not follow `.descending`; values do.
    private func compare(_ a: Key, _ b: Key, flags: OrderFlags) -> Int {
        let nilFirst = flags.contains(.nullsLast) ? 1 : -1
        switch (a, b) {
        case (.none, .none): return 0
        case (.none, _): return nilFirst
        case (_, .none): return -nilFirst
        default: break
        }
        let result = ascending(a, b)
        return flags.contains(.descending) ? -result : result
    }

    /// The ascending order of two values.
    private func ascending(_ a: Key, _ b: Key) -> Int {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            // NaN after every number, like the index.
            return Number.order(x, y) ?? (x.doubleValue.isNaN ? (y.doubleValue.isNaN ? 0 : 1) : -1)
        case (.bytes(let x), .bytes(let y)): return ByteSearch.order(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.array(let x), .array(let y)):
            for (first, second) in zip(x, y) {
                let result = ascending(first, second)
                if result != 0 { return result }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default: return 0
        }
    }
}

/// What the sorter needs of a match.
protocol QueryMatch {
    var id: Id { get }
    var record: UnsafeRawBufferPointer { get }
}

