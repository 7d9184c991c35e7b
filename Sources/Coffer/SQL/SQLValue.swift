import Foundation

/// A value in a Smart SQL statement: a parameter, or a column of a result row.
///
/// Stored values map to the five SQL storage classes: `Bool` and the integer types to
/// ``integer(_:)`` (`true` is 1), `Float`, `Double` and `Date` (seconds since 1970) to
/// ``real(_:)``, `String` and `UUID` (its `uuidString`) to ``text(_:)``, `Data` to
/// ``blob(_:)``, arrays and documents to their JSON ``text(_:)``, and nil to ``null``. A
/// `UInt64` above `Int64.max` is ``unsigned(_:)``, so no stored value is ever rounded.
///
/// Parameters are written as literals:
///
/// ```swift
/// let rows = try store.query(sql: "SELECT name FROM Employee WHERE salary > ? AND city = ?",
///                            parameters: [50_000, "Paris"])
/// ```
public enum SQLValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL NULL: no value.
    ///
    /// ```swift
    /// let missing: SQLValue = nil    // .null
    /// ```
    case null
    /// A 64-bit signed integer (also a `Bool`: 1 or 0).
    ///
    /// ```swift
    /// let count: SQLValue = 42       // .integer(42)
    /// ```
    case integer(Int64)
    /// An unsigned integer above `Int64.max`, as a `UInt64` property may hold. Compared
    /// exactly with every number; arithmetic on it is floating point.
    ///
    /// ```swift
    /// let big = SQLValue.unsigned(.max)
    /// ```
    case unsigned(UInt64)
    /// A double-precision floating-point number (also a `Date`, as seconds since 1970).
    ///
    /// ```swift
    /// let price: SQLValue = 9.5      // .real(9.5)
    /// ```
    case real(Double)
    /// Text.
    ///
    /// ```swift
    /// let city: SQLValue = "Paris"   // .text("Paris")
    /// ```
    case text(String)
    /// Bytes (a `Data` property).
    ///
    /// ```swift
    /// let bytes = SQLValue.blob(Data([1, 2, 3]))
    /// ```
    case blob(Data)

    /// The value as SQL would write it: `NULL`, `42`, `9.5`, `'Paris'`, `X'010203'`.
    ///
    /// ```swift
    /// print(SQLValue.text("it's").description)   // 'it''s'
    /// ```
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .unsigned(let value): return String(value)
        case .real(let value): return Self.realText(value)
        case .text(let value): return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let value): return "X'" + value.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    /// Whether the value is NULL.
    ///
    /// ```swift
    /// if row["manager"].isNull { print("no manager") }
    /// ```
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON text of the value: a number, a quoted string, `null`; a blob in base64;
    /// a non-finite real as the string `"nan"`, `"inf"` or `"-inf"`. What `coffer sql` prints.
    ///
    /// ```swift
    /// print(SQLValue.text("Ada").json)   // "Ada"
    /// ```
    public var json: String {
        switch self {
        case .null: return "null"
        case .integer(let value): return String(value)
        case .unsigned(let value): return String(value)
        case .real(let value):
            if value.isNaN { return "\"nan\"" }
            if value.isInfinite { return value < 0 ? "\"-inf\"" : "\"inf\"" }
            return Self.realText(value)
        case .text(let value): return FieldDescription.quoted(value)
        case .blob(let value): return FieldDescription.quoted(value.base64EncodedString())
        }
    }

    /// A real as text: the shortest form that reads back as the same value, always with a
    /// decimal point or an exponent, so that it never reads as an integer.
    static func realText(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value < 0 ? "-Inf" : "Inf") }
        let text = String(value)
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "n" || $0 == "i" }) ? text : text + ".0"
    }

    /// The storage class's name, for messages: `NULL`, `INTEGER`, `REAL`, `TEXT`, `BLOB`.
    var className: String {
        switch self {
        case .null: return "NULL"
        case .integer, .unsigned: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        }
    }
}

extension SQLValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
                    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    /// `nil` as a parameter is NULL.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT count(*) FROM Task WHERE owner IS ?", parameters: [nil])
    /// ```
    public init(nilLiteral: ()) { self = .null }

    /// An integer literal.
    ///
    /// ```swift
    /// let limit: SQLValue = 10
    /// ```
    public init(integerLiteral value: Int64) { self = .integer(value) }

    /// A floating-point literal.
    ///
    /// ```swift
    /// let ratio: SQLValue = 0.5
    /// ```
    public init(floatLiteral value: Double) { self = .real(value) }

    /// A string literal.
    ///
    /// ```swift
    /// let name: SQLValue = "Ada"
    /// ```
    public init(stringLiteral value: String) { self = .text(value) }

    /// A Boolean literal: 1 or 0, as stored `Bool` properties read.
    ///
    /// ```swift
    /// let done: SQLValue = true      // .integer(1)
    /// ```
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

extension SQLValue {
    /// A `Date` as a parameter: seconds since 1970, as date properties read.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT title FROM Task WHERE due < ?", parameters: [SQLValue(Date())])
    /// ```
    public init(_ date: Date) { self = .real(date.timeIntervalSince1970) }

    /// A `UUID` as a parameter: its `uuidString`, as UUID properties read.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT * FROM Device WHERE token = ?", parameters: [SQLValue(token)])
    /// ```
    public init(_ uuid: UUID) { self = .text(uuid.uuidString) }

    /// Any integer as a parameter; one above `Int64.max` is ``unsigned(_:)``.
    ///
    /// ```swift
    /// let count = 3
    /// try store.query(sql: "SELECT * FROM Task LIMIT ?", parameters: [SQLValue(count)])
    /// ```
    public init<T: BinaryInteger>(_ value: T) {
        if let signed = Int64(exactly: value) {
            self = .integer(signed)
        } else if let unsigned = UInt64(exactly: value) {
            self = .unsigned(unsigned)
        } else {
            // A BinaryInteger wider than 64 bits, out of both ranges: the nearest real.
            self = .real(Double(value))
        }
    }

    /// A floating-point number as a parameter.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT * FROM Item WHERE price < ?", parameters: [SQLValue(limit)])
    /// ```
    public init(_ value: Double) { self = .real(value) }

    /// A string as a parameter.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT * FROM Employee WHERE name = ?", parameters: [SQLValue(name)])
    /// ```
    public init(_ value: String) { self = .text(value) }

    /// A Bool as a parameter: 1 or 0.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT * FROM Task WHERE done = ?", parameters: [SQLValue(flag)])
    /// ```
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }

    /// Bytes as a parameter.
    ///
    /// ```swift
    /// try store.query(sql: "SELECT id FROM Attachment WHERE hash = ?", parameters: [SQLValue(digest)])
    /// ```
    public init(_ value: Data) { self = .blob(value) }
}
