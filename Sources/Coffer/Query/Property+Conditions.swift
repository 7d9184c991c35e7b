import Foundation

// Conditions on properties. Every function returns a `QueryCondition`; combine them with
// `&&`, `||` and `!`. String conditions are case-sensitive unless `caseSensitive: false`
// (`like` is case-insensitive unless `caseSensitive: true`). Case-sensitive compares UTF-8
// bytes; case-insensitive compares both sides after Unicode case folding
// (`folding(options: .caseInsensitive, locale: nil)`), so `"ÄBC"` equals `"äbc"`.
//
// Nil: a nil property value is never equal to, less or greater than a value; it is
// `!=` every value and never `isIn` a list (so it `isNotIn` every list).

/// Infix operators for membership in ranges and lists.
infix operator ∈ : ComparisonPrecedence
infix operator ∉ : ComparisonPrecedence

extension Property where Value: QueryableValue {
    /// Equal.
    ///
    /// ```swift
    /// Person.age == 21
    /// ```
    public static func == (lhs: Property, rhs: Value) -> QueryCondition<E> {
        QueryCondition(lhs.index, .compare(.equal), [rhs._queryValue])
    }
    /// Not equal (nil is not equal to any value).
    ///
    /// ```swift
    /// Person.age != 21
    /// ```
    public static func != (lhs: Property, rhs: Value) -> QueryCondition<E> {
        QueryCondition(lhs.index, .compare(.notEqual), [rhs._queryValue])
    }
    /// Less than.
    ///
    /// ```swift
    /// Person.age < 18
    /// ```
    public static func < (lhs: Property, rhs: Value) -> QueryCondition<E> {
        QueryCondition(lhs.index, .compare(.less), [rhs._queryValue])
    }
    /// Greater than.
    ///
    /// ```swift
    /// Person.age > 18
    /// ```
    public static func > (lhs: Property, rhs: Value) -> QueryCondition<E> {
        QueryCondition(lhs.index, .compare(.greater), [rhs._queryValue])
    }
    /// Less than or equal.
    ///
    /// ```swift
    /// Person.age <= 18
    /// ```
    public static func <= (lhs: Property, rhs: Value) -> QueryCondition<E> {
        QueryCondition(lhs.index, .compare(.lessOrEqual), [rhs._queryValue])
    }
    /// Greater than or equal.
    ///
    /// ```swift
    /// Person.age >= 18
    /// ```
    public static func >= (lhs: Property, rhs: Value) -> QueryCondition<E> {
        QueryCondition(lhs.index, .compare(.greaterOrEqual), [rhs._queryValue])
    }

    /// Between two values, both included, in either order.
    ///
    /// ```swift
    /// Person.age.isBetween(10, and: 18)
    /// ```
    public func isBetween(_ first: Value, and second: Value) -> QueryCondition<E> {
        QueryCondition(index, .between(lowerInclusive: true, upperInclusive: true), [first._queryValue, second._queryValue])
    }
    /// Equal to one of the values.
    ///
    /// ```swift
    /// Person.lastName.isIn(["Smith", "Jones"])
    /// ```
    public func isIn(_ values: [Value]) -> QueryCondition<E> {
        QueryCondition(index, .inList, values.map(\._queryValue))
    }
    /// Equal to none of the values.
    ///
    /// ```swift
    /// Person.age.isNotIn([1, 2])
    /// ```
    public func isNotIn(_ values: [Value]) -> QueryCondition<E> {
        QueryCondition(index, .notInList, values.map(\._queryValue))
    }
    /// In a list.
    ///
    /// ```swift
    /// Person.age ∈ [1, 2, 3]
    /// ```
    public static func ∈ (lhs: Property, rhs: [Value]) -> QueryCondition<E> { lhs.isIn(rhs) }
    /// Not in a list.
    ///
    /// ```swift
    /// Person.age ∉ [1, 2, 3]
    /// ```
    public static func ∉ (lhs: Property, rhs: [Value]) -> QueryCondition<E> { lhs.isNotIn(rhs) }
}

extension Property {
    /// The property has no value.
    ///
    /// ```swift
    /// Person.birthday.isNil()
    /// ```
    public func isNil() -> QueryCondition<E> { QueryCondition(index, .isNil) }
    /// The property has a value.
    ///
    /// ```swift
    /// Person.birthday.isNotNil()
    /// ```
    public func isNotNil() -> QueryCondition<E> { QueryCondition(index, .isNotNil) }
}


