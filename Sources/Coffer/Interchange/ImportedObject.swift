import Foundation

/// One line of an import: a JSON object checked against an entity's catalog schema and
/// converted to stored values, before anything is written.
///
/// The format is what `Store.query(entity:...)`, `dump` and `coffer export` write:
/// - `"id"` (or `"_id"`): the object's id, an integer from 1; left out or `null` for a new
///   object.
/// - A property by its stored name. Integers must be integral and within the stored type's
///   range; `Float`/`Double` take numbers and the strings `"nan"`, `"inf"`, `"-inf"`; a
///   `Date` takes ISO 8601 text or a number of seconds since 2001-01-01; `Data` takes
///   base64; a `UUID` its string form; arrays take arrays of their element type; a `ToOne`
///   takes the target's id; a to-many relation an array of target ids.
/// - `null` or leaving a property out stores no value. That is allowed for optionals,
///   links, relations, `@CreatedAt`/`@UpdatedAt` (stamped as a put stamps them) and
///   properties declared with a default value; any other property must be present.
/// - A key the entity does not have, a key given twice, or `"$corrupt"` (an export of a
///   damaged record) refuses the line.
struct ImportedObject {
    /// A stored value of one property.
    enum Value {
        case bool(Bool)
        case signed(Int64)
        case unsigned(UInt64)
        case float(Float)
        case double(Double)
        case text(String)
        case data(Data)
        case uuid(UUID)
        case strings([String])
        case integers([Int])
        case doubles([Double])
        case unsignedIntegers([UInt64])
        case uuids([UUID])
        case bools([Bool])
        case node(DocumentCodec.Node)
        case document([(String, DocumentCodec.Scalar)])
    }

    /// The id the line names, or nil for a new object.
    var id: Id?
    /// Values by schema position, in schema order.
    var fields: [(position: Int, value: Value)] = []
    /// Target ids of each to-many relation, by schema position (every relation of the
    /// entity: an absent one is empty).
    var relations: [(position: Int, targets: [Id])] = []
    /// Schema positions of the timestamps the line sets itself.
    var stampedByLine: Set<Int> = []

    /// Checks `node` against `schema` (a catalog schema including retired properties).
    /// Errors are messages for ``CofferError/invalidImport(entity:line:reason:)``.
    init(_ node: JSONNode, schema: EntitySchema) throws(ImportProblem) {
        guard case .object(let nested) = node else {
            throw ImportProblem("a line must hold one JSON object, not \(node.kind)")
        }
        let members = EmbeddedNesting.flattened(nested, schema: schema)
        var seen = Set<String>()
        var valuesByPosition: [Int: JSONNode] = [:]
        for member in members {
            guard seen.insert(member.key).inserted else { throw ImportProblem("\(member.key) is given twice") }
            if member.key == "id" || member.key == "_id" {
                guard !seen.contains(member.key == "id" ? "_id" : "id") else { throw ImportProblem("give either id or _id, not both") }
                if case .null = member.value { continue }
                guard case .number(let number) = member.value, let id = number.uint64, id >= 1 else {
                    throw ImportProblem("\(member.key) must be an integer from 1, not \(member.value.text)")
                }
                self.id = id
                continue
            }
            if member.key == "$corrupt" {
                throw ImportProblem("the object was exported from a damaged record (\(member.value.text)); repair or remove the line")
            }
            guard let position = schema.properties.firstIndex(where: { $0.storedName == member.key && $0.flags.isDisjoint(with: [.id, .backlink]) }) else {
                let known = schema.properties.filter { $0.flags.isDisjoint(with: [.id, .backlink]) }.map(\.storedName).joined(separator: ", ")
                throw ImportProblem("\(schema.name) has no property \(member.key) (its properties: \(known))")
            }
            valuesByPosition[position] = member.value
        }
        for (position, property) in schema.properties.enumerated() where property.flags.isDisjoint(with: [.id, .backlink]) {
            let value = valuesByPosition[position] ?? .null
            if property.flags.contains(.toMany) {
                relations.append((position, try Self.ids(value, property: property, schema: schema)))
                continue
            }
            if case .null = value, property.type == .json, Self.isJSONValue(property), valuesByPosition[position] != nil {
                // A JSON null given for a JSONValue is its `.null` (an export writes one for
                // it); left out, the property has no value.
                fields.append((position, .node(.null)))
                continue
            }
            if case .null = value {
                let mayBeAbsent = property.isOptional || property.hasDefault || property.flags.contains(.relation)
                    || !property.flags.isDisjoint(with: [.createdAt, .updatedAt])
                guard mayBeAbsent else {
                    throw ImportProblem("\(schema.name).\(property.storedName) is \(property.swiftType), which is neither optional nor defaulted, so it needs a value")
                }
                continue
            }
            if !property.flags.isDisjoint(with: [.createdAt, .updatedAt]) { stampedByLine.insert(position) }
            fields.append((position, try Self.value(value, of: property, schema: schema)))
        }
    }

