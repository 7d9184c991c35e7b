import Foundation

/// A condition tree compiled against one entity binding: every leaf becomes a closure over
/// raw record fields, so a scan evaluates conditions without decoding objects.
struct ConditionEvaluator {
    indirect enum Node {
        case always
        case leaf(storedId: UInt16?, test: (Id, RecordFields.Field?) throws -> Bool)
        /// A comparison of a numeric property with a number: evaluated inline, without a
        /// closure or an operand value (the shape of most scan conditions).
        case number(storedId: UInt16, NumberTest)
        case and([Node])
        case or([Node])
        case not(Node)
    }

    let root: Node

    init(_ node: ConditionNode?, binding: EntityBinding) throws {
        root = try node.map { try Self.compile($0, binding: binding) } ?? .always
    }

    /// Whether the record matches. Every field a condition reads is found by a walk over the
    /// whole record (`RecordFields.field`), which throws at any damage: a damaged record is
    /// never taken for a record whose property is nil.
    func matches(id: Id, record: RecordFields) throws -> Bool {
        try Self.evaluate(root, id: id, fields: record)
    }

    private static func evaluate(_ node: Node, id: Id, fields: RecordFields) throws -> Bool {
        switch node {
        case .always: return true
        case .leaf(let storedId, let test): return try test(id, try storedId.flatMap { try fields.field($0) })
        case .number(let storedId, let test): return try test.holds(for: fields.inlinedField(storedId), id: id)
        case .and(let nodes): return try nodes.allSatisfy { try evaluate($0, id: id, fields: fields) }
        case .or(let nodes): return try nodes.contains { try evaluate($0, id: id, fields: fields) }
        case .not(let inner): return try !evaluate(inner, id: id, fields: fields)
        }
    }

    private static func compile(_ node: ConditionNode, binding: EntityBinding) throws -> Node {
        switch node {
        case .leaf(let leaf): return try compile(leaf, binding: binding)
        case .and(let nodes): return .and(try nodes.map { try compile($0, binding: binding) })
        case .or(let nodes): return .or(try nodes.map { try compile($0, binding: binding) })
        case .not(let inner): return .not(try compile(inner, binding: binding))
        case .invalid(let message): throw CofferError.invalidQuery(entity: binding.schema.name, property: nil, reason: message)
        case .link(let step):
            // Runs resolve link steps first (`Query.effectiveCondition`); one left here is a
            // condition built outside a query.
            throw CofferError.invalidQuery(entity: binding.schema.name, property: nil, reason: "the link step \(step.link.summary) was not resolved")
        }
    }

    /// A leaf: a numeric comparison takes the inline path; every other operator becomes a
    /// test (``OperandTest``) on the operand the field holds, read as the property's type.
    private static func compile(_ leaf: ConditionLeaf, binding: EntityBinding) throws -> Node {
        let property = binding.schema.properties[leaf.position]
        let isId = property.flags.contains(.id)
        // A property the stored catalog does not know has no values yet: every record is nil.
        let storedId: UInt16? = isId ? nil : binding.storedIds[leaf.position]
        let entity = binding.schema.name
        let values = leaf.values.map { Self.prepare($0, caseSensitive: leaf.caseSensitive) }
        if let storedId, !property.type.isDocument,
           let test = NumberTest(leaf.op, values, type: property.type, property: property, entity: entity) {
            return .number(storedId: storedId, test)
        }
        let read = operandReader(property: property, isId: isId, path: leaf.path, entity: entity)
        let body = try OperandTest.make(leaf, values: values, entity: entity, property: property)
        return .leaf(storedId: storedId, test: { id, field in body(try read(id, field)) })
    }

