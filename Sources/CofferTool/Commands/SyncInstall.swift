import ArgumentParser
import Coffer
import CofferSync
import Foundation
import PostgresNIO

/// `coffer sync install DIR --url postgres://...`: creates or updates the server schema of
/// the store's synced entities (idempotent and additive, like `SyncSchema.install`).
struct SyncInstall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Create or update the server schema of the store's @Sync entities (idempotent, additive).")

    @Argument(help: "The store directory.")
    var directory: String

    @Option(help: "The server, e.g. postgres://user:password@host:5432/database?sslmode=verify-full&sslrootcert=root.crt (sslmode: disable, prefer (the default), require, verify-ca, verify-full).")
    var url: String?

    @Option(help: "The PostgreSQL schema to install into.")
    var schema = "coffer"

    @Option(help: "A database role that may then sync through the schema under row-level security (repeatable; the README's \"Sharing\").")
    var grant: [String] = []

    @Flag(help: "Print the install script (for psql -v ON_ERROR_STOP=1 -f) instead of connecting.")
    var sql = false

    func run() async throws {
        let store = try openStoreOrFail(directory)
        let server = try failing { try SyncSchema(syncedEntitiesOf: store, schema: schema) }
        try store.close()
        guard !server.tables.isEmpty else {
            throw toolFailure("\(directory) has no synced entities (mark entity types @Sync and write through them first)")
        }
        if sql {
            print(server.installSQL, terminator: "")
            for role in grant { print(server.grantStatement(to: role) + ";") }
            return
        }
        guard let url else { throw toolFailure("give the server with --url postgres://..., or --sql to print the script") }
        let target = try failing { try PostgresURL(url) }
        try await withServer(target) { connection in
            try await server.install(on: connection, logger: connection.logger)
            for role in grant {
                try await connection.query(PostgresQuery(unsafeSQL: server.grantStatement(to: role)), logger: connection.logger)
            }
        }
        print("Installed schema \"\(schema)\" on \(target.display):")
        for table in server.tables {
            let unique = table.columns.filter(\.isUnique).map(\.name)
            let note = unique.isEmpty ? "" : ", unique: " + unique.joined(separator: ", ")
            print("  \(table.entity): \(table.columns.count) column\(table.columns.count == 1 ? "" : "s")\(note)")
        }
        for role in grant { print("Granted role \(role) the use of schema \"\(schema)\".") }
    }
}