extension Property where Value: QueryableValue & Comparable {
    /// In a half-open range.
    ///
    /// ```swift
    /// Person.age ∈ (10..<18)
    /// ```
    public static func ∈ (lhs: Property, rhs: Range<Value>) -> QueryCondition<E> {
        QueryCondition(lhs.index, .between(lowerInclusive: true, upperInclusive: false), [rhs.lowerBound._queryValue, rhs.upperBound._queryValue])
    }
    /// In a closed range.
    ///
    /// ```swift
    /// Person.age ∈ (10...18)
    /// ```
    public static func ∈ (lhs: Property, rhs: ClosedRange<Value>) -> QueryCondition<E> {
        lhs.isBetween(rhs.lowerBound, and: rhs.upperBound)
    }
    /// Outside a half-open range.
    ///
    /// ```swift
    /// Person.age ∉ (10..<18)
    /// ```
    public static func ∉ (lhs: Property, rhs: Range<Value>) -> QueryCondition<E> { !(lhs ∈ rhs) }
    /// Outside a closed range.
    ///
    /// ```swift
    /// Person.age ∉ (10...18)
    /// ```
    public static func ∉ (lhs: Property, rhs: ClosedRange<Value>) -> QueryCondition<E> { !(lhs ∈ rhs) }
}

extension Property {
    /// In a half-open range, for an optional property.
    ///
    /// ```swift
    /// Person.score ∈ (1..<5)
    /// ```
    public static func ∈ <W: QueryableValue & Comparable>(lhs: Property, rhs: Range<W>) -> QueryCondition<E> where Value == W? {
        QueryCondition(lhs.index, .between(lowerInclusive: true, upperInclusive: false), [rhs.lowerBound._queryValue, rhs.upperBound._queryValue])
    }
    /// In a closed range, for an optional property.
    ///
    /// ```swift
    /// Person.score ∈ (1...5)
    /// ```
    public static func ∈ <W: QueryableValue & Comparable>(lhs: Property, rhs: ClosedRange<W>) -> QueryCondition<E> where Value == W? {
        QueryCondition(lhs.index, .between(lowerInclusive: true, upperInclusive: true), [rhs.lowerBound._queryValue, rhs.upperBound._queryValue])
    }
    /// Outside a half-open range (nil is outside).
    ///
    /// ```swift
    /// Person.score ∉ (1..<5)
    /// ```
    public static func ∉ <W: QueryableValue & Comparable>(lhs: Property, rhs: Range<W>) -> QueryCondition<E> where Value == W? { !(lhs ∈ rhs) }
    /// Outside a closed range (nil is outside).
    ///
    /// ```swift
    /// Person.score ∉ (1...5)
    /// ```
    public static func ∉ <W: QueryableValue & Comparable>(lhs: Property, rhs: ClosedRange<W>) -> QueryCondition<E> where Value == W? { !(lhs ∈ rhs) }
}

/// `String` and `String?`: the values string conditions apply to.
public protocol StringQueryable: QueryableValue {}
extension String: StringQueryable {}
extension Optional: StringQueryable where Wrapped == String {}

extension Property where Value: StringQueryable {
    /// Starts with a prefix.
    ///
    /// ```swift
    /// Person.firstName.startsWith("S")
    /// ```
    public func startsWith(_ prefix: String, caseSensitive: Bool = true) -> QueryCondition<E> {
        QueryCondition(index, .startsWith, [.string(prefix)], caseSensitive: caseSensitive)
    }
    /// Ends with a suffix.
    ///
    /// ```swift
    /// Person.email.endsWith("@example.com")
    /// ```
    public func endsWith(_ suffix: String, caseSensitive: Bool = true) -> QueryCondition<E> {
        QueryCondition(index, .endsWith, [.string(suffix)], caseSensitive: caseSensitive)
    }
    /// Contains a substring.
    ///
    /// ```swift
    /// Person.bio.contains("swift", caseSensitive: false)
    /// ```
    public func contains(_ part: String, caseSensitive: Bool = true) -> QueryCondition<E> {
        QueryCondition(index, .contains, [.string(part)], caseSensitive: caseSensitive)
    }
    /// Equal, optionally ignoring case.
    ///
    /// ```swift
    /// Person.firstName.isEqual(to: "sam", caseSensitive: false)
    /// ```
    public func isEqual(to value: String, caseSensitive: Bool = true) -> QueryCondition<E> {
        QueryCondition(index, .compare(.equal), [.string(value)], caseSensitive: caseSensitive)
    }
    /// SQL-style pattern: `%` any run of characters, `_` one character; case-insensitive
    /// unless `caseSensitive: true`.
    ///
    /// ```swift
    /// Person.lastName.like("sm_th%")
    /// ```
    public func like(_ pattern: String, caseSensitive: Bool = false) -> QueryCondition<E> {
        QueryCondition(index, .like, [.string(pattern)], caseSensitive: caseSensitive)
    }
}

/// `Float`, `Double` and their optionals: the values tolerance equality applies to.
public protocol FloatingQueryable: QueryableValue {}
extension Float: FloatingQueryable {}
extension Double: FloatingQueryable {}
extension Optional: FloatingQueryable where Wrapped: BinaryFloatingPoint & QueryableValue {}

extension Property where Value: FloatingQueryable {
    /// Within `tolerance` of a value.
    ///
    /// ```swift
    /// CocoaPod.rating.isEqual(to: 4.5, tolerance: 0.01)
    /// ```
    public func isEqual(to value: Double, tolerance: Double) -> QueryCondition<E> {
        QueryCondition(index, .equalWithTolerance(abs(tolerance)), [.double(value)])
    }
}

