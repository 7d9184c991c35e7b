import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Writes made with plain SQL (another service, an admin) are stamped by the triggers and
/// pulled like pushed ones.
@Suite struct CaptureTests {
    @Test func plainSQLInsertUpdateAndDeleteArePulled() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let id = try #require(try await connection.value("INSERT INTO \(s).\"Note\" (title) VALUES ('from sql') RETURNING sync_id::text"))
            let first = try await connection.pullAll(s, "Note")
            #expect(first.changes.count == 1)
            #expect((first.changes.first?["fields"] as? [String: Any])?["title"] as? String == "from sql")
            #expect(((first.changes.first?["clocks"] as? [String: Any])?["title"]) != nil)

            try await connection.run("UPDATE \(s).\"Note\" SET pinned = true WHERE sync_id = '\(id)'")
            let second = try await connection.pullAll(s, "Note", cursor: first.cursor)
            #expect(second.changes.count == 1)
            #expect((second.changes.first?["fields"] as? [String: Any])?["pinned"] as? Bool == true)
            let clocks = try #require(second.changes.first?["clocks"] as? [String: Any])
            #expect(Set(clocks.keys) == ["title", "pinned"])

            try await connection.run("DELETE FROM \(s).\"Note\" WHERE sync_id = '\(id)'")
            let third = try await connection.pullAll(s, "Note", cursor: second.cursor)
            #expect(third.changes.map { $0["op"] as? String } == ["delete"])
            #expect((third.changes.first?["id"] as? String) == id)

            // A plain-SQL write after a client's one wins by the server's clock.
            let client = UUID()
            let old = hlcNow(plus: -60_000)
            let other = UUID()
            _ = try await connection.push(s, client: client, json: """
                [{"mid": 1, "entity": "Note", "id": "\(other.uuidString)", "op": "upsert", "fields": {"title": "client"}, "clocks": {"title": "\(old)"}}]
                """)
            try await connection.run("UPDATE \(s).\"Note\" SET title = 'admin' WHERE sync_id = '\(other.uuidString)'")
            _ = try await connection.push(s, client: client, json: """
                [{"mid": 2, "entity": "Note", "id": "\(other.uuidString)", "op": "upsert", "fields": {"title": "stale"}, "clocks": {"title": "\(old + 1)"}}]
                """)
            #expect(try await connection.value("SELECT title FROM \(s).\"Note\" WHERE sync_id = '\(other.uuidString)'") == "admin")
        }
    }

    @Test func truncateIsRefused() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            await #expect(throws: SQLFailure.self) {
                try await connection.run("TRUNCATE \(schema.schemaName).\"Note\"")
            }
        }
    }
}
