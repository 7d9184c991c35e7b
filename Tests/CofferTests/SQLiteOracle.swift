import Coffer
import CSQLite
import Foundation

/// An in-memory SQLite database: the reference Smart SQL results are compared with. Only
/// the tests link SQLite.
final class SQLiteOracle {
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    private var database: OpaquePointer?

    init() throws {
        guard sqlite3_open(":memory:", &database) == SQLITE_OK else { throw Failure(message: "cannot open an in-memory SQLite database") }
    }

    deinit {
        sqlite3_close(database)
    }

    private var lastError: Failure { Failure(message: String(cString: sqlite3_errmsg(database))) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else { throw lastError }
    }

    /// Inserts rows into `table`, one value per column.
    func insert(_ table: String, columns: [String], rows: [[SQLValue]]) throws {
        let sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { throw lastError }
        defer { sqlite3_finalize(statement) }
        for row in rows {
            sqlite3_reset(statement)
            for (index, value) in row.enumerated() { try bind(statement, Int32(index + 1), value) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw lastError }
        }
    }

    private func bind(_ statement: OpaquePointer?, _ index: Int32, _ value: SQLValue) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(statement, index)
        case .integer(let number): code = sqlite3_bind_int64(statement, index, number)
        case .unsigned(let number): code = sqlite3_bind_double(statement, index, Double(number))
        case .real(let number): code = sqlite3_bind_double(statement, index, number)
        case .text(let text): code = sqlite3_bind_text(statement, index, text, -1, transient)
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
        }
        guard code == SQLITE_OK else { throw lastError }
    }

    /// The rows of a query, with positional parameters.
    func query(_ sql: String, parameters: [SQLValue] = []) throws -> [[SQLValue]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { throw lastError }
        defer { sqlite3_finalize(statement) }
        for (index, value) in parameters.enumerated() { try bind(statement, Int32(index + 1), value) }
        var rows: [[SQLValue]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return rows }
            guard code == SQLITE_ROW else { throw lastError }
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(statement, column)))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob(Data()) }
                    return .blob(Data(bytes: bytes, count: count))
                default: return .null
                }
            })
        }
    }
}
