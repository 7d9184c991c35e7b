import Foundation

/// A JSON-like value — null, a boolean, a number, a string, an array or an object — stored
/// in the binary record format (not as JSON text) and queryable by path: what Layer's
/// conversation metadata and Cloudant's free-form sub-documents need.
///
/// ```swift
/// struct Conversation: Entity {
///     var id: Id = 0
///     var title: String
///     var metadata: JSONValue = [:]
/// }
///
/// var chat = Conversation(title: "Ops", metadata: ["backgroundColor": "red", "first": ["second": ["third": "NestedResult"]]])
/// try conversations.put(&chat)
/// let nested = try conversations.query { Conversation.metadata["first"]["second"]["third"] == "NestedResult" }.build()
/// let colored = try conversations.query(selector: #"{"metadata.backgroundColor": {"$in": ["red", "blue"]}}"#).build()
/// ```
///
/// Numbers are `Double`s, as in JSON. Objects keep their keys sorted when stored. Literals
/// build values directly (`["a": 1, "b": [true, nil]]`).
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    ///
    /// ```swift
    /// JSONValue.null
    /// ```
    case null
    /// `true` or `false`.
    ///
    /// ```swift
    /// JSONValue.bool(true)
    /// ```
    case bool(Bool)
    /// A number.
    ///
    /// ```swift
    /// JSONValue.number(2.5)
    /// ```
    case number(Double)
    /// A string.
    ///
    /// ```swift
    /// JSONValue.string("red")
    /// ```
    case string(String)
    /// An array.
    ///
    /// ```swift
    /// JSONValue.array([1, "two"])
    /// ```
    case array([JSONValue])
    /// An object.
    ///
    /// ```swift
    /// JSONValue.object(["key": "value"])
    /// ```
    case object([String: JSONValue])

    /// The member `key` of an object, or nil (not an object, or no such member).
    ///
    /// ```swift
    /// metadata["backgroundColor"]   // .string("red")
    /// ```
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array, or nil (not an array, or out of range).
    ///
    /// ```swift
    /// tags[0]
    /// ```
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// `nil` is `null`.
    ///
    /// ```swift
    /// let value: JSONValue = nil
    /// ```
    public init(nilLiteral: ()) { self = .null }
    /// ```swift
    /// let value: JSONValue = true
    /// ```
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// ```swift
    /// let value: JSONValue = 3
    /// ```
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// ```swift
    /// let value: JSONValue = 2.5
    /// ```
    public init(floatLiteral value: Double) { self = .number(value) }
    /// ```swift
    /// let value: JSONValue = "red"
    /// ```
    public init(stringLiteral value: String) { self = .string(value) }
    /// ```swift
    /// let value: JSONValue = [1, "two", nil]
    /// ```
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// ```swift
    /// let value: JSONValue = ["a": 1]
    /// ```
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: RecordValue {
    /// Writes the value in the document encoding.
    ///
    /// ```swift
    /// value.cofferWrite(3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        DocumentCodec.writeField(field, to: &writer) { DocumentCodec.write(DocumentCodec.Node(self), to: &$0) }
    }

    /// Reads a document field; nil for another kind or a damaged encoding.
    /// ```swift
    /// JSONValue.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferRead(from reader: _RecordReader) -> JSONValue? {
        guard reader.kind == .document,
              let node = DocumentCodec.decode(UnsafeRawBufferPointer(start: reader.base + reader.payload, count: reader.payloadLength)) else { return nil }
        return JSONValue(node)
    }
}

extension JSONValue {
    /// The value of a decoded document node (integers become numbers).
    init(_ node: DocumentCodec.Node) {
        switch node {
        case .null: self = .null
        case .scalar(.bool(let flag)): self = .bool(flag)
        case .scalar(.integer(let number)): self = .number(Double(number))
        case .scalar(.unsigned(let number)): self = .number(Double(number))
        case .scalar(.double(let number)): self = .number(number)
        case .scalar(.string(let text)): self = .string(text)
        case .array(let elements): self = .array(elements.map(JSONValue.init))
        case .object(let members): self = .object(members.mapValues(JSONValue.init))
        }
    }
}