    /// Writes the record's fields; timestamps the line leaves out come from `stamps`.
    func encode(to writer: inout RecordWriter, stamps: PutStamps?, schema: EntitySchema) {
        var next = fields.startIndex
        for (position, property) in schema.properties.enumerated() {
            if next < fields.endIndex, fields[next].position == position {
                Self.write(fields[next].value, position, to: &writer)
                next += 1
            } else if let stamps, !stampedByLine.contains(position) {
                if property.flags.contains(.createdAt) {
                    writer.write(position, stamps.createdAt)
                } else if property.flags.contains(.updatedAt) {
                    writer.write(position, stamps.updatedAt)
                }
            }
        }
    }

    static func write(_ value: Value, _ position: Int, to writer: inout RecordWriter) {
        switch value {
        case .bool(let flag): writer.write(position, flag)
        case .signed(let integer): writer.writeSigned(position, integer)
        case .unsigned(let integer): writer.writeUnsigned(position, integer)
        case .float(let number): writer.write(position, number)
        case .double(let number): writer.write(position, number)
        case .text(let text): writer.write(position, text)
        case .data(let data): writer.write(position, data)
        case .uuid(let uuid): writer.write(position, uuid)
        case .strings(let strings): writer.write(position, strings)
        case .integers(let integers): writer.write(position, integers)
        case .doubles(let doubles): writer.write(position, doubles)
        case .unsignedIntegers(let integers): writer.write(position, integers)
        case .uuids(let uuids): writer.write(position, uuids)
        case .bools(let bools): writer.write(position, bools)
        case .node(let node): DocumentCodec.writeField(position, to: &writer) { DocumentCodec.write(node, to: &$0) }
        case .document(let members):
            DocumentCodec.writeField(position, to: &writer) { DocumentCodec.writeObject(members, to: &$0) }
        }
    }

    /// Whether a `.json` property holds a `JSONValue` (any JSON), not an array of embedded
    /// values (stored as a document of the same type).
    static func isJSONValue(_ property: PropertySchema) -> Bool {
        var type = Substring(property.swiftType)
        if type.hasSuffix("?") { type = type.dropLast() }
        if type.hasPrefix("Coffer.") { type = type.dropFirst("Coffer.".count) }
        return type == "JSONValue"
    }

    /// The first key an object inside `node` (at any depth) gives twice.
    private static func repeatedKey(in node: JSONNode) -> String? {
        switch node {
        case .array(let elements):
            return elements.lazy.compactMap(repeatedKey).first
        case .object(let members):
            var seen = Set<String>()
            for member in members where !seen.insert(member.key).inserted { return member.key }
            return members.lazy.compactMap { repeatedKey(in: $0.value) }.first
        default:
            return nil
        }
    }

    private static func ids(_ node: JSONNode, property: PropertySchema, schema: EntitySchema) throws(ImportProblem) -> [Id] {
        if case .null = node { return [] }
        guard case .array(let elements) = node else {
            throw ImportProblem("\(schema.name).\(property.storedName) is a to-many relation, so it needs an array of ids, not \(node.text)")
        }
        return try elements.map { element throws(ImportProblem) -> Id in
            guard case .number(let number) = element, let id = number.uint64, id >= 1 else {
                throw ImportProblem("\(schema.name).\(property.storedName) needs ids (integers from 1), not \(element.text)")
            }
            return id
        }
    }

    static func value(_ node: JSONNode, of property: PropertySchema, schema: EntitySchema) throws(ImportProblem) -> Value {
        try ValueReader(node: node, property: property, schema: schema).read()
    }
}

extension ImportedObject {
    /// Converts one JSON value to the stored value of one property, with the checks the
    /// property's type needs. Every refusal names the property, its type and the value given
    /// (the whole value, also when one element of it is wrong).
    private struct ValueReader {
        let node: JSONNode
        let property: PropertySchema
        let schema: EntitySchema