/// `Date` and `Date?`. (`isBetween(_:and:)` works on dates like on every value.)
public protocol DateQueryable: QueryableValue {}
extension Date: DateQueryable {}
extension Optional: DateQueryable where Wrapped == Date {}

extension Property where Value: DateQueryable {
    /// Strictly before.
    ///
    /// ```swift
    /// Order.date.isBefore(today)
    /// ```
    public func isBefore(_ date: Date) -> QueryCondition<E> { QueryCondition(index, .compare(.less), [date._queryValue]) }
    /// Strictly after.
    ///
    /// ```swift
    /// Order.date.isAfter(yesterday)
    /// ```
    public func isAfter(_ date: Date) -> QueryCondition<E> { QueryCondition(index, .compare(.greater), [date._queryValue]) }
}

/// Arrays of any storable element type (enums included), optional or not: the values
/// element conditions apply to.
public protocol ArrayQueryable: Sendable {
    /// The element type.
    ///
    /// ```swift
    /// [String].Element
    /// ```
    associatedtype QueryElement: QueryableValue
}
extension Array: ArrayQueryable where Element: QueryableValue {
    /// The element type.
    public typealias QueryElement = Element
}
extension Optional: ArrayQueryable where Wrapped: ArrayQueryable {
    /// The element type.
    public typealias QueryElement = Wrapped.QueryElement
}

extension Property where Value: ArrayQueryable {
    /// The array holds the element.
    ///
    /// ```swift
    /// Person.tags.containsElement("swift")
    /// ```
    public func containsElement(_ element: Value.QueryElement) -> QueryCondition<E> {
        QueryCondition(index, .containsElement, [element._queryValue])
    }
    /// The number of elements, for comparisons (nil arrays count 0).
    /// ```swift
    /// Person.tags.count == 3
    /// ```
    public var count: ArrayCountExpression<E> { ArrayCountExpression(position: index) }
}

/// `Property.count` of an array property: compare it with an Int.
///
/// ```swift
/// Person.tags.count >= 2
/// ```
public struct ArrayCountExpression<E: Entity>: Sendable {
    let position: Int
    func condition(_ comparison: Comparison, _ count: Int) -> QueryCondition<E> {
        QueryCondition(position, .count(comparison), [.signed(Int64(count))])
    }
    /// ```swift
    /// Person.tags.count == 3
    /// ```
    public static func == (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.equal, rhs) }
    /// ```swift
    /// Person.tags.count != 3
    /// ```
    public static func != (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.notEqual, rhs) }
    /// ```swift
    /// Person.tags.count < 3
    /// ```
    public static func < (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.less, rhs) }
    /// ```swift
    /// Person.tags.count > 3
    /// ```
    public static func > (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.greater, rhs) }
    /// ```swift
    /// Person.tags.count <= 3
    /// ```
    public static func <= (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.lessOrEqual, rhs) }
    /// ```swift
    /// Person.tags.count >= 3
    /// ```
    public static func >= (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.greaterOrEqual, rhs) }
}

/// Integer properties, optional or not.
public protocol IntegerQueryable: QueryableValue {}
extension Int: IntegerQueryable {}
extension Int8: IntegerQueryable {}
extension Int16: IntegerQueryable {}
extension Int32: IntegerQueryable {}
extension Int64: IntegerQueryable {}
extension UInt: IntegerQueryable {}
extension UInt8: IntegerQueryable {}
extension UInt16: IntegerQueryable {}
extension UInt32: IntegerQueryable {}
extension UInt64: IntegerQueryable {}
extension Optional: IntegerQueryable where Wrapped: IntegerQueryable {}

extension Property where Value: IntegerQueryable {
    /// The remainder of dividing by `divisor` (Swift's `%`, sign of the dividend), for
    /// comparisons.
    ///
    /// ```swift
    /// Person.age.modulo(5) == 4
    /// ```
    public func modulo(_ divisor: Int) -> ModuloExpression<E> { ModuloExpression(position: index, divisor: Int64(divisor)) }
}

/// `Property.modulo(n)`: compare the remainder with an Int.
///
/// ```swift
/// Person.age.modulo(2) == 0
/// ```
public struct ModuloExpression<E: Entity>: Sendable {
    let position: Int
    let divisor: Int64
    func condition(_ comparison: Comparison, _ remainder: Int) -> QueryCondition<E> {
        guard divisor != 0 else { return QueryCondition(.invalid("modulo(0) divides by zero")) }
        return QueryCondition(position, .modulo(divisor, comparison), [.signed(Int64(remainder))])
    }
    /// ```swift
    /// Person.age.modulo(5) == 4
    /// ```
    public static func == (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.equal, rhs) }
    /// ```swift
    /// Person.age.modulo(5) != 4
    /// ```
    public static func != (lhs: Self, rhs: Int) -> QueryCondition<E> { lhs.condition(.notEqual, rhs) }
}
