import ArgumentParser
import Coffer
import CofferSync
import Foundation
import PostgresNIO

/// `coffer sync status DIR --url postgres://...`: the server's sync state (entities with rows
/// and tombstones, clients with their last mid and rejections) and the store's waiting
/// changes.
struct SyncStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the server's sync state (rows, tombstones, clients, rejections) and the store's pending changes.")

    @Argument(help: "The store directory.")
    var directory: String

    @Option(help: "The server, e.g. postgres://user:password@host:5432/database?sslmode=verify-full&sslrootcert=root.crt (sslmode: disable, prefer (the default), require, verify-ca, verify-full).")
    var url: String

    @Option(help: "The PostgreSQL schema sync is installed in.")
    var schema = "coffer"

    func run() async throws {
        let store = try openStoreOrFail(directory)
        let pending = try failing { try store.pendingSyncCount() }
        try store.close()
        let target = try failing { try PostgresURL(url) }
        let quoted = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let text = try await withServer(target) { connection -> String? in
            let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(quoted).coffer_status()::text"), logger: connection.logger)
            for try await row in rows { return try row.decode(String?.self) }
            return nil
        }
        guard let data = text?.data(using: .utf8),
              let status = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw toolFailure("coffer_status() in schema \(schema) returned no status")
        }
        print("Schema \"\(schema)\" on \(target.display) (format \(status["format"] ?? "?"), tombstones collected below txid \(status["gcFloor"] ?? "0"))")
        for entity in status["entities"] as? [[String: Any]] ?? [] {
            let oldest = (entity["oldestTombstone"] as? String).map { ", oldest \($0)" } ?? ""
            print("  \(entity["entity"] ?? "?"): \(entity["rows"] ?? 0) rows, \(entity["tombstones"] ?? 0) tombstones\(oldest)")
        }
        let clients = status["clients"] as? [[String: Any]] ?? []
        print("Clients: \(clients.count)")
        for client in clients {
            print("  \(client["client"] ?? "?"): last mid \(client["lastMid"] ?? 0), last seen \(client["lastSeen"] ?? "?"), \(client["rejections"] ?? 0) rejections")
        }
        print("Rejections: \(status["rejections"] ?? 0)")
        print("This store: \(pending) change\(pending == 1 ? "" : "s") waiting to be pushed")
    }
}
