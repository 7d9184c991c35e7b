import Foundation

/// The binary encoding of documents (`JSONValue` and `[String: X]` properties), the payload
/// of a `document` field:
///
///     value  := tag:u8 body
///     tag 0 null | 1 false | 2 true | 3 Int64 (8 bytes) | 4 Double (8 bytes)
///         | 5 string (u32 length, UTF-8) | 6 array (u32 count, values)
///         | 7 object (u32 count, then u32 key length, key UTF-8, value; keys ascending)
///         | 8 UInt64 above Int64.max (8 bytes; smaller unsigned values are tag 3)
///
/// Invariant: bytes from disk are untrusted. Every read checks lengths and counts against
/// the payload's end and nests at most `maximumDepth` levels; damage is nil (decode) or
/// `.damaged` (find), never a trap and never read as a missing value. Writing accepts
/// exactly what reading does: a put whose document nests deeper is refused
/// (``CofferError/documentTooDeep(entity:property:depth:limit:)``) before anything is stored.
@_spi(CofferGenerated)
public enum DocumentCodec {
    /// A leaf value.
    public enum Scalar: Sendable, Equatable {
        /// ```swift
        /// DocumentCodec.Scalar.bool(true)
        /// ```
        case bool(Bool)
        /// ```swift
        /// DocumentCodec.Scalar.integer(5)
        /// ```
        case integer(Int64)
        /// An unsigned integer above `Int64.max` (a `UInt64` leaf); smaller ones are `integer`.
        /// ```swift
        /// DocumentCodec.Scalar.unsigned(.max)
        /// ```
        case unsigned(UInt64)
        /// ```swift
        /// DocumentCodec.Scalar.double(2.5)
        /// ```
        case double(Double)
        /// ```swift
        /// DocumentCodec.Scalar.string("a")
        /// ```
        case string(String)
    }

    /// A decoded value.
    indirect enum Node: Equatable {
        case null
        case scalar(Scalar)
        case array([Node])
        case object([String: Node])
    }

    /// The levels a document may nest, its root value being level 1 (`[[1]]` has 3): what
    /// the reader accepts and so what a put may store. The one limit for both.
    static let maximumDepth = 64

    // MARK: Writing

    /// Writes field `field` of kind `document` whose payload `body` writes. A document
    /// nested deeper than ``maximumDepth`` is noted in the writer (the first such field),
    /// for the put to refuse before it stores anything: encoding itself cannot throw.
    static func writeField(_ field: Int, to writer: inout RecordWriter, _ body: (inout RecordWriter) -> Void) {
        writer.header(field, .document, payload: 5)
        let lengthOffset = writer.beginLength()
        writer.documentLevels = 0
        body(&writer)
        writer.endLength(at: lengthOffset)
        if writer.documentLevels > maximumDepth, writer.tooDeepDocument == nil {
            writer.tooDeepDocument = (field, writer.documentLevels)
        }
    }

    /// Writes `node` at nesting level `level` (the root is 1), noting the deepest level.
    static func write(_ node: Node, to writer: inout RecordWriter, level: Int = 1) {
        if level > writer.documentLevels { writer.documentLevels = level }
        switch node {
        case .null: writer.reserve(1); writer.append(UInt8(0))
        case .scalar(let scalar): write(scalar, to: &writer)
        case .array(let elements):
            writer.reserve(5)
            writer.append(UInt8(6))
            writer.append(UInt32(truncatingIfNeeded: elements.count))
            for element in elements { write(element, to: &writer, level: level + 1) }
        case .object(let members):
            writer.reserve(5)
            writer.append(UInt8(7))
            writer.append(UInt32(truncatingIfNeeded: members.count))
            for (key, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                writeString(key, to: &writer)
                write(member, to: &writer, level: level + 1)
            }
        }
    }