    /// Reads the operand a leaf tests from a record's field: the id itself for the id
    /// property, the value at the leaf's path for a document, the field's value otherwise
    /// (nil when the record has no value). A value the property's type cannot hold is damage.
    private static func operandReader(property: PropertySchema, isId: Bool, path: [String],
                                      entity: String) -> (Id, RecordFields.Field?) throws -> FieldOperand? {
        let type = property.type
        let isDocument = type.isDocument
        return { id, field in
            if isId { return .number(.unsigned(id)) }
            guard let field else { return nil }
            if isDocument, field.kind == .document {
                // A document is read whole: the path's value, nil when it names nothing.
                switch DocumentCodec.find(path, in: field.payload) {
                case .value(let node): return FieldOperand(document: node)
                case .missing: return nil
                case .damaged:
                    throw CofferError.damagedRecord(entity: entity, id: id, reason: "the document in property \(property.name) is damaged")
                }
            }
            guard let operand = FieldOperand(field, type: type) else {
                throw CofferError.damagedRecord(entity: entity, id: id,
                                                reason: "property \(property.name) holds a \(field.kind) value, which a \(property.swiftType) cannot hold")
            }
            return operand
        }
    }

    static func prepare(_ value: QueryValue, caseSensitive: Bool) -> PreparedValue {
        switch value {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .signed(let value): return .number(.signed(value))
        case .unsigned(let value): return .number(.unsigned(value))
        case .double(let value): return .number(.double(value))
        case .string(let value): return .string(PreparedString(value, caseSensitive: caseSensitive))
        case .uuid(let value): return .uuid(withUnsafeBytes(of: value.uuid) { Array($0) })
        }
    }
}

/// A numeric comparison compiled for the inline path of ``ConditionEvaluator``: the same
/// answers as the general leaf (`compare`, `between`), including for damage and NaN.
/// A class, so that reaching it from the condition tree costs one reference, not a copy of
/// the property's schema, on every record.
final class NumberTest {
    enum Bounds {
        case compare(Comparison, Number)
        case between(Number, Number, lowerInclusive: Bool, upperInclusive: Bool)
    }

    let bounds: Bounds
    let type: PropertyType
    let property: PropertySchema
    let entity: String
    /// For a signed integer property compared with integers (not `!=`): the matching values
    /// as one closed range (empty when `lowest > highest`), tested on the stored integer
    /// without building a `Number`. A record without the value never matches these.
    let lowest: Int64
    let highest: Int64
    let hasIntegerRange: Bool

    /// Nil unless `op` compares a numeric property with numbers.
    init?(_ op: ConditionOp, _ values: [PreparedValue], type: PropertyType, property: PropertySchema, entity: String) {
        switch type {
        case .int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32, .uint64, .uint, .float, .double, .date: break
        default: return nil
        }
        switch (op, values.first, values.dropFirst().first) {
        case (.compare(let comparison), .number(let value)?, nil):
            bounds = .compare(comparison, value)
        case (.between(let lowerInclusive, let upperInclusive), .number(var low)?, .number(var high)?):
            // Bounds in any order, as the general leaf takes them.
            if let order = Number.order(low, high), order > 0 { swap(&low, &high) }
            bounds = .between(low, high, lowerInclusive: lowerInclusive, upperInclusive: upperInclusive)
        default:
            return nil
        }
        self.type = type
        self.property = property
        self.entity = entity
        let range = NumberTest.integerRange(bounds, type: type)
        (lowest, highest, hasIntegerRange) = range.map { ($0.lowest, $0.highest, true) } ?? (0, 0, false)
    }

    /// The closed range of signed integers `bounds` accepts, or nil when it is not one range
    /// of integers (`!=`, floating-point or out-of-range values, other property types).
    static func integerRange(_ bounds: Bounds, type: PropertyType) -> (lowest: Int64, highest: Int64)? {
        switch type {
        case .int8, .int16, .int32, .int64, .int: break
        default: return nil
        }
        func integer(_ number: Number) -> Int64? {
            switch number {
            case .signed(let value): return value
            case .unsigned(let value): return Int64(exactly: value)
            case .double: return nil
            }
        }
        let empty: (lowest: Int64, highest: Int64) = (1, 0)
        switch bounds {
        case .compare(let comparison, let number):
            guard let value = integer(number) else { return nil }
            switch comparison {
            case .equal: return (value, value)
            case .notEqual: return nil
            case .less: return value == .min ? empty : (.min, value - 1)
            case .lessOrEqual: return (.min, value)
            case .greater: return value == .max ? empty : (value + 1, .max)
            case .greaterOrEqual: return (value, .max)
            }
        case .between(let low, let high, let lowerInclusive, let upperInclusive):
            guard let low = integer(low), let high = integer(high) else { return nil }
            if !lowerInclusive && low == .max || !upperInclusive && high == .min { return empty }
            return (lowerInclusive ? low : low + 1, upperInclusive ? high : high - 1)
        }
    }