        func read() throws(ImportProblem) -> Value {
            if property.flags.contains(.relation) { return try relationTarget() }
            switch property.type {
            case .bool: return try bool()
            case .int8: return .signed(try signed(node, in: Int64(Int8.min)...Int64(Int8.max)))
            case .int16: return .signed(try signed(node, in: Int64(Int16.min)...Int64(Int16.max)))
            case .int32: return .signed(try signed(node, in: Int64(Int32.min)...Int64(Int32.max)))
            case .int64, .int: return .signed(try signed(node, in: Int64.min...Int64.max))
            case .uint8, .uint16, .uint32, .uint64, .uint: return try unsigned()
            case .float:
                // A Float stored from a wider number keeps the nearest Float (as assigning in Swift does).
                return .float(Float(try double(node)))
            case .double: return .double(try double(node))
            case .string: return try text()
            case .date: return try date()
            case .data: return try data()
            case .uuid: return try uuid()
            case .stringArray: return try strings()
            case .intArray: return try integers()
            case .doubleArray: return try doubles()
            case .json: return try document()
            case .stringDictionary, .intDictionary, .doubleDictionary, .boolDictionary: return try dictionary()
            case .boolArray, .int8Array, .int16Array, .int32Array, .int64Array, .uintArray, .uint8Array, .uint16Array,
                 .uint32Array, .uint64Array, .floatArray, .dateArray, .uuidArray:
                return try typedArray()
            }
        }

        private func mismatch(_ wanted: String) -> ImportProblem {
            ImportProblem("\(schema.name).\(property.storedName) is \(property.swiftType), so it needs \(wanted), not \(node.text)")
        }

        /// A `ToOne`: the target's id.
        private func relationTarget() throws(ImportProblem) -> Value {
            guard case .number(let number) = node, let id = number.uint64, id >= 1 else { throw mismatch("the target's id (an integer from 1) or null") }
            return .unsigned(id)
        }

        private func bool() throws(ImportProblem) -> Value {
            guard case .bool(let flag) = node else { throw mismatch("true or false") }
            return .bool(flag)
        }

        private func signed(_ node: JSONNode, in bounds: ClosedRange<Int64>) throws(ImportProblem) -> Int64 {
            guard case .number(let number) = node, let integer = number.int64, bounds.contains(integer) else {
                throw mismatch("an integer within \(bounds.lowerBound)...\(bounds.upperBound)")
            }
            return integer
        }

        private func unsigned() throws(ImportProblem) -> Value {
            let maximum: UInt64 = switch property.type {
            case .uint8: UInt64(UInt8.max)
            case .uint16: UInt64(UInt16.max)
            case .uint32: UInt64(UInt32.max)
            default: UInt64.max
            }
            guard case .number(let number) = node, let integer = number.uint64, integer <= maximum else {
                throw mismatch("an integer within 0...\(maximum)")
            }
            return .unsigned(integer)
        }

        /// A number, or the string of a non-finite one.
        private func double(_ node: JSONNode) throws(ImportProblem) -> Double {
            switch node {
            case .number(let number): return number.double
            case .string(let text):
                guard let number = DocumentCodec.nonFinite(text) else { throw mismatch("a number (or \"nan\", \"inf\", \"-inf\")") }
                return number
            default: throw mismatch("a number (or \"nan\", \"inf\", \"-inf\")")
            }
        }

        private func text() throws(ImportProblem) -> Value {
            guard case .string(let text) = node else { throw mismatch("a string") }
            return .text(text)
        }

        /// ISO 8601 text or seconds since 2001-01-01.
        private func date() throws(ImportProblem) -> Value {
            switch node {
            case .string(let text):
                // A date of non-finite seconds is exported as its number's string ("nan").
                guard let seconds = ISODate.seconds(from: text) ?? DocumentCodec.nonFinite(text) else { throw mismatch("an ISO 8601 date") }
                return .double(seconds)
            case .number(let number):
                return .double(number.double)
            default:
                throw mismatch("an ISO 8601 date or seconds since 2001-01-01")
            }
        }

        private func data() throws(ImportProblem) -> Value {
            guard case .string(let text) = node, let data = Data(base64Encoded: text) else { throw mismatch("base64 text") }
            return .data(data)
        }

        private func uuid() throws(ImportProblem) -> Value {
            guard case .string(let text) = node, let uuid = UUID(canonicalText: text) else { throw mismatch("a UUID string") }
            return .uuid(uuid)
        }

