import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Model versions: a new property adds a column without touching data; an older model's
/// install keeps the newer one's columns and fields.
@Suite struct SchemaEvolutionTests {
    @Test func aNewPropertyAddsAColumnAndAnOlderInstallKeepsIt() async throws {
        let name = uniqueSchemaName()
        let v1 = try SyncSchema([NoteV1.Note.self], schema: name)
        let v2 = try SyncSchema([NoteV2.Note.self], schema: name)
        try await withInstalled(v1) { connection in
            let id = UUID()
            let clock = hlcNow()
            _ = try await connection.push(name, client: UUID(), json: """
                [{"mid": 1, "entity": "Note", "id": "\(id.uuidString)", "op": "upsert", "fields": {"title": "old"}, "clocks": {"title": "\(clock)"}}]
                """)
            try await v2.install(on: connection, logger: connection.logger)
            #expect(try await connection.value("SELECT title || '/' || coalesce(pinned::text, 'null') FROM \(name).\"Note\"") == "old/null")
            let v2Client = UUID()
            let pushed = try await connection.push(name, client: v2Client, json: """
                [{"mid": 1, "entity": "Note", "id": "\(id.uuidString)", "op": "upsert", "fields": {"pinned": true}, "clocks": {"pinned": "\(clock + 1)"}}]
                """)
            #expect((pushed["rejected"] as? [Any])?.isEmpty == true)

            // An older replica installs its model again: nothing of v2 goes away.
            try await v1.install(on: connection, logger: connection.logger)
            #expect(try await connection.value("SELECT title || '/' || pinned::text FROM \(name).\"Note\"") == "old/true")
            let pulled = try await connection.pullAll(name, "Note")
            let fields = try #require(pulled.changes.last?["fields"] as? [String: Any])
            #expect(fields["pinned"] as? Bool == true)
            #expect(fields["title"] as? String == "old")
        }
    }

    @Test func aFieldTheServerDoesNotHaveFailsThePushAndAdvancesNothing() async throws {
        let name = uniqueSchemaName()
        try await withInstalled(try SyncSchema([NoteV1.Note.self], schema: name)) { connection in
            let client = UUID()
            do {
                _ = try await connection.push(name, client: client, json: """
                    [{"mid": 1, "entity": "Note", "id": "\(UUID().uuidString)", "op": "upsert", "fields": {"pinned": true}, "clocks": {"pinned": "1"}}]
                    """)
                Issue.record("the push should have failed")
            } catch let failure as SQLFailure {
                #expect(failure.code == "CF001")
                #expect(failure.message.contains("Note.pinned"))
            }
            #expect(try await connection.value("SELECT count(*)::text FROM \(name).clients WHERE last_mid > 0") == "0")
        }
    }
}
