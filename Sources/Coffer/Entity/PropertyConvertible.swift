import Foundation

/// A type stored as another, supported type: a `Color` as its hex `String`, a `Money` as
/// cents in an `Int64`. Conform the type (in the same target as the entities, so the
/// generator sees it) and name the stored type with a `typealias`:
///
/// ```swift
/// struct Color: PropertyConvertible, Equatable {
///     typealias StoredValue = String
///     var red: UInt8, green: UInt8, blue: UInt8
///
///     init(storedValue hex: String) throws {
///         guard hex.count == 7, hex.first == "#", let rgb = UInt32(hex.dropFirst(), radix: 16) else {
///             throw ColorError.notHex(hex)
///         }
///         red = UInt8(rgb >> 16 & 0xFF); green = UInt8(rgb >> 8 & 0xFF); blue = UInt8(rgb & 0xFF)
///     }
///     var storedValue: String { "#" + [red, green, blue].map { String(format: "%02X", $0) }.joined() }
/// }
///
/// struct Theme: Entity {
///     var id: Id = 0
///     @Index var accent: Color
///     var fallback: Color?
/// }
///
/// let reds = try themes.query { Theme.accent == Color(red: 255, green: 0, blue: 0) }.build()
/// ```
///
/// Rules:
/// - The property is stored, indexed and compared as its `StoredValue`: a condition converts
///   its operand with `storedValue` (so `==`, `isIn` and, for a `Comparable` type, ordering
///   follow the stored values' order), selectors and the `coffer` tool see the stored value,
///   and schema evolution treats the property as its stored type.
/// - A stored value that `init(storedValue:)` refuses (it throws) is reported as
///   ``CofferError/damagedRecord(entity:id:reason:)`` naming the error: it is never replaced
///   by a default.
/// - `URL` (stored as its absolute `String`) and `Decimal` (stored exactly, as text that
///   sorts as the numbers do, see ``SortableDecimal``) come built in.
/// - The generator needs `typealias StoredValue = ...` written in the conforming
///   declaration (a build error at that line otherwise), with one of the scalar types
///   entity properties have.
public protocol PropertyConvertible: QueryableValue, Sendable {
    /// The supported type the value is stored as.
    ///
    /// ```swift
    /// typealias StoredValue = String
    /// ```
    associatedtype StoredValue: RecordValue & QueryableValue

    /// The value a stored one stands for; throws when it cannot be converted.
    ///
    /// ```swift
    /// let red = try Color(storedValue: "#FF0000")
    /// ```
    init(storedValue: StoredValue) throws

    /// The value to store.
    ///
    /// ```swift
    /// Color(red: 255, green: 0, blue: 0).storedValue   // "#FF0000"
    /// ```
    var storedValue: StoredValue { get }
}

extension PropertyConvertible {
    /// Compares by the stored value.
    ///
    /// ```swift
    /// color._queryValue   // .string("#FF0000")
    /// ```
    public var _queryValue: QueryValue { storedValue._queryValue }
}

extension URL: PropertyConvertible {
    /// URLs are stored as their absolute string.
    ///
    /// ```swift
    /// URL.StoredValue.self   // String
    /// ```
    public typealias StoredValue = String

    /// The URL of a stored string.
    ///
    /// ```swift
    /// try URL(storedValue: "https://example.com")
    /// ```
    public init(storedValue: String) throws {
        guard let url = URL(string: storedValue) else {
            throw CofferError.invalidStoredValue(type: "URL", value: storedValue)
        }
        self = url
    }

    /// The absolute string.
    ///
    /// ```swift
    /// URL(string: "https://example.com")!.storedValue
    /// ```
    public var storedValue: String { absoluteString }
}

extension Decimal: PropertyConvertible {
    /// Decimals are stored as text that sorts as the numbers do.
    ///
    /// ```swift
    /// Decimal.StoredValue.self   // String
    /// ```
    public typealias StoredValue = String

    /// The decimal of a stored string: the sortable form `storedValue` writes, or a plain
    /// decimal (`"12.50"`, `"-3"`, POSIX format, as an import may hold).
    /// ```swift
    /// try Decimal(storedValue: "#2502125")   // 12.5
    /// ```
    public init(storedValue: String) throws {
        if let value = SortableDecimal.decode(storedValue)
            ?? (storedValue.first.map { $0.isNumber || $0 == "-" } == true ? Decimal(string: storedValue, locale: Locale(identifier: "en_US_POSIX")) : nil),
           !value.isNaN {
            self = value
            return
        }
        throw CofferError.invalidStoredValue(type: "Decimal", value: storedValue)
    }

    /// Text whose byte order is the numbers' order (see ``SortableDecimal``), so `<`, `>`,
    /// ordering and index ranges on a `Decimal` property work.
    ///
    /// ```swift
    /// Decimal(12.5).storedValue   // "#2502125"
    /// ```
    public var storedValue: String { SortableDecimal.encode(self) }
}

