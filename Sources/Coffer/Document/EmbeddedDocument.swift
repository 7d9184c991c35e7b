import Foundation

/// An `Embedded` struct stored as an element of an array property (`[Address]`): each
/// element is a document object whose members are the leaves (the generator writes the
/// conformance for every embedded type used in an array).
///
/// ```swift
/// struct Person: Entity {
///     var id: Id = 0
///     var addresses: [Address] = []
/// }
/// let inOslo = try people.query { Person.addresses["city"] == "Oslo" }.build()   // any element
/// let same = try people.query(selector: #"{"addresses.city": "Oslo"}"#).build()
/// ```
///
/// Leaves keep their exact values: integers as 64-bit integers, dates as seconds, UUIDs and
/// base64 `Data` as text, enums as raw values, nested embedded values as objects; a nil
/// optional leaf is left out.
public protocol EmbeddedDocument: Embedded {
    /// The element as a document object (generated).
    /// ```swift
    /// Address._cofferDocument(address)
    /// ```
    @_spi(CofferGenerated)
    static func _cofferDocument(_ value: Self) -> DocumentNode

    /// The element of a document object; throws when a leaf is missing or of another kind (generated).
    /// ```swift
    /// try Address._cofferElement(node)
    /// ```
    @_spi(CofferGenerated)
    static func _cofferElement(_ node: DocumentNode) throws -> Self
}

/// A document value as generated code builds and reads it (integers exact, unlike ``JSONValue``).
@_spi(CofferGenerated)
public struct DocumentNode: Sendable {
    let node: DocumentCodec.Node

    init(_ node: DocumentCodec.Node) { self.node = node }

    /// An object of the members that are not nil.
    ///
    /// ```swift
    /// DocumentNode.object([("city", "Oslo".cofferNode)])
    /// ```
    public static func object(_ members: [(String, DocumentNode?)]) -> DocumentNode {
        var result: [String: DocumentCodec.Node] = [:]
        for (key, value) in members { if let value { result[key] = value.node } }
        return DocumentNode(.object(result))
    }

    /// The member `key` of an object, or nil.
    ///
    /// ```swift
    /// node["city"]
    /// ```
    public subscript(key: String) -> DocumentNode? {
        guard case .object(let members) = node, let member = members[key] else { return nil }
        if case .null = member { return nil }
        return DocumentNode(member)
    }
}

/// A leaf type inside a document element: the scalar types, enums through their raw values,
/// arrays of leaves and embedded values.
@_spi(CofferGenerated)
public protocol DocumentLeaf {
    /// The value as a document node.
    ///
    /// ```swift
    /// "Oslo".cofferNode
    /// ```
    @_spi(CofferGenerated)
    var cofferNode: DocumentNode { get }
    /// The value of a node, or nil when it is of another kind.
    ///
    /// ```swift
    /// String(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    init?(cofferNode: DocumentNode)
}

@_spi(CofferGenerated)
extension DocumentLeaf where Self: BinaryInteger {
    /// ```swift
    /// 5.cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode {
        // A UInt64 above Int64.max keeps its value (compared as the number it is).
        if let signed = Int64(exactly: self) { return DocumentNode(.scalar(.integer(signed))) }
        return DocumentNode(.scalar(.unsigned(UInt64(truncatingIfNeeded: self))))
    }
    /// ```swift
    /// Int(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        switch cofferNode.node {
        case .scalar(.integer(let value)):
            // Unsigned 64-bit values above Int64.max were stored by bit pattern by earlier
            // releases (now as `unsigned`): a negative integer is read back so.
            if Self.isSigned {
                guard let exact = Self(exactly: value) else { return nil }
                self = exact
            } else {
                guard let exact = Self(exactly: UInt64(bitPattern: value)) else { return nil }
                self = exact
            }
        case .scalar(.unsigned(let value)):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        case .scalar(.double(let value)):   // an imported JSON number
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        default: return nil
        }
    }
}
@_spi(CofferGenerated) extension Int: DocumentLeaf {}
@_spi(CofferGenerated) extension Int8: DocumentLeaf {}
@_spi(CofferGenerated) extension Int16: DocumentLeaf {}
@_spi(CofferGenerated) extension Int32: DocumentLeaf {}
@_spi(CofferGenerated) extension Int64: DocumentLeaf {}
@_spi(CofferGenerated) extension UInt: DocumentLeaf {}
@_spi(CofferGenerated) extension UInt8: DocumentLeaf {}
@_spi(CofferGenerated) extension UInt16: DocumentLeaf {}
@_spi(CofferGenerated) extension UInt32: DocumentLeaf {}
@_spi(CofferGenerated) extension UInt64: DocumentLeaf {}

