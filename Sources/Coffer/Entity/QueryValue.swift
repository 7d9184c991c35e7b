import Foundation

/// A query parameter: a value normalised to the few families Coffer compares.
///
/// ```swift
/// let value: QueryValue = 42._queryValue     // .signed(42)
/// ```
public enum QueryValue: Sendable, Hashable, CustomStringConvertible {
    /// No value (a nil optional).
    ///
    /// ```swift
    /// QueryValue.null
    /// ```
    case null
    /// A Bool.
    ///
    /// ```swift
    /// QueryValue.bool(true)
    /// ```
    case bool(Bool)
    /// Any signed integer.
    ///
    /// ```swift
    /// QueryValue.signed(-1)
    /// ```
    case signed(Int64)
    /// Any unsigned integer.
    ///
    /// ```swift
    /// QueryValue.unsigned(7)
    /// ```
    case unsigned(UInt64)
    /// Float, Double, or a Date as seconds since the reference date.
    ///
    /// ```swift
    /// QueryValue.double(1.5)
    /// ```
    case double(Double)
    /// A String.
    ///
    /// ```swift
    /// QueryValue.string("Ada")
    /// ```
    case string(String)
    /// A UUID.
    ///
    /// ```swift
    /// QueryValue.uuid(UUID())
    /// ```
    case uuid(UUID)

    /// The value as written in plans and error messages.
    /// ```swift
    /// QueryValue.string("a").description   // "\"a\""
    /// ```
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let value): return String(value)
        case .signed(let value): return String(value)
        case .unsigned(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return FieldDescription.quoted(value)
        case .uuid(let value): return value.uuidString
        }
    }

    /// A name of the value's family for parameter errors.
    var familyName: String {
        switch self {
        case .null: return "nil"
        case .bool: return "Bool"
        case .signed, .unsigned: return "an integer"
        case .double: return "a floating-point number or Date"
        case .string: return "String"
        case .uuid: return "UUID"
        }
    }
}

/// A value a query condition can compare a property with. Coffer conforms the supported
/// scalar types and optionals of them; the generator conforms the enums entities use.
///
/// ```swift
/// Person.age > 18            // Int: QueryableValue
/// Person.mood == .happy      // generated: extension Mood: QueryableValue {}
/// ```
///
/// It does not refine `Sendable`: conditions keep the normalised ``QueryValue``, never the
/// value itself, and the generated conformance sits in another file than the enum, where
/// Swift would refuse to restate an internal enum's implicit `Sendable` conformance.
public protocol QueryableValue {
    /// The normalised value. Underscored, not `@_spi`: a ``PropertyConvertible`` type you
    /// write gets it from a default implementation, which must be visible in your file; the
    /// underscore keeps it out of code completion on every scalar.
    /// ```swift
    /// 5._queryValue
    /// ```
    var _queryValue: QueryValue { get }
}

extension QueryableValue where Self: RawRepresentable, RawValue: QueryableValue {
    /// Enums compare by raw value.
    ///
    /// ```swift
    /// Mood.happy._queryValue   // .string("happy")
    /// ```
    public var _queryValue: QueryValue { rawValue._queryValue }
}

extension Bool: QueryableValue {
    /// ```swift
    /// true._queryValue
    /// ```
    public var _queryValue: QueryValue { .bool(self) }
}
extension Int: QueryableValue {
    /// ```swift
    /// 1._queryValue
    /// ```
    public var _queryValue: QueryValue { .signed(Int64(self)) }
}
extension Int8: QueryableValue {
    /// ```swift
    /// Int8(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .signed(Int64(self)) }
}
extension Int16: QueryableValue {
    /// ```swift
    /// Int16(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .signed(Int64(self)) }
}
extension Int32: QueryableValue {
    /// ```swift
    /// Int32(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .signed(Int64(self)) }
}
extension Int64: QueryableValue {
    /// ```swift
    /// Int64(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .signed(self) }
}
extension UInt: QueryableValue {
    /// ```swift
    /// UInt(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .unsigned(UInt64(self)) }
}
extension UInt8: QueryableValue {
    /// ```swift
    /// UInt8(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .unsigned(UInt64(self)) }
}
extension UInt16: QueryableValue {
    /// ```swift
    /// UInt16(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .unsigned(UInt64(self)) }
}
extension UInt32: QueryableValue {
    /// ```swift
    /// UInt32(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .unsigned(UInt64(self)) }
}
extension UInt64: QueryableValue {
    /// ```swift
    /// UInt64(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .unsigned(self) }
}
extension Float: QueryableValue {
    /// ```swift
    /// Float(1)._queryValue
    /// ```
    public var _queryValue: QueryValue { .double(Double(self)) }
}
extension Double: QueryableValue {
    /// ```swift
    /// 1.5._queryValue
    /// ```
    public var _queryValue: QueryValue { .double(self) }
}
extension String: QueryableValue {
    /// ```swift
    /// "a"._queryValue
    /// ```
    public var _queryValue: QueryValue { .string(self) }
}
extension Date: QueryableValue {
    /// Dates compare as seconds since the reference date.
    ///
    /// ```swift
    /// Date()._queryValue
    /// ```
    public var _queryValue: QueryValue { .double(timeIntervalSinceReferenceDate) }
}
extension UUID: QueryableValue {
    /// ```swift
    /// UUID()._queryValue
    /// ```
    public var _queryValue: QueryValue { .uuid(self) }
}
extension Optional: QueryableValue where Wrapped: QueryableValue {
    /// nil is `.null`.
    ///
    /// ```swift
    /// Int?.none._queryValue
    /// ```
    public var _queryValue: QueryValue { self?._queryValue ?? .null }
}
