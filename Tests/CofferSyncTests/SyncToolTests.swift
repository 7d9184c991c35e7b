import Coffer
import CofferSync
import Foundation
import PostgresNIO
import Testing

/// `coffer sync install` and `coffer sync status`, run as a user runs them (the built tool
/// beside the test bundle) against the private cluster.
@Suite struct SyncToolTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs the built `coffer` with `arguments`, its output collected in files (no pipe to fill).
    static func coffer(_ arguments: [String]) throws -> Run {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let tool = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("coffer").path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw SQLToolMissing(path: tool)
        }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-tool-" + UUID().uuidString)
        let (outputPath, errorsPath) = (base.path + ".out", base.path + ".err")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorsPath)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Run(status: process.terminationStatus,
                   output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
                   errors: (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? "")
    }

    struct SQLToolMissing: Error, CustomStringConvertible {
        let path: String
        var description: String { "the coffer tool is not built at \(path) (swift build builds it)" }
    }

    @Test func installBuildsTheSchemaFromTheCatalogAndStatusShowsTheServerState() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-tool-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store(directory: directory)
            try store.box(for: Chore.self).put(Chore(title: "sweep", code: "c1"))
            try store.box(for: NoteV2.Note.self).put(NoteV2.Note(title: "not synced"))
            try store.close()
        }
        let endpoint = try await PostgresCluster.shared.endpoint()
        let url = "postgres://\(endpoint.user)@127.0.0.1:\(endpoint.port)/\(endpoint.database)"
        let schema = uniqueSchemaName("tool")

        let install = try Self.coffer(["sync", "install", directory, "--url", url, "--schema", schema])
        #expect(install.status == 0, "\(install.errors)")
        #expect(install.output.contains("Chore: 3 columns, unique: code"), "\(install.output)")
        #expect(try Self.coffer(["sync", "install", directory, "--url", url, "--schema", schema]).status == 0, "installing twice")

        try await withConnection { connection in
            do {
                #expect(try await connection.value("""
                    SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables
                    WHERE table_schema = '\(schema)' AND table_name NOT IN ('meta', 'entities', 'fields', 'tombstones', 'clients', 'rejections', 'scopes', 'moves')
                    """) == "Chore", "only the synced entity")
                #expect(try await connection.value("SELECT count(*)::text FROM pg_indexes WHERE schemaname = '\(schema)' AND indexname = 'Chore_code_unique'") == "1")
                let t = hlcNow()
                _ = try await connection.push(schema, client: UUID(), json: """
                    [{"mid": 1, "entity": "Chore", "id": "\(UUID().uuidString)", "op": "upsert", "create": true, "fields": {"title": "t", "code": "c9", "done": false}, "clocks": {"title": "\(t)", "code": "\(t)", "done": "\(t)"}},
                     {"mid": 2, "entity": "Chore", "id": "\(UUID().uuidString)", "op": "upsert", "create": true, "fields": {"code": "c9"}, "clocks": {"code": "\(t)"}}]
                    """)
                let status = try Self.coffer(["sync", "status", directory, "--url", url, "--schema", schema])
                #expect(status.status == 0, "\(status.errors)")
                for expected in ["Chore: 1 rows, 0 tombstones", "Clients: 1", "last mid 2", "1 rejections", "Rejections: 1",
                                 "This store: 1 change waiting to be pushed"] {
                    #expect(status.output.contains(expected), "\(expected) in \(status.output)")
                }
                try await connection.run("DROP SCHEMA \"\(schema)\" CASCADE")
            } catch {
                try? await connection.run("DROP SCHEMA \"\(schema)\" CASCADE")
                throw error
            }
        }

        // The script for psql, without a server.
        let script = try Self.coffer(["sync", "install", directory, "--sql", "--schema", "elsewhere"])
        #expect(script.status == 0 && script.output.contains(#"CREATE TABLE IF NOT EXISTS "elsewhere"."Chore""#))
        // Clear failures: no server there, a schema never installed.
        let refused = try Self.coffer(["sync", "status", directory, "--url", "postgres://nobody@127.0.0.1:1/none"])
        #expect(refused.status == 1 && refused.errors.contains("cannot connect"), "\(refused.errors)")
        let missing = try Self.coffer(["sync", "status", directory, "--url", url, "--schema", "never_installed"])
        #expect(missing.status == 1 && missing.errors.contains("never_installed"), "\(missing.errors)")
    }

    @Test func installRefusesAStoreWithoutSyncedEntities() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-tool-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store(directory: directory)
            try store.box(for: NoteV2.Note.self).put(NoteV2.Note(title: "plain"))
            try store.close()
        }
        let run = try Self.coffer(["sync", "install", directory, "--sql"])
        #expect(run.status == 1 && run.errors.contains("no synced entities"), "\(run.errors)")
    }
}
