import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A fresh schema name per test, so that tests running in parallel share the cluster's
/// database without seeing each other's tables.
func uniqueSchemaName(_ prefix: String = "t") -> String {
    prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
}

extension PostgresConnection {
    /// Runs `sql` (no parameters) and returns every row's columns as text (nil for NULL).
    func rows(_ sql: String) async throws -> [[String?]] {
        var result: [[String?]] = []
        for try await row in try await query(PostgresQuery(unsafeSQL: sql), logger: logger) {
            var columns: [String?] = []
            for cell in row {
                columns.append(try cell.decode(String?.self))
            }
            result.append(columns)
        }
        return result
    }

    /// The single text value `sql` returns.
    func value(_ sql: String) async throws -> String? {
        let rows = try await rows(sql)
        return rows.first?.first ?? nil
    }

    /// Runs `sql` and ignores what it returns.
    func run(_ sql: String) async throws {
        try await query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    /// `coffer_push(client, batch)` in `schema`, decoded.
    func push(_ schema: String, client: UUID, _ batch: [[String: Any]]) async throws -> [String: Any] {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: batch), as: UTF8.self)
        let text = try await value("SELECT \(schema).coffer_push('\(client.uuidString)', \(literal(json))::jsonb)::text")
        return try decodeObject(text)
    }

    /// `coffer_pull(entity, cursor, limit)` in `schema`, decoded.
    func pull(_ schema: String, _ entity: String, cursor: String, limit: Int) async throws -> [String: Any] {
        let text = try await value("SELECT \(schema).coffer_pull(\(literal(entity)), \(literal(cursor)), \(limit))::text")
        return try decodeObject(text)
    }

    /// Every change of `entity` from the start, page by page (at most `maxPages`).
    func pullAll(_ schema: String, _ entity: String, cursor: String = "0", limit: Int = 100, maxPages: Int = 10_000)
        async throws -> (changes: [[String: Any]], cursor: String)
    {
        var cursor = cursor
        var changes: [[String: Any]] = []
        for _ in 0..<maxPages {
            let page = try await pull(schema, entity, cursor: cursor, limit: limit)
            changes += page["changes"] as? [[String: Any]] ?? []
            cursor = try #require(page["cursor"] as? String)
            if page["more"] as? Bool != true { return (changes, cursor) }
        }
        Issue.record("pull did not finish in \(maxPages) pages")
        return (changes, cursor)
    }
}

func literal(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

func decodeObject(_ text: String?) throws -> [String: Any] {
    let data = Data(try #require(text).utf8)
    return try #require(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any])
}

/// Installs `schema` on a new connection, runs `body`, and drops the schema afterwards.
func withInstalled<T>(_ schema: SyncSchema, _ body: (PostgresConnection) async throws -> T) async throws -> T {
    try await withConnection { connection in
        try await schema.install(on: connection, logger: connection.logger)
        do {
            let result = try await body(connection)
            try await connection.run("DROP SCHEMA \"\(schema.schemaName)\" CASCADE")
            return result
        } catch {
            try? await connection.run("DROP SCHEMA \"\(schema.schemaName)\" CASCADE")
            throw error
        }
    }
}