@_spi(CofferGenerated) extension Double: DocumentLeaf {
    /// ```swift
    /// 2.5.cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { DocumentNode(.scalar(.double(self))) }
    /// ```swift
    /// Double(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        switch cofferNode.node {
        case .scalar(.double(let value)): self = value
        case .scalar(.integer(let value)): self = Double(value)
        case .scalar(.unsigned(let value)): self = Double(value)
        default: return nil
        }
    }
}

@_spi(CofferGenerated) extension Float: DocumentLeaf {
    /// ```swift
    /// Float(2.5).cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { Double(self).cofferNode }
    /// ```swift
    /// Float(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        guard let wide = Double(cofferNode: cofferNode) else { return nil }
        guard let exact = wide.isNaN ? Float.nan : Float(exactly: wide) else { return nil }
        self = exact
    }
}

@_spi(CofferGenerated) extension Bool: DocumentLeaf {
    /// ```swift
    /// true.cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { DocumentNode(.scalar(.bool(self))) }
    /// ```swift
    /// Bool(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        guard case .scalar(.bool(let value)) = cofferNode.node else { return nil }
        self = value
    }
}

@_spi(CofferGenerated) extension String: DocumentLeaf {
    /// ```swift
    /// "Oslo".cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { DocumentNode(.scalar(.string(self))) }
    /// ```swift
    /// String(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        guard case .scalar(.string(let value)) = cofferNode.node else { return nil }
        self = value
    }
}

@_spi(CofferGenerated) extension Date: DocumentLeaf {
    /// Seconds since 2001.
    ///
    /// ```swift
    /// Date().cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { timeIntervalSinceReferenceDate.cofferNode }
    /// ```swift
    /// Date(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        if case .scalar(.string(let text)) = cofferNode.node, let seconds = ISODate.seconds(from: text) {
            self = Date(timeIntervalSinceReferenceDate: seconds)   // an imported ISO 8601 date
            return
        }
        guard let seconds = Double(cofferNode: cofferNode) else { return nil }
        self = Date(timeIntervalSinceReferenceDate: seconds)
    }
}

@_spi(CofferGenerated) extension UUID: DocumentLeaf {
    /// Its string form.
    ///
    /// ```swift
    /// UUID().cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { uuidString.cofferNode }
    /// ```swift
    /// UUID(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        guard let text = String(cofferNode: cofferNode), let value = UUID(uuidString: text) else { return nil }
        self = value
    }
}

@_spi(CofferGenerated) extension Data: DocumentLeaf {
    /// Base64 text.
    ///
    /// ```swift
    /// Data([1]).cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { base64EncodedString().cofferNode }
    /// ```swift
    /// Data(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        guard let text = String(cofferNode: cofferNode), let value = Data(base64Encoded: text) else { return nil }
        self = value
    }
}

@_spi(CofferGenerated) extension JSONValue: DocumentLeaf {
    /// ```swift
    /// JSONValue("a").cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { DocumentNode(DocumentCodec.Node(self)) }
    /// ```swift
    /// JSONValue(cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) { self = JSONValue(cofferNode.node) }
}

@_spi(CofferGenerated) extension Array: DocumentLeaf where Element: DocumentLeaf {
    /// ```swift
    /// ["a"].cofferNode
    /// ```
    @_spi(CofferGenerated)
    public var cofferNode: DocumentNode { DocumentNode(.array(map(\.cofferNode.node))) }
    /// ```swift
    /// [String](cofferNode: node)
    /// ```
    @_spi(CofferGenerated)
    public init?(cofferNode: DocumentNode) {
        guard case .array(let elements) = cofferNode.node else { return nil }
        var result: [Element] = []
        for element in elements {
            guard let value = Element(cofferNode: DocumentNode(element)) else { return nil }
            result.append(value)
        }
        self = result
    }
}