    @inline(__always)
    func holds(for field: RecordFields.Field?, id: Id) throws -> Bool {
        if hasIntegerRange {
            guard let field else { return false }
            guard let value = field.signedInteger else { return try holdsInGeneral(for: field, id: id) }
            return lowest <= value && value <= highest
        }
        return try holdsInGeneral(for: field, id: id)
    }

    /// Every other case, through `Number` (exact across integer and floating-point families).
    func holdsInGeneral(for field: RecordFields.Field?, id: Id) throws -> Bool {
        var number: Number?
        if let field {
            guard FieldOperand.fits(field.kind, type), let read = FieldOperand.number(field, type: type) else {
                throw CofferError.damagedRecord(entity: entity, id: id,
                                                reason: "property \(property.name) holds a \(field.kind) value, which a \(property.swiftType) cannot hold")
            }
            number = read
        }
        switch bounds {
        case .compare(let comparison, let value):
            guard let number, let order = Number.order(number, value) else { return comparison == .notEqual }
            return comparison.holds(order)
        case .between(let low, let high, let lowerInclusive, let upperInclusive):
            guard let number, let lower = Number.order(number, low), let upper = Number.order(number, high) else { return false }
            return (lowerInclusive ? lower >= 0 : lower > 0) && (upperInclusive ? upper <= 0 : upper < 0)
        }
    }
}

/// A parameter ready for comparisons.
enum PreparedValue {
    case null
    case bool(Bool)
    case number(Number)
    case string(PreparedString)
    case uuid([UInt8])

    static func order(_ a: PreparedValue, _ b: PreparedValue) -> Int? {
        switch (a, b) {
        case (.number(let x), .number(let y)): return Number.order(x, y)
        case (.string(let x), .string(let y)): return ByteSearch.order(x.bytes, y.bytes)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.uuid(let x), .uuid(let y)): return ByteSearch.order(x, y)
        default: return nil
        }
    }
}

/// A number of any family, compared exactly across families.
enum Number {
    case signed(Int64)
    case unsigned(UInt64)
    case double(Double)

    var doubleValue: Double {
        switch self {
        case .signed(let value): return Double(value)
        case .unsigned(let value): return Double(value)
        case .double(let value): return value
        }
    }