    static func write(_ scalar: Scalar, to writer: inout RecordWriter) {
        switch scalar {
        case .bool(let flag): writer.reserve(1); writer.append(UInt8(flag ? 2 : 1))
        case .integer(let number): writer.reserve(9); writer.append(UInt8(3)); writer.append(number)
        case .double(let number): writer.reserve(9); writer.append(UInt8(4)); writer.append(number.bitPattern)
        case .unsigned(let number):
            // Canonical: one value, one encoding (tag 3 up to Int64.max).
            writer.reserve(9)
            if let signed = Int64(exactly: number) {
                writer.append(UInt8(3)); writer.append(signed)
            } else {
                writer.append(UInt8(8)); writer.append(number)
            }
        case .string(let text):
            writer.reserve(1)
            writer.append(UInt8(5))
            writeString(text, to: &writer)
        }
    }

    /// An object of scalars (a dictionary property, or an import's checked members).
    static func writeObject(_ members: [(String, Scalar)], to writer: inout RecordWriter) {
        write(.object(Dictionary(members.map { ($0.0, Node.scalar($0.1)) }, uniquingKeysWith: { _, last in last })), to: &writer)
    }

    private static func writeString(_ text: String, to writer: inout RecordWriter) {
        var text = text
        text.withUTF8 { utf8 in
            writer.reserve(4 + utf8.count)
            writer.append(UInt32(truncatingIfNeeded: utf8.count))
            writer.append(bytes: UnsafeRawBufferPointer(utf8))
        }
    }

    // MARK: Reading

    /// The value of a whole payload, or nil when it is damaged (or has bytes after the value).
    static func decode(_ payload: UnsafeRawBufferPointer) -> Node? {
        var cursor = Cursor(bytes: payload)
        guard let node = cursor.node(depth: 0), cursor.offset == payload.count else { return nil }
        return node
    }

    /// What a path names inside a document.
    enum Found {
        /// The value at the path: a scalar, or an array of its element values.
        case value(Node)
        /// The path names nothing (a missing key, a step into a non-object, or `null`).
        case missing
        /// The encoding is damaged.
        case damaged
    }

    /// The value at `path` (object keys) inside a payload.
    static func find(_ path: [String], in payload: UnsafeRawBufferPointer) -> Found {
        // Documents are small next to a record read: decode, then walk.
        guard let root = decode(payload) else { return .damaged }
        guard let found = lookup(path[...], in: root) else { return .missing }
        return .value(found)
    }

    /// The value at `path`: an array met before the path ends is searched element by
    /// element (`addresses.city` on an array of objects), giving the array of what each
    /// element holds there (so a condition holds when one element matches).
    private static func lookup(_ path: ArraySlice<String>, in node: Node) -> Node? {
        guard let key = path.first else {
            if case .null = node { return nil }
            return node
        }
        switch node {
        case .object(let members):
            return members[key].flatMap { lookup(path.dropFirst(), in: $0) }
        case .array(let elements):
            let found = elements.compactMap { lookup(path, in: $0) }
            return found.isEmpty ? nil : .array(found)
        default:
            return nil
        }
    }

    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func u32() -> Int? {
            guard bytes.count - offset >= 4 else { return nil }
            defer { offset += 4 }
            return Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }

        mutating func u64() -> UInt64? {
            guard bytes.count - offset >= 8 else { return nil }
            defer { offset += 8 }
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }

        mutating func string() -> String? {
            guard let length = u32(), bytes.count - offset >= length else { return nil }
            defer { offset += length }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
        }