/// Reads and writes leaves in generated element codecs.
@_spi(CofferGenerated)
public enum DocumentLeaves {
    /// A leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.node(address.city)
    /// ```
    public static func node<V: DocumentLeaf>(_ value: V) -> DocumentNode { value.cofferNode }
    /// An optional leaf's node (nil: left out).
    ///
    /// ```swift
    /// DocumentLeaves.optionalNode(address.zip)
    /// ```
    public static func optionalNode<V: DocumentLeaf>(_ value: V?) -> DocumentNode? { value.map(\.cofferNode) }
    /// An enum leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.node(address.kind)
    /// ```
    public static func node<V: RawRepresentable>(_ value: V) -> DocumentNode where V.RawValue: DocumentLeaf { value.rawValue.cofferNode }
    /// An optional enum leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.optionalNode(address.previousKind)
    /// ```
    public static func optionalNode<V: RawRepresentable>(_ value: V?) -> DocumentNode? where V.RawValue: DocumentLeaf { value.map(\.rawValue.cofferNode) }
    /// An embedded leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.node(address.location)
    /// ```
    public static func node<V: EmbeddedDocument>(_ value: V) -> DocumentNode { V._cofferDocument(value) }
    /// An optional embedded leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.optionalNode(address.location)
    /// ```
    public static func optionalNode<V: EmbeddedDocument>(_ value: V?) -> DocumentNode? { value.map(V._cofferDocument) }

    /// A required leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.value(String.self, node["city"], "city", in: Address.self)
    /// ```
    public static func value<V: DocumentLeaf, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V {
        guard let node, let value = V(cofferNode: node) else { throw damage(owner, name, V.self) }
        return value
    }
    /// An optional leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.optional(String.self, node["zip"], "zip", in: Address.self)
    /// ```
    public static func optional<V: DocumentLeaf, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V? {
        guard let node else { return nil }
        guard let value = V(cofferNode: node) else { throw damage(owner, name, V.self) }
        return value
    }
    /// A required enum leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.value(Kind.self, node["kind"], "kind", in: Address.self)
    /// ```
    public static func value<V: RawRepresentable, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V
    where V.RawValue: DocumentLeaf {
        guard let node, let raw = V.RawValue(cofferNode: node), let value = V(rawValue: raw) else { throw damage(owner, name, V.self) }
        return value
    }
    /// An optional enum leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.optional(Kind.self, node["kind"], "kind", in: Address.self)
    /// ```
    public static func optional<V: RawRepresentable, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V?
    where V.RawValue: DocumentLeaf {
        guard let node else { return nil }
        guard let raw = V.RawValue(cofferNode: node), let value = V(rawValue: raw) else { throw damage(owner, name, V.self) }
        return value
    }
    /// A required embedded leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.value(GeoPoint.self, node["location"], "location", in: Address.self)
    /// ```
    public static func value<V: EmbeddedDocument, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V {
        guard let node else { throw damage(owner, name, V.self) }
        return try V._cofferElement(node)
    }
    /// An optional embedded leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.optional(GeoPoint.self, node["location"], "location", in: Address.self)
    /// ```
    public static func optional<V: EmbeddedDocument, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V? {
        try node.map(V._cofferElement)
    }

    /// An array-of-embedded leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.node(address.stops)
    /// ```
    public static func node<V: EmbeddedDocument>(_ values: [V]) -> DocumentNode { DocumentNode(.array(values.map { V._cofferDocument($0).node })) }
    /// An optional array-of-embedded leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.optionalNode(address.stops)
    /// ```
    public static func optionalNode<V: EmbeddedDocument>(_ values: [V]?) -> DocumentNode? { values.map { node($0) } }
    /// A converted leaf's node (its stored value).
    ///
    /// ```swift
    /// DocumentLeaves.node(theme.accent)
    /// ```
    public static func node<V: PropertyConvertible>(_ value: V) -> DocumentNode where V.StoredValue: DocumentLeaf { value.storedValue.cofferNode }
    /// An optional converted leaf's node.
    ///
    /// ```swift
    /// DocumentLeaves.optionalNode(theme.fallback)
    /// ```
    public static func optionalNode<V: PropertyConvertible>(_ value: V?) -> DocumentNode? where V.StoredValue: DocumentLeaf { value.map(\.storedValue.cofferNode) }

