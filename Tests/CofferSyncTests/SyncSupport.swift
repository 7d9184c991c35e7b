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
        do {
            var result: [[String?]] = []
            for try await row in try await query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                var columns: [String?] = []
                for cell in row {
                    columns.append(try cell.decode(String?.self))
                }
                result.append(columns)
            }
            return result
        } catch let error as PSQLError {
            throw SQLFailure(error: error)
        }
    }

    /// The single text value `sql` returns.
    func value(_ sql: String) async throws -> String? {
        let rows = try await rows(sql)
        return rows.first?.first ?? nil
    }

    /// Runs `sql` and ignores what it returns.
    func run(_ sql: String) async throws {
        do {
            try await query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch let error as PSQLError {
            throw SQLFailure(error: error)
        }
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

    /// Every change of `entity` after `cursor` that committed before this call, page by page.
    ///
    /// The horizon is the cluster's: a transaction another test holds open keeps the pull
    /// below it, so this pages until the cursor passes every transaction id assigned before
    /// the call (`pg_snapshot_xmax`), for at most 30 seconds.
    func pullAll(_ schema: String, _ entity: String, cursor: String = "0", limit: Int = 100)
        async throws -> (changes: [[String: Any]], cursor: String)
    {
        let target = try #require(UInt64(try await value("SELECT pg_snapshot_xmax(pg_current_snapshot())::text") ?? ""))
        let deadline = Date().addingTimeInterval(30)
        var cursor = cursor
        var changes: [[String: Any]] = []
        for _ in 0..<100_000 {
            let page = try await pull(schema, entity, cursor: cursor, limit: limit)
            changes += page["changes"] as? [[String: Any]] ?? []
            cursor = try #require(page["cursor"] as? String)
            // The position is the cursor's text before a "@<floor>" suffix.
            let position = cursor.split(separator: "@").first.map(String.init) ?? cursor
            if page["more"] as? Bool != true, let reached = UInt64(position), reached >= target { return (changes, cursor) }
            guard Date() < deadline else { break }
            if page["more"] as? Bool != true { try await Task.sleep(for: .milliseconds(5)) }
        }
        Issue.record("pull did not reach the transactions committed before it in time")
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
@discardableResult
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

extension PostgresConnection {
    /// `coffer_push(client, batch)` with the batch as JSON text (so that a test controls every
    /// digit of every number), decoded.
    func push(_ schema: String, client: UUID, json: String) async throws -> [String: Any] {
        let text = try await value("SELECT \(schema).coffer_push('\(client.uuidString)', \(literal(json))::jsonb)::text")
        return try decodeObject(text)
    }
}

/// An HLC `milliseconds` after the Unix epoch (logical counter 0).
func hlc(milliseconds: UInt64) -> UInt64 { milliseconds << 16 }

/// The HLC of now plus `offset` milliseconds.
func hlcNow(plus offset: Int64 = 0) -> UInt64 {
    hlc(milliseconds: UInt64(Int64(Date().timeIntervalSince1970 * 1000) + offset))
}

/// The final state a puller reaches by applying `changes` in order: sync id -> fields.
func replay(_ changes: [[String: Any]]) -> [String: [String: Any]] {
    var state: [String: [String: Any]] = [:]
    for change in changes {
        guard let id = change["id"] as? String else { continue }
        if change["op"] as? String == "delete" {
            state[id] = nil
        } else {
            state[id] = change["fields"] as? [String: Any] ?? [:]
        }
    }
    return state
}

/// A server error with the server's message (PSQLError's description hides it).
struct SQLFailure: Error, CustomStringConvertible {
    let error: PSQLError

    /// The server's message, or the error as postgres-nio reflects it.
    var message: String { error.serverInfo?[.message] ?? String(reflecting: error) }

    /// The SQLSTATE, e.g. "CF001", also of a server error that made postgres-nio close the
    /// connection (it does for SQLSTATE class 28).
    var code: String? { error.serverInfo?[.sqlState] ?? (error.underlying as? PSQLError)?.serverInfo?[.sqlState] }

    var description: String { "\(code ?? "-"): \(message) \(error.serverInfo?[.locationContext] ?? "")" }
}
