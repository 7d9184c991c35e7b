import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Every write to an entity table (a push or plain SQL, deletes and tombstones included)
/// notifies `<schema>_changes` with the entity's name, so a listening replica pulls soon.
@Suite struct WakeUpTests {
    /// The payloads a listener received so far.
    actor Received {
        private(set) var payloads: [String] = []
        func append(_ payload: String) { payloads.append(payload) }
        func clear() { payloads = [] }
    }

    /// Waits up to ten seconds for `payload`, then empties the list.
    static func expectWake(_ received: Received, _ payload: String, _ what: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if await received.payloads.contains(payload) {
                await received.clear()
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(what) did not notify \"\(payload)\" (received \(await received.payloads))")
    }

    @Test func aPushAndPlainSQLWritesEachWakeAListener() async throws {
        let schema = try SyncSchema([NoteV2.Note.self, Tagged.Tag.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let t = hlcNow()
        let (note, missing) = (UUID(), UUID())
        try await withInstalled(schema) { connection in
            let listener = try await PostgresCluster.shared.connect()
            do {
                try await listener.listen(on: "\(s)_changes") { notifications in
                    let received = Received()
                    let reader = Task {
                        for try await notification in notifications { await received.append(notification.payload) }
                    }
                    defer { reader.cancel() }
                    _ = try await connection.push(s, client: UUID(), json: """
                        [{"mid": 1, "entity": "Note", "id": "\(note.uuidString)", "op": "upsert", "create": true, "fields": {"title": "a"}, "clocks": {"title": "\(t)"}}]
                        """)
                    try await Self.expectWake(received, "Note", "a push")
                    try await connection.run("INSERT INTO \(s).\"Tag\" (label) VALUES ('from sql')")
                    try await Self.expectWake(received, "Tag", "a plain-SQL insert")
                    try await connection.run("UPDATE \(s).\"Note\" SET title = 'b'")
                    try await Self.expectWake(received, "Note", "a plain-SQL update")
                    try await connection.run("DELETE FROM \(s).\"Tag\"")
                    try await Self.expectWake(received, "Tag", "a plain-SQL delete")
                    // A delete of an object the server never had leaves only a tombstone.
                    _ = try await connection.push(s, client: UUID(), json: """
                        [{"mid": 1, "entity": "Note", "id": "\(missing.uuidString)", "op": "delete", "hlc": "\(t)"}]
                        """)
                    try await Self.expectWake(received, "Note", "a tombstone")
                }
            } catch {
                try? await listener.close()
                throw error
            }
            try await listener.close()
        }
    }
}