        private func strings() throws(ImportProblem) -> Value {
            guard case .array(let elements) = node else { throw mismatch("an array of strings") }
            return .strings(try elements.map { element throws(ImportProblem) -> String in
                guard case .string(let text) = element else { throw mismatch("an array of strings") }
                return text
            })
        }

        private func integers() throws(ImportProblem) -> Value {
            guard case .array(let elements) = node else { throw mismatch("an array of integers") }
            return .integers(try elements.map { element throws(ImportProblem) -> Int in
                guard case .number(let number) = element, let integer = number.int64, let exact = Int(exactly: integer) else {
                    throw mismatch("an array of integers")
                }
                return exact
            })
        }

        private func doubles() throws(ImportProblem) -> Value {
            guard case .array(let elements) = node else { throw mismatch("an array of numbers") }
            return .doubles(try elements.map { element throws(ImportProblem) -> Double in try double(element) })
        }

        /// A `JSONValue`, or an array of embedded values (stored as a document too).
        private func document() throws(ImportProblem) -> Value {
            // A key given twice would silently lose a value: refused, as at the top level.
            if let key = ImportedObject.repeatedKey(in: node) { throw mismatch("a document without repeated keys (\(FieldDescription.quoted(key)) is given twice)") }
            // Only an array of objects can be read back as an array of embedded values (any
            // other shape would store an object no read could decode).
            if !ImportedObject.isJSONValue(property) {
                guard case .array(let elements) = node, elements.allSatisfy({ if case .object = $0 { true } else { false } }) else {
                    throw mismatch("an array of objects")
                }
            }
            do {
                return .node(try DocumentCodec.node(json: node, tagged: true))
            } catch {
                throw ImportProblem("\(schema.name).\(property.storedName): \(error.message)")
            }
        }

        /// A dictionary of strings, integers, numbers or flags: an object of such values.
        private func dictionary() throws(ImportProblem) -> Value {
            guard case .object(let members) = node else { throw mismatch("an object") }
            var seen = Set<String>()
            return .document(try members.map { member throws(ImportProblem) -> (String, DocumentCodec.Scalar) in
                guard seen.insert(member.key).inserted else { throw mismatch("an object without repeated keys") }
                switch (property.type, member.value) {
                case (.stringDictionary, .string(let text)): return (member.key, .string(text))
                case (.intDictionary, .number(let number)):
                    guard let integer = number.int64 else { throw mismatch("an object of integers") }
                    return (member.key, .integer(integer))
                case (.doubleDictionary, .number(let number)): return (member.key, .double(number.double))
                case (.doubleDictionary, .string(let text)):
                    // As a Double property's: the declared type makes the string a number.
                    guard let number = DocumentCodec.nonFinite(text) else { throw mismatch("an object of numbers (or \"nan\", \"inf\", \"-inf\")") }
                    return (member.key, .double(number))
                case (.boolDictionary, .bool(let flag)): return (member.key, .bool(flag))
                default: throw mismatch("an object of \(property.swiftType.dropFirst(9).dropLast()) values")
                }
            })
        }

        /// An array of another element type: each element read as the single value of the
        /// element type would be, with the same checks.
        private func typedArray() throws(ImportProblem) -> Value {
            guard case .array(let elements) = node, let elementType = property.type.elementType else { throw mismatch("an array") }
            let element = PropertySchema(name: property.name, storedName: property.storedName, type: elementType,
                                         swiftType: "an element of \(property.swiftType)")
            let values = try elements.map { node throws(ImportProblem) -> Value in
                try ValueReader(node: node, property: element, schema: schema).read()
            }
            switch property.type {
            case .boolArray:
                return .bools(values.map { if case .bool(let flag) = $0 { return flag } else { return false } })
            case .uintArray, .uint8Array, .uint16Array, .uint32Array, .uint64Array:
                return .unsignedIntegers(values.map { if case .unsigned(let integer) = $0 { return integer } else { return 0 } })
            case .floatArray:
                return .doubles(values.map { if case .float(let number) = $0 { return Double(number) } else { return 0 } })
            case .dateArray:
                return .doubles(values.map { if case .double(let seconds) = $0 { return seconds } else { return 0 } })
            case .uuidArray:
                return .uuids(values.map { if case .uuid(let uuid) = $0 { return uuid } else { return UUID() } })
            default:
                return .integers(values.map { if case .signed(let integer) = $0 { return Int(integer) } else { return 0 } })
            }
        }
    }
}

/// Why one import line was refused (becomes ``CofferError/invalidImport(entity:line:reason:)``).
struct ImportProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