/// The value types of dictionaries an entity can store (`[String: String]`,
/// `[String: Int]`, `[String: Double]`, `[String: Bool]`).
public protocol DocumentScalar: Sendable {
    /// The value as a document value.
    ///
    /// ```swift
    /// 5.documentValue
    /// ```
    @_spi(CofferGenerated)
    var documentValue: DocumentCodec.Scalar { get }
    /// The value of a document scalar, or nil when it is of another kind.
    /// ```swift
    /// Int(document: .integer(5))
    /// ```
    @_spi(CofferGenerated)
    init?(document: DocumentCodec.Scalar)
}

extension String: DocumentScalar {
    /// ```swift
    /// "red".documentValue
    /// ```
    @_spi(CofferGenerated)
    public var documentValue: DocumentCodec.Scalar { .string(self) }
    /// ```swift
    /// String(document: .string("red"))
    /// ```
    @_spi(CofferGenerated)
    public init?(document: DocumentCodec.Scalar) {
        guard case .string(let value) = document else { return nil }
        self = value
    }
}

extension Int: DocumentScalar {
    /// ```swift
    /// 5.documentValue
    /// ```
    @_spi(CofferGenerated)
    public var documentValue: DocumentCodec.Scalar { .integer(Int64(self)) }
    /// ```swift
    /// Int(document: .integer(5))
    /// ```
    @_spi(CofferGenerated)
    public init?(document: DocumentCodec.Scalar) {
        guard case .integer(let value) = document, let exact = Int(exactly: value) else { return nil }
        self = exact
    }
}

extension Double: DocumentScalar {
    /// ```swift
    /// 2.5.documentValue
    /// ```
    @_spi(CofferGenerated)
    public var documentValue: DocumentCodec.Scalar { .double(self) }
    /// ```swift
    /// Double(document: .double(2.5))
    /// ```
    @_spi(CofferGenerated)
    public init?(document: DocumentCodec.Scalar) {
        guard case .double(let value) = document else { return nil }
        self = value
    }
}

extension Bool: DocumentScalar {
    /// ```swift
    /// true.documentValue
    /// ```
    @_spi(CofferGenerated)
    public var documentValue: DocumentCodec.Scalar { .bool(self) }
    /// ```swift
    /// Bool(document: .bool(true))
    /// ```
    @_spi(CofferGenerated)
    public init?(document: DocumentCodec.Scalar) {
        guard case .bool(let value) = document else { return nil }
        self = value
    }
}

extension Dictionary: RecordValue where Key == String, Value: DocumentScalar {
    /// Writes the dictionary as a document object.
    ///
    /// ```swift
    /// ["a": "b"].cofferWrite(3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        DocumentCodec.writeField(field, to: &writer) { writer in
            DocumentCodec.writeObject(self.map { ($0.key, $0.value.documentValue) }, to: &writer)
        }
    }

    /// Reads a document object whose every value is a `Value`; nil otherwise (damage).
    /// ```swift
    /// [String: Int].cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferRead(from reader: _RecordReader) -> [String: Value]? {
        guard reader.kind == .document,
              case .object(let members)? = DocumentCodec.decode(UnsafeRawBufferPointer(start: reader.base + reader.payload, count: reader.payloadLength))
        else { return nil }
        var result: [String: Value] = [:]
        for (key, value) in members {
            guard case .scalar(let scalar) = value, let typed = Value(document: scalar) else { return nil }
            result[key] = typed
        }
        return result
    }
}

extension DocumentCodec.Node {
    /// The node of a `JSONValue` (numbers as doubles).
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .scalar(.bool(flag))
        case .number(let number): self = .scalar(.double(number))
        case .string(let text): self = .scalar(.string(text))
        case .array(let elements): self = .array(elements.map(DocumentCodec.Node.init))
        case .object(let members): self = .object(members.mapValues(DocumentCodec.Node.init))
        }
    }
}