    static func order(_ a: Number, _ b: Number) -> Int? {
        switch (a, b) {
        case (.signed(let x), .signed(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.unsigned(let x), .unsigned(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.signed(let x), .unsigned(let y)): return x < 0 ? -1 : order(.unsigned(UInt64(x)), .unsigned(y))
        case (.unsigned(let x), .signed(let y)): return y < 0 ? 1 : order(.unsigned(x), .unsigned(UInt64(y)))
        default:
            let x = a.doubleValue, y = b.doubleValue
            if x.isNaN || y.isNaN { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }
}

/// A stored field read for comparison.
enum FieldOperand {
    case bool(Bool)
    case number(Number)
    /// Points into the record: valid while the transaction is.
    case string(UnsafeRawBufferPointer)
    case uuid([UInt8])
    case stringArray([UnsafeRawBufferPointer])
    case numberArray([Number])
    case uuidArray([[UInt8]])
    case boolArray([Bool])
    /// Values inside a document (an array at a path): strings are owned, not in the record.
    case text(String)
    case list([FieldOperand])
    case other

    /// The operand for a stored field, or nil when the field's kind cannot hold a value of
    /// the property's type (damage, or a change the catalog would have refused).
    init?(_ field: RecordFields.Field, type: PropertyType) {
        guard FieldOperand.fits(field.kind, type) else { return nil }
        switch field.kind {
        case .boolTrue: self = .bool(true)
        case .boolFalse: self = .bool(false)
        case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64, .float32, .float64:
            self = FieldOperand.number(field, type: type).map { .number($0) } ?? .other
        case .bytes: self = .string(field.payload)
        case .uuid: self = .uuid(Array(field.payload))
        case .stringArray: self = .stringArray(FieldOperand.strings(field.payload))
        case .int64Array:
            self = .numberArray(stride(from: 0, to: field.payload.count - 7, by: 8).map {
                .signed(Int64(littleEndian: field.payload.loadUnaligned(fromByteOffset: $0, as: Int64.self)))
            })
        case .float64Array:
            self = .numberArray(stride(from: 0, to: field.payload.count - 7, by: 8).map {
                .double(Double(bitPattern: UInt64(littleEndian: field.payload.loadUnaligned(fromByteOffset: $0, as: UInt64.self))))
            })
        case .uint64Array:
            self = .numberArray(stride(from: 0, to: field.payload.count - 7, by: 8).map {
                .unsigned(UInt64(littleEndian: field.payload.loadUnaligned(fromByteOffset: $0, as: UInt64.self)))
            })
        case .uuidArray:
            self = .uuidArray(stride(from: 0, to: field.payload.count - 15, by: 16).map { Array(field.payload[$0..<$0 + 16]) })
        case .document:
            // Compared only through a path (see `init(document:)`); the whole value is not a scalar.
            self = .other
        case .boolArray:
            // A byte other than 0 or 1 is damage, as a kind that does not fit.
            guard field.payload.allSatisfy({ $0 <= 1 }) else { return nil }
            self = .boolArray(field.payload.map { $0 == 1 })
        }
    }

    /// The number a numeric field holds, as the property's family reads it (unsigned
    /// properties as unsigned; signed ones as signed, or unsigned above `Int64.max`), or nil
    /// for a field that is not numeric.
    @inline(__always)
    static func number(_ field: RecordFields.Field, type: PropertyType) -> Number? {
        switch field.kind {
        case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64:
            switch type {
            case .uint8, .uint16, .uint32, .uint64, .uint:
                return FieldValue.unsigned(field.kind, field.payload).map { .unsigned($0) }
            default:
                if let value = FieldValue.signed(field.kind, field.payload) { return .signed(value) }
                return FieldValue.unsigned(field.kind, field.payload).map { .unsigned($0) }
            }
        case .float32, .float64:
            return FieldValue.double(field.kind, field.payload).map { .double($0) }
        default:
            return nil
        }
    }

    /// Whether values of `kind` can belong to a property of `type` (widening included).
    static func fits(_ kind: FieldKind, _ type: PropertyType) -> Bool {
        switch kind {
        case .boolFalse, .boolTrue: return type == .bool
        case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64:
            switch type {
            case .int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32, .uint64, .uint: return true
            default: return false
            }
        case .float32, .float64: return type == .float || type == .double || type == .date
        case .bytes: return type == .string || type == .data
        case .uuid: return type == .uuid
        case .stringArray: return type == .stringArray
        case .int64Array:
            switch type {
            case .intArray, .int8Array, .int16Array, .int32Array, .int64Array: return true
            default: return false
            }
        case .float64Array:
            switch type {
            case .doubleArray, .floatArray, .dateArray: return true
            default: return false
            }
        case .uint64Array:
            switch type {
            case .uintArray, .uint8Array, .uint16Array, .uint32Array, .uint64Array: return true
            default: return false
            }
        case .uuidArray: return type == .uuidArray
        case .boolArray: return type == .boolArray
        case .document: return type.isDocument
        }
    }

    static func strings(_ payload: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        guard payload.count >= 4 else { return [] }
        let count = Int(UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self)))
        var result: [UnsafeRawBufferPointer] = []
        var offset = 4
        for _ in 0..<count {
            guard payload.count - offset >= 4 else { break }
            let length = Int(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard payload.count - offset >= length else { break }
            result.append(UnsafeRawBufferPointer(rebasing: payload[offset..<offset + length]))
            offset += length
        }
        return result
    }

    /// Orders this stored value against a parameter, or nil when they cannot be compared.
    func order(_ value: PreparedValue, caseSensitive: Bool) -> Int? {
        switch (self, value) {
        case (.number(let x), .number(let y)): return Number.order(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.string(let bytes), .string(let prepared)):
            if caseSensitive {
                return prepared.bytes.withUnsafeBytes { pattern in
                    CanonicalString.withCanonicalUTF8(bytes) { ByteSearch.order($0, pattern) }
                }
            }
            return ByteSearch.order(Array(CaseFolding.fold(String(decoding: bytes, as: UTF8.self)).utf8), prepared.foldedBytes)
        case (.uuid(let x), .uuid(let y)): return ByteSearch.order(x, y)
        case (.text(let text), .string):
            var text = text
            return text.withUTF8 { FieldOperand.string(UnsafeRawBufferPointer($0)).order(value, caseSensitive: caseSensitive) }
        case (.list(let items), _):
            // A value matches an array when an element does (Cloudant's rule): equal orders 0.
            return items.contains { $0.order(value, caseSensitive: caseSensitive) == 0 } ? 0 : nil
        default: return nil
        }
    }

    /// The operand of a value found inside a document.
    init(document node: DocumentCodec.Node) {
        switch node {
        case .null, .object: self = .other
        case .scalar(.bool(let flag)): self = .bool(flag)
        case .scalar(.integer(let number)): self = .number(.signed(number))
        case .scalar(.unsigned(let number)): self = .number(.unsigned(number))
        case .scalar(.double(let number)): self = .number(.double(number))
        case .scalar(.string(let text)): self = .text(text)
        case .array(let elements): self = .list(elements.map(FieldOperand.init(document:)))
        }
    }

    var elements: [FieldOperand] {
        switch self {
        case .stringArray(let items): return items.map { .string($0) }
        case .numberArray(let items): return items.map { .number($0) }
        case .uuidArray(let items): return items.map { .uuid($0) }
        case .boolArray(let items): return items.map { .bool($0) }
        case .list(let items): return items
        default: return []
        }
    }

    /// Whether the operand is an array (of a property, or inside a document).
    var isArray: Bool {
        switch self {
        case .stringArray, .numberArray, .uuidArray, .boolArray, .list: return true
        default: return false
        }
    }

    var elementCount: Int {
        switch self {
        case .stringArray(let items): return items.count
        case .numberArray(let items): return items.count
        case .uuidArray(let items): return items.count
        case .boolArray(let items): return items.count
        case .list(let items): return items.count
        default: return 0
        }
    }
}

/// Unicode case folding, as case-insensitive conditions and orderings use it; the result is
/// canonical (NFC), so canonically equivalent texts fold alike.
enum CaseFolding {
    static func fold(_ text: String) -> String {
        CanonicalString.string(text.folding(options: [.caseInsensitive], locale: nil))
    }
}

/// A string parameter with the forms comparisons need, computed once per query run. `bytes`
/// is the canonical UTF-8 (see ``CanonicalString``).
struct PreparedString {
    let raw: String
    let bytes: [UInt8]
    let folded: String
    let foldedBytes: [UInt8]

    init(_ value: String, caseSensitive: Bool) {
        raw = CanonicalString.string(value)
        bytes = Array(raw.utf8)
        folded = caseSensitive ? raw : CaseFolding.fold(value)
        foldedBytes = Array(folded.utf8)
    }
}

/// A `like` pattern: `%` matches any run of characters (also none), `_` exactly one.
/// Characters are Unicode scalars.
struct LikePattern {
    let scalars: [Unicode.Scalar]

    init(_ pattern: String) { scalars = Array(pattern.unicodeScalars) }

    /// The literal text before the first wildcard, which an index can seek to.
    var literalPrefix: String {
        var prefix = String.UnicodeScalarView()
        for scalar in scalars {
            if scalar == "%" || scalar == "_" { break }
            prefix.append(scalar)
        }
        return String(prefix)
    }

    func matches(_ text: String) -> Bool {
        let input = Array(text.unicodeScalars)
        // Greedy matching with backtracking to the last `%`: linear for typical patterns.
        var p = 0, t = 0
        var star = -1, mark = 0
        while t < input.count {
            if p < scalars.count && (scalars[p] == "_" || (scalars[p] != "%" && scalars[p] == input[t])) {
                p += 1; t += 1
            } else if p < scalars.count && scalars[p] == "%" {
                star = p; mark = t; p += 1
            } else if star >= 0 {
                p = star + 1; mark += 1; t = mark
            } else {
                return false
            }
        }
        while p < scalars.count && scalars[p] == "%" { p += 1 }
        return p == scalars.count
    }
}