        mutating func node(depth: Int) -> Node? {
            guard depth < DocumentCodec.maximumDepth, let tag = byte() else { return nil }
            switch tag {
            case 0: return .null
            case 1: return .scalar(.bool(false))
            case 2: return .scalar(.bool(true))
            case 3: return u64().map { .scalar(.integer(Int64(bitPattern: $0))) }
            case 4: return u64().map { .scalar(.double(Double(bitPattern: $0))) }
            case 8:
                // Only values above Int64.max are written so: a smaller one is damage.
                guard let number = u64(), Int64(exactly: number) == nil else { return nil }
                return .scalar(.unsigned(number))
            case 5: return string().map { .scalar(.string($0)) }
            case 6:
                // Each element takes at least one byte: a larger count is damage.
                guard let count = u32(), count <= bytes.count - offset else { return nil }
                var elements: [Node] = []
                elements.reserveCapacity(count)
                for _ in 0..<count {
                    guard let element = node(depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                return .array(elements)
            case 7:
                guard let count = u32(), count <= (bytes.count - offset) / 5 else { return nil }
                var members: [String: Node] = [:]
                for _ in 0..<count {
                    guard let key = string(), let value = node(depth: depth + 1), members.updateValue(value, forKey: key) == nil else { return nil }
                }
                return .object(members)
            default:
                return nil
            }
        }
    }

    // MARK: JSON text

    /// The member name of a number JSON cannot write, in a document's JSON text:
    /// `{"$number":"nan"}`, `{"$number":"inf"}`, `{"$number":"-inf"}`.
    static let numberTag = "$number"
    /// The member name that wraps a stored object which would otherwise read as a tag (one
    /// member named `$number` or `$object`): `{"$object":{"$number":"a string"}}`.
    static let objectTag = "$object"

    /// The JSON text of a payload (`coffer dump`, exports), or nil when it is damaged.
    /// `tagged`: non-finite numbers are written as `{"$number":...}` and look-alike objects
    /// wrapped in `{"$object":...}` (documents whose value types are dynamic); untagged, they
    /// are the strings `"nan"`, `"inf"`, `"-inf"` (a `[String: Double]`, whose declared type
    /// says they are numbers).
    /// `wire`: for the sync server, whose `jsonb` keeps numbers as `numeric`, which has no
    /// -0: a -0.0 is written as a non-finite number is (`{"$number":"-0"}`, or `"-0"`
    /// untagged), so that it comes back as -0.0.
    static func json(_ payload: UnsafeRawBufferPointer, tagged: Bool, wire: Bool = false) -> String? {
        decode(payload).map { json($0, tagged: tagged, wire: wire) }
    }

    static func json(_ node: Node, tagged: Bool, wire: Bool = false) -> String {
        switch node {
        case .null: return "null"
        case .scalar(.bool(let flag)): return flag ? "true" : "false"
        case .scalar(.integer(let number)): return String(number)
        case .scalar(.unsigned(let number)): return String(number)
        case .scalar(.double(let number)):
            if wire, number == 0, number.sign == .minus { return tagged ? "{\"\(numberTag)\":\"-0\"}" : "\"-0\"" }
            if tagged, !number.isFinite { return "{\"\(numberTag)\":\(FieldDescription.number(number))}" }
            return FieldDescription.number(number)
        case .scalar(.string(let text)): return FieldDescription.quoted(text)
        case .array(let elements): return "[" + elements.map { json($0, tagged: tagged, wire: wire) }.joined(separator: ",") + "]"
        case .object(let members):
            let text = "{" + members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                .map { FieldDescription.quoted($0.key) + ":" + json($0.value, tagged: tagged, wire: wire) }.joined(separator: ",") + "}"
            if tagged, members.count == 1, let key = members.keys.first, key == numberTag || key == objectTag {
                return "{\"\(objectTag)\":\(text)}"
            }
            return text
        }
    }

    /// The number of the text an export writes for a non-finite number (`"-nan"` too, as
    /// earlier exports wrote some NaNs), or of `"-0"` (how a document travels to the sync
    /// server with -0.0, which `jsonb` cannot hold as a number); nil for any other text.
    static func nonFinite(_ text: String) -> Double? {
        switch text {
        case "nan", "-nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        case "-0": return -0.0
        default: return nil
        }
    }
}
