@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The replica works while the server does: it asks for the next page before it applies a
/// page, and takes the next batch before the server answered the one on its way. Neither
/// changes what ends up applied: a page that fails to apply leaves its cursor where it was,
/// and a batch whose push fails is sent again with everything taken after it.
@Suite(.timeLimit(.minutes(2))) struct PipeliningTests {
    @Test func theNextPageIsAskedForBeforeAPageIsApplied() async throws {
        typealias Ledger = PullFailureModels.Ledger
        let schema = try SyncSchema([Ledger.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let table = Ledger._cofferSchema.storedName
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let scripted = ScriptedTransport(try await testTransport(schema: s))
            let replica = try SyncReplica(store: temporary.store, entities: [Ledger.self], transport: scripted,
                                          options: .init(pullPageSize: 1))
            // Plain SQL leaves a ledger without the name every replica needs, then writes a
            // good one: the first page (one row each) cannot be applied.
            let bad = UUID()
            try await connection.run("INSERT INTO \(s).\"\(table)\" (sync_id, amount) VALUES ('\(bad.uuidString)', 1)")
            try await connection.run("INSERT INTO \(s).\"\(table)\" (sync_id, name, amount) VALUES (gen_random_uuid(), 'good', 2)")
            let ledgers = temporary.store.box(for: Ledger.self)

            // The page after the bad one (its cursor ends with the bad row's id) was asked for
            // before the bad one was applied. (Another test's open transaction may hold the
            // horizon back: retry until the rows are visible.)
            let afterBad = "/" + bad.uuidString.lowercased()
            #expect(try await eventually {
                do { try await replica.syncNow() } catch {}
                return scripted.script.withLock { $0.pulls.contains { $0.cursor.hasSuffix(afterBad) } }
            }, "the next page was requested while the first one was being applied")
            #expect(try ledgers.all().isEmpty, "the failing page applied nothing, and the page fetched ahead was dropped")
            #expect(try !temporary.store.syncCursor(entity: table, stream: scripted.stream).hasSuffix(afterBad),
                    "the cursor did not move past the failing page")
            #expect(replica.currentStatus.pullFailures.map(\.entity) == [table])

            // Fixed on the server: the next pass pulls both ledgers from the stored cursor.
            try await connection.run("UPDATE \(s).\"\(table)\" SET name = 'fixed' WHERE sync_id = '\(bad.uuidString)'")
            #expect(try await eventually {
                do { try await replica.syncNow() } catch {}
                return try Set(ledgers.all().map(\.name)) == ["fixed", "good"]
            })
            #expect(replica.currentStatus.pullFailures.isEmpty)
            await scripted.close()
        }
    }

    @Test func theNextBatchIsTakenWhileOneIsOnItsWay() async throws {
        typealias Card = Replicated.Card
        let schema = try SyncSchema([Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let scripted = ScriptedTransport(try await testTransport(schema: s))
            let replica = try SyncReplica(store: temporary.store, entities: [Card.self], transport: scripted,
                                          options: .init(pushBatchSize: 1))
            let cards = temporary.store.box(for: Card.self)
            var first = Card(title: "first", count: 1)
            var second = Card(title: "second", count: 2)
            try cards.put(&first)
            try cards.put(&second)
            #expect(try temporary.store.pendingSyncCount() == 2)

            // The first batch's push fails; the second batch was taken while it was on its
            // way, so a change of its object now gets an outbox entry of its own instead of
            // merging into the taken one.
            scripted.script.withLock { $0.failPushes = true }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            second.count = 3
            try cards.put(&second)
            #expect(try temporary.store.pendingSyncCount() == 3, "the second batch was taken before the first one's answer")

            // Nothing is lost or reordered: healed, the pass sends everything and the server
            // holds the last values.
            scripted.script.withLock { $0.failPushes = false }
            try await replica.syncNow()
            #expect(try temporary.store.pendingSyncCount() == 0)
            let rows = try await connection.rows("SELECT title, count::text FROM \(s).\"Card\" ORDER BY title")
            #expect(rows == [["first", "1"], ["second", "3"]])
            await scripted.close()
        }
    }
}
