/// The value types a property can store.
///
/// Enums with a raw value are stored as their raw value's type.
///
/// ```swift
/// if Person.age.schema.type == .int { ... }
/// ```
public enum PropertyType: String, Sendable, Codable, CaseIterable {
    /// `Bool`.
    ///
    /// ```swift
    /// PropertyType.bool
    /// ```
    case bool
    /// `Int8`.
    ///
    /// ```swift
    /// PropertyType.int8
    /// ```
    case int8
    /// `Int16`.
    ///
    /// ```swift
    /// PropertyType.int16
    /// ```
    case int16
    /// `Int32`.
    ///
    /// ```swift
    /// PropertyType.int32
    /// ```
    case int32
    /// `Int64`.
    ///
    /// ```swift
    /// PropertyType.int64
    /// ```
    case int64
    /// `Int` (64 bits).
    ///
    /// ```swift
    /// PropertyType.int
    /// ```
    case int
    /// `UInt8`.
    ///
    /// ```swift
    /// PropertyType.uint8
    /// ```
    case uint8
    /// `UInt16`.
    ///
    /// ```swift
    /// PropertyType.uint16
    /// ```
    case uint16
    /// `UInt32`.
    ///
    /// ```swift
    /// PropertyType.uint32
    /// ```
    case uint32
    /// `UInt64`, also the type of `id`.
    ///
    /// ```swift
    /// PropertyType.uint64
    /// ```
    case uint64
    /// `UInt` (64 bits).
    ///
    /// ```swift
    /// PropertyType.uint
    /// ```
    case uint
    /// `Float`.
    ///
    /// ```swift
    /// PropertyType.float
    /// ```
    case float
    /// `Double`.
    ///
    /// ```swift
    /// PropertyType.double
    /// ```
    case double
    /// `String`.
    ///
    /// ```swift
    /// PropertyType.string
    /// ```
    case string
    /// `Date`, stored as seconds since the reference date.
    ///
    /// ```swift
    /// PropertyType.date
    /// ```
    case date
    /// `Data`.
    ///
    /// ```swift
    /// PropertyType.data
    /// ```
    case data
    /// `UUID`.
    ///
    /// ```swift
    /// PropertyType.uuid
    /// ```
    case uuid
    /// `[String]`.
    ///
    /// ```swift
    /// PropertyType.stringArray
    /// ```
    case stringArray
    /// `[Int]`.
    ///
    /// ```swift
    /// PropertyType.intArray
    /// ```
    case intArray
    /// `[Double]`.
    ///
    /// ```swift
    /// PropertyType.doubleArray
    /// ```
    case doubleArray
    /// `[Bool]`.
    ///
    /// ```swift
    /// PropertyType.boolArray
    /// ```
    case boolArray
    /// `[Int8]`.
    ///
    /// ```swift
    /// PropertyType.int8Array
    /// ```
    case int8Array
    /// `[Int16]`.
    ///
    /// ```swift
    /// PropertyType.int16Array
    /// ```
    case int16Array
    /// `[Int32]`.
    ///
    /// ```swift
    /// PropertyType.int32Array
    /// ```
    case int32Array
    /// `[Int64]`.
    ///
    /// ```swift
    /// PropertyType.int64Array
    /// ```
    case int64Array
    /// `[UInt]`.
    ///
    /// ```swift
    /// PropertyType.uintArray
    /// ```
    case uintArray
    /// `[UInt8]`.
    ///
    /// ```swift
    /// PropertyType.uint8Array
    /// ```
    case uint8Array
    /// `[UInt16]`.
    ///
    /// ```swift
    /// PropertyType.uint16Array
    /// ```
    case uint16Array
    /// `[UInt32]`.
    ///
    /// ```swift
    /// PropertyType.uint32Array
    /// ```
    case uint32Array
    /// `[UInt64]`.
    ///
    /// ```swift
    /// PropertyType.uint64Array
    /// ```
    case uint64Array
    /// `[Float]`.
    ///
    /// ```swift
    /// PropertyType.floatArray
    /// ```
    case floatArray
    /// `[Date]`.
    ///
    /// ```swift
    /// PropertyType.dateArray
    /// ```
    case dateArray
    /// `[UUID]`.
    ///
    /// ```swift
    /// PropertyType.uuidArray
    /// ```
    case uuidArray
    /// ``JSONValue``, stored as a binary document.
    ///
    /// ```swift
    /// PropertyType.json
    /// ```
    case json
    /// `[String: String]`.
    ///
    /// ```swift
    /// PropertyType.stringDictionary
    /// ```
    case stringDictionary
    /// `[String: Int]`.
    ///
    /// ```swift
    /// PropertyType.intDictionary
    /// ```
    case intDictionary
    /// `[String: Double]`.
    ///
    /// ```swift
    /// PropertyType.doubleDictionary
    /// ```
    case doubleDictionary
    /// `[String: Bool]`.
    ///
    /// ```swift
    /// PropertyType.boolDictionary
    /// ```
    case boolDictionary

    /// Whether values are documents (``JSONValue`` or a dictionary), queried by path.
    ///
    /// ```swift
    /// PropertyType.stringDictionary.isDocument   // true
    /// ```
    public var isDocument: Bool {
        switch self {
        case .json, .stringDictionary, .intDictionary, .doubleDictionary, .boolDictionary: return true
        default: return false
        }
    }

    /// For an array type, the type of its elements; nil for a single value.
    ///
    /// ```swift
    /// PropertyType.dateArray.elementType   // .date
    /// ```
    public var elementType: PropertyType? {
        switch self {
        case .stringArray: return .string
        case .intArray: return .int
        case .doubleArray: return .double
        case .boolArray: return .bool
        case .int8Array: return .int8
        case .int16Array: return .int16
        case .int32Array: return .int32
        case .int64Array: return .int64
        case .uintArray: return .uint
        case .uint8Array: return .uint8
        case .uint16Array: return .uint16
        case .uint32Array: return .uint32
        case .uint64Array: return .uint64
        case .floatArray: return .float
        case .dateArray: return .date
        case .uuidArray: return .uuid
        default: return nil
        }
    }
}