/// The sortable text of a `Decimal`: `#` (so it is never mistaken for a plain number), a
/// sign class (`0` negative, `1` zero, `2` positive),
/// then for a value `0.d1d2…dn × 10^e` (no leading or trailing zero digits) the exponent
/// plus 500 in three digits and the digits; for negatives the exponent and digits are
/// complemented (`999 - x`, `9 - d`) and a `~` ends them, so a longer magnitude sorts first.
/// NaN has no sortable form and is written as `"NaN"` (never equal to a number).
public enum SortableDecimal {
    /// The sortable text.
    ///
    /// ```swift
    /// SortableDecimal.encode(Decimal(12.5))   // "#2502125"
    /// ```
    public static func encode(_ value: Decimal) -> String {
        guard !value.isNaN else { return "NaN" }
        let plain = NSDecimalNumber(decimal: value).description(withLocale: Locale(identifier: "en_US_POSIX"))
        let negative = plain.hasPrefix("-")
        let unsigned = negative ? plain.dropFirst() : Substring(plain)
        let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integer = parts.first.map(String.init) ?? ""
        var digits = Array(integer + (parts.count > 1 ? String(parts[1]) : ""))
        let leading = digits.prefix { $0 == "0" }.count
        digits.removeFirst(leading)
        while digits.last == "0" { digits.removeLast() }
        guard !digits.isEmpty else { return "#1" }
        let exponent = integer.count - leading + 500
        func pad(_ number: Int) -> String { String(repeating: "0", count: max(0, 3 - String(number).count)) + String(number) }
        if !negative { return "#2" + pad(exponent) + String(digits) }
        let complemented = digits.map { Character(String(9 - ($0.wholeNumberValue ?? 0))) }
        return "#0" + pad(999 - exponent) + String(complemented) + "~"
    }

    /// The value of sortable text, or nil when `text` is not in that form.
    /// ```swift
    /// SortableDecimal.decode("#2502125")   // 12.5
    /// ```
    public static func decode(_ text: String) -> Decimal? {
        guard text.utf8.first == UInt8(ascii: "#") else { return nil }
        let bytes = Array(text.utf8.dropFirst())
        guard let sign = bytes.first else { return nil }
        if sign == UInt8(ascii: "1") { return bytes.count == 1 ? 0 : nil }
        guard sign == UInt8(ascii: "0") || sign == UInt8(ascii: "2"), bytes.count >= 5 else { return nil }
        let negative = sign == UInt8(ascii: "0")
        var body = bytes.dropFirst()
        if negative {
            guard body.last == UInt8(ascii: "~") else { return nil }
            body = body.dropLast()
        }
        guard body.count >= 4, body.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var values = body.map { Int($0 - UInt8(ascii: "0")) }
        if negative { values = values.map { 9 - $0 } }
        let exponent = values[0] * 100 + values[1] * 10 + values[2] - 500
        let digits = values.dropFirst(3)
        guard let first = digits.first, first != 0, digits.last != 0 else { return nil }
        // 0.d1…dn × 10^e = (d1…dn) × 10^(e - n)
        guard let mantissa = Decimal(string: digits.map(String.init).joined(), locale: Locale(identifier: "en_US_POSIX")) else { return nil }
        let value = Decimal(sign: negative ? .minus : .plus, exponent: exponent - digits.count, significand: mantissa)
        return value
    }
}

extension RecordWriter {
    /// Writes a converted value as its stored value; called by generated code.
    ///
    /// ```swift
    /// writer.write(3, entity.accent)
    /// ```
    @inlinable
    public mutating func write<V: PropertyConvertible>(_ field: Int, _ value: V) {
        value.storedValue.cofferWrite(field, to: &self)
    }

    /// Writes an optional converted value; nil writes nothing.
    ///
    /// ```swift
    /// writer.write(4, entity.fallback)
    /// ```
    @inlinable
    public mutating func write<V: PropertyConvertible>(_ field: Int, _ value: V?) {
        if let value { value.storedValue.cofferWrite(field, to: &self) }
    }
}

@_spi(CofferGenerated)
extension RecordReader {
    /// Decodes the current field as a converted value; a stored value the type refuses is
    /// damage, reported with the type's error.
    ///
    /// ```swift
    /// case 3: accent = try reader.value(Color.self)
    /// ```
    @inlinable
    public func value<V: PropertyConvertible>(_ type: V.Type) throws -> V {
        guard let stored = V.StoredValue.cofferRead(from: self) else { throw mismatch(String(describing: V.self)) }
        do {
            return try V(storedValue: stored)
        } catch {
            throw corrupt("the stored value cannot be read as \(V.self): \(error)")
        }
    }
}
