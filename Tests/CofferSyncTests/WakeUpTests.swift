import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Every write to an entity table (a push or plain SQL, deletes and tombstones included)
/// notifies `<schema>_changes` with the entity's name and a slash, so a listening replica
/// pulls soon; a scope with a wake key adds the key of each row written, before and after,
/// and a move notifies the bare entity name.
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

    /// Runs `body` with what a LISTEN on the schema's channel receives.
    static func listening(_ s: String, _ body: (Received) async throws -> Void) async throws {
        let listener = try await PostgresCluster.shared.connect()
        do {
            try await listener.listen(on: "\(s)_changes") { notifications in
                let received = Received()
                let reader = Task {
                    for try await notification in notifications { await received.append(notification.payload) }
                }
                defer { reader.cancel() }
                try await body(received)
            }
        } catch {
            try? await listener.close()
            throw error
        }
        try await listener.close()
    }

    /// The wake key of the room `room` as the server computes it, and as a pull of the
    /// room's subscription gives it.
    static func roomKey(_ connection: PostgresConnection, _ s: String, _ room: String?) async throws -> String {
        let literal = room.map { "'\($0)'" } ?? "NULL"
        return try await Self.value(connection, "SELECT \(s)._wake_key('Post', 'room', \(literal))") ?? ""
    }

    /// The first column of the first row `sql` returns.
    static func value(_ connection: PostgresConnection, _ sql: String) async throws -> String? {
        try await connection.rows(sql).first?.first ?? nil
    }

    @Test func aScopeWithAWakeKeyNotifiesTheKeysOfTheRowsWritten() async throws {
        try await ScopeTests.withAlice { connection, s, _ in
            let (a, b) = (try await Self.roomKey(connection, s, "a"), try await Self.roomKey(connection, s, "b"))
            #expect(a.hasPrefix("Post/") && a.count == 37 && a != b)
            try await Self.listening(s) { received in
                let id = try await ScopeTests.post(connection, s, room: "a", body: "one")
                try await Self.expectWakes(received, ["Post/", a], "an insert in room a")
                try await connection.run(#"UPDATE \#(s)."Post" SET room = 'b' WHERE sync_id = '\#(id.uuidString)'"#)
                // The row left a and entered b; the watched column records a move too.
                try await Self.expectWakes(received, ["Post/", a, b, "Post"], "a move from room a to b")
                try await connection.run(#"UPDATE \#(s)."Post" SET body = 'two'"#)
                let update = try await Self.expectWakes(received, ["Post/", b], "an update in room b")
                #expect(!update.contains(a))
                try await connection.run(#"DELETE FROM \#(s)."Post""#)
                try await Self.expectWakes(received, ["Post/", b], "a delete in room b")
                try await connection.run(#"INSERT INTO \#(s)."Post" (room) VALUES (NULL)"#)
                try await Self.expectWakes(received, ["Post/", try await Self.roomKey(connection, s, nil)], "a row without a room")
                // A statement that writes more than 1000 keys notifies the entity instead.
                try await connection.run(#"INSERT INTO \#(s)."Post" (room) SELECT 'r' || i FROM generate_series(1, 1001) i"#)
                let many = try await Self.expectWakes(received, ["Post/", "Post"], "an insert in 1001 rooms")
                #expect(many.count == 2)
                // A membership change moves rows of the whole-table scope: every puller wakes.
                try await ScopeTests.member(connection, s, "someone", of: "a", true)
                try await Self.expectWakes(received, ["Post"], "a membership change")
            }
            // The pull of a subscription gives the key its waits name; the whole table and a
            // scope without a wake key give the entity's.
            let page = try await Self.value(connection, #"SELECT \#(s).coffer_pull('Post', '0', 10, 1000000, 'room', '{"room": "a"}')->>'wake'"#)
            #expect(page == a)
            let whole = try await Self.value(connection, #"SELECT \#(s).coffer_pull('Post', '0', 10)->>'wake'"#)
            #expect(whole == "Post/")
            let topic = try await Self.value(connection, #"SELECT \#(s).coffer_pull('Topic', '0', 10, 1000000, 'named', '{"name": "x"}')->>'wake'"#)
            #expect(topic == "Topic/")
        }
    }

    /// Waits up to ten seconds for every payload of `payloads`, then empties the list;
    /// returns what it held.
    @discardableResult
    static func expectWakes(_ received: Received, _ payloads: Set<String>, _ what: String) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let seen = await received.payloads
            if payloads.isSubset(of: Set(seen)) {
                await received.clear()
                return seen
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(what) did not notify \(payloads.sorted()) (received \(await received.payloads))")
        return []
    }

    /// A wake key's row expression runs in every write of its entity, as the writer: when it
    /// fails, the write fails. In a push that is a rejected change and the batch goes on; a
    /// plain SQL statement gets the error.
    @Test func aWakeExpressionThatFailsRejectsThatChangeAlone() async throws {
        try await ScopeTests.withAlice { connection, s, _ in
            // 1 / length(name): a division by zero for an empty name, planned without error.
            try await connection.run("""
                SELECT \(s).coffer_define_scope('Topic', 'named', 'r.name = scope.parameters ->> ''name''', '{}', '{}',
                                                 '(1 / length(r.name))::text', '(1 / length(scope.parameters ->> ''name''))::text')
                """)
            let t = hlcNow()
            let (empty, named) = (UUID(), UUID())
            let reply = try await connection.push(s, client: UUID(), [
                ["mid": 1, "entity": "Topic", "id": empty.uuidString, "op": "upsert", "create": true,
                 "fields": ["name": ""], "clocks": ["name": "\(t)"]],
                ["mid": 2, "entity": "Topic", "id": named.uuidString, "op": "upsert", "create": true,
                 "fields": ["name": "x"], "clocks": ["name": "\(t)"]],
            ])
            let rejected = try #require(reply["rejected"] as? [[String: Any]], "\(reply)")
            #expect(rejected.count == 1)
            #expect(rejected.first?["mid"] as? Int == 1)
            #expect((rejected.first?["reason"] as? String)?.contains("division by zero") == true, "\(rejected)")
            #expect(try await connection.value(#"SELECT string_agg(name, ',') FROM \#(s)."Topic""#) == "x")
            do {
                try await connection.run(#"INSERT INTO \#(s)."Topic" (name) VALUES ('')"#)
                Issue.record("a plain SQL write whose wake key fails was stored")
            } catch {
                #expect(String(describing: error).contains("division by zero"), "\(error)")
            }
            #expect(try await connection.value(#"SELECT count(*)::text FROM \#(s)."Topic""#) == "1")
        }
    }

    @Test func aPushAndPlainSQLWritesEachWakeAListener() async throws {
        let schema = try SyncSchema([NoteV2.Note.self, Tagged.Tag.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let t = hlcNow()
        let (note, missing) = (UUID(), UUID())
        try await withInstalled(schema) { connection in
            try await Self.listening(s) { received in
                _ = try await connection.push(s, client: UUID(), json: """
                    [{"mid": 1, "entity": "Note", "id": "\(note.uuidString)", "op": "upsert", "create": true, "fields": {"title": "a"}, "clocks": {"title": "\(t)"}}]
                    """)
                try await Self.expectWake(received, "Note/", "a push")
                try await connection.run("INSERT INTO \(s).\"Tag\" (label) VALUES ('from sql')")
                try await Self.expectWake(received, "Tag/", "a plain-SQL insert")
                try await connection.run("UPDATE \(s).\"Note\" SET title = 'b'")
                try await Self.expectWake(received, "Note/", "a plain-SQL update")
                try await connection.run("DELETE FROM \(s).\"Tag\"")
                try await Self.expectWake(received, "Tag/", "a plain-SQL delete")
                // A delete of an object the server never had leaves only a tombstone.
                _ = try await connection.push(s, client: UUID(), json: """
                    [{"mid": 1, "entity": "Note", "id": "\(missing.uuidString)", "op": "delete", "hlc": "\(t)"}]
                    """)
                try await Self.expectWake(received, "Note/", "a tombstone")
            }
        }
    }
}