    /// A required array-of-embedded leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.value([Stop].self, node["stops"], "stops", in: Route.self)
    /// ```
    public static func value<V: EmbeddedDocument, T>(_ type: [V].Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> [V] {
        guard let node, case .array(let elements) = node.node else { throw damage(owner, name, [V].self) }
        return try elements.map { try V._cofferElement(DocumentNode($0)) }
    }
    /// An optional array-of-embedded leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.optional([Stop].self, node["stops"], "stops", in: Route.self)
    /// ```
    public static func optional<V: EmbeddedDocument, T>(_ type: [V].Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> [V]? {
        guard node != nil else { return nil }
        return try value(type, node, name, in: owner)
    }
    /// A required converted leaf; a stored value the type refuses is damage.
    ///
    /// ```swift
    /// try DocumentLeaves.value(Color.self, node["accent"], "accent", in: Theme.self)
    /// ```
    public static func value<V: PropertyConvertible, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V
    where V.StoredValue: DocumentLeaf {
        guard let node, let stored = V.StoredValue(cofferNode: node) else { throw damage(owner, name, V.self) }
        do {
            return try V(storedValue: stored)
        } catch {
            throw CofferError.damagedRecord(entity: "\(T.self)", id: 0, reason: "an array element's \(name) cannot be read as \(V.self): \(error)")
        }
    }
    /// An optional converted leaf.
    ///
    /// ```swift
    /// try DocumentLeaves.optional(Color.self, node["accent"], "accent", in: Theme.self)
    /// ```
    public static func optional<V: PropertyConvertible, T>(_ type: V.Type, _ node: DocumentNode?, _ name: String, in owner: T.Type) throws -> V?
    where V.StoredValue: DocumentLeaf {
        guard node != nil else { return nil }
        return try value(type, node, name, in: owner)
    }

    static func damage<T, V>(_ owner: T.Type, _ name: String, _ type: V.Type) -> CofferError {
        CofferError.damagedRecord(entity: "\(T.self)", id: 0, reason: "an array element's \(name) is missing or not a \(V.self)")
    }
}

extension RecordWriter {
    /// Writes an array of embedded values as a document array; called by generated code.
    /// ```swift
    /// writer.write(4, entity.addresses)
    /// ```
    public mutating func write<V: EmbeddedDocument>(_ field: Int, _ values: [V]) {
        DocumentCodec.writeField(field, to: &self) { DocumentCodec.write(.array(values.map { V._cofferDocument($0).node }), to: &$0) }
    }
    /// Writes an optional array of embedded values; nil writes nothing.
    /// ```swift
    /// writer.write(5, entity.previousAddresses)
    /// ```
    public mutating func write<V: EmbeddedDocument>(_ field: Int, _ values: [V]?) {
        if let values { write(field, values) }
    }
}

@_spi(CofferGenerated)
extension RecordReader {
    /// Decodes an array of embedded values; a damaged document or element is damage.
    /// ```swift
    /// case 4: addresses = try reader.value([Address].self)
    /// ```
    public func value<V: EmbeddedDocument>(_ type: [V].Type) throws -> [V] {
        guard kind == .document else { throw mismatch(String(describing: [V].self)) }
        guard case .array(let elements)? = DocumentCodec.decode(UnsafeRawBufferPointer(start: base + payload, count: payloadLength)) else {
            throw corrupt("the array of \(V.self) is damaged")
        }
        do {
            return try elements.map { try V._cofferElement(DocumentNode($0)) }
        } catch CofferError.damagedRecord(_, _, let reason) {
            throw corrupt(reason)
        }
    }
}
