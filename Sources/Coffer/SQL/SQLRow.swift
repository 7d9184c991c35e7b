/// One row of a Smart SQL result: its values in the order of the SELECT list, readable by
/// position or by column name, or decoded into a `Decodable` struct.
///
/// ```swift
/// for row in try store.query(sql: "SELECT name, salary FROM Employee") {
///     print(row["name"], row[1])
/// }
/// ```
public struct SQLRow: Sendable, Hashable, CustomStringConvertible {
    /// The result's column names (shared by its rows), in SELECT order.
    ///
    /// ```swift
    /// print(row.columns)    // ["name", "salary"]
    /// ```
    public let columns: [String]
    /// The values, one per column.
    ///
    /// ```swift
    /// let (name, salary) = (row.values[0], row.values[1])
    /// ```
    public let values: [SQLValue]

    init(columns: [String], values: [SQLValue]) {
        assert(columns.count == values.count, "a row has one value per column")
        self.columns = columns
        self.values = values
    }

    /// The value of the column at `index` (0-based).
    ///
    /// ```swift
    /// let first = row[0]
    /// ```
    public subscript(index: Int) -> SQLValue {
        values[index]
    }

    /// The value of the first column named `column`, or nil when the result has none.
    ///
    /// ```swift
    /// if case .text(let name)? = row["name"] { print(name) }
    /// ```
    public subscript(column: String) -> SQLValue? {
        columns.firstIndex(of: column).map { values[$0] }
    }

    /// The row as a JSON object of its columns (`{"name":"Ada","salary":120000}`), as
    /// `coffer sql` prints it.
    ///
    /// ```swift
    /// print(row.json)
    /// ```
    public var json: String {
        "{" + zip(columns, values).map { FieldDescription.quoted($0) + ":" + $1.json }.joined(separator: ",") + "}"
    }

    /// The row as `name: value` pairs.
    ///
    /// ```swift
    /// print(row)    // name: 'Ada', salary: 120000
    /// ```
    public var description: String {
        zip(columns, values).map { "\($0): \($1)" }.joined(separator: ", ")
    }

    /// The row decoded into `type`, its properties read from the columns of the same name:
    /// integers and reals convert when exact, a `Bool` reads 0 or 1, a `Date` seconds since
    /// 1970, a `UUID` its text, `Data` a blob, and an optional reads NULL as nil.
    ///
    /// ```swift
    /// struct Payroll: Decodable { var department: String; var total: Double }
    /// let payroll = try row.decode(Payroll.self)
    /// ```
    ///
    /// - Throws: `DecodingError` naming the column when a value does not fit.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try T(from: SQLRowDecoder(row: self))
    }
}

/// The rows of a Smart SQL result, with its column names.
///
/// ```swift
/// let rows = try store.query(sql: "SELECT city, COUNT(*) AS n FROM Person GROUP BY city")
/// print(rows.columns, rows.count)
/// ```
public struct SQLRows: Sendable, RandomAccessCollection, Hashable {
    /// The column names, in SELECT order.
    ///
    /// ```swift
    /// print(rows.columns)    // ["city", "n"]
    /// ```
    public let columns: [String]
    /// The rows.
    ///
    /// ```swift
    /// let first = rows.rows.first
    /// ```
    public let rows: [SQLRow]

    init(columns: [String], rows: [SQLRow]) {
        self.columns = columns
        self.rows = rows
    }

    /// The index of the first row.
    ///
    /// ```swift
    /// let start = rows.startIndex    // 0
    /// ```
    public var startIndex: Int { rows.startIndex }

    /// The index past the last row.
    ///
    /// ```swift
    /// let end = rows.endIndex        // rows.count
    /// ```
    public var endIndex: Int { rows.endIndex }

    /// The row at `position`.
    ///
    /// ```swift
    /// let row = rows[0]
    /// ```
    public subscript(position: Int) -> SQLRow { rows[position] }

    /// Every row decoded into `type` (see ``SQLRow/decode(_:)``).
    ///
    /// ```swift
    /// struct CityCount: Decodable { var city: String?; var n: Int }
    /// let counts = try rows.decode(CityCount.self)
    /// ```
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> [T] {
        try rows.map { try $0.decode(type) }
    }
}
