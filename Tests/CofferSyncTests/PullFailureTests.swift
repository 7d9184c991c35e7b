@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Two synced entities, pulled in this order: one whose page cannot be applied must not
/// keep the other from pulling.
enum PullFailureModels {
    @Sync
    struct Ledger: Entity {
        var id: Id = 0
        var name: String   // no default: every ledger needs one
        var amount = 0
    }

    @Sync
    struct Badge: Entity {
        var id: Id = 0
        var label = ""
    }

    /// A fresh schema of ledgers and badges, a store in a temporary directory and a
    /// transport to the schema, for `body`; the store is removed afterwards.
    struct Fixture {
        let connection: PostgresConnection
        let schema: String
        let temporary: TemporaryStore
        let transport: PostgresTransport
        let ledgerTable = Ledger._cofferSchema.storedName
        let badgeTable = Badge._cofferSchema.storedName
    }

    static func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let schema = try SyncSchema([Ledger.self, Badge.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            try await body(Fixture(connection: connection, schema: schema.schemaName, temporary: temporary,
                                   transport: try await testTransport(schema: schema.schemaName)))
        }
    }
}

/// Pull failures are per entity and visible: an entity whose page cannot be applied is
/// reported and retried while the others pull; a failing push still lets the pull run
/// (fields with newer unacknowledged local changes keep them); a page that says there is
/// more without moving its cursor is a protocol error, not the end of the pull.
@Suite(.timeLimit(.minutes(2))) struct PullFailureTests {
    @Test func anUnappliablePageStopsOnlyItsEntity() async throws {
        typealias Ledger = PullFailureModels.Ledger
        typealias Badge = PullFailureModels.Badge
        try await PullFailureModels.withFixture { fixture in
            let (connection, s, temporary, transport) = (fixture.connection, fixture.schema, fixture.temporary, fixture.transport)
            let (ledgerTable, badgeTable) = (fixture.ledgerTable, fixture.badgeTable)
            let replica = try SyncReplica(store: temporary.store, entities: [Ledger.self, Badge.self], transport: transport,
                                          options: .init(pullPageSize: 5))
            // Plain SQL leaves a ledger without the name every replica needs, then writes a
            // good ledger after it, and a badge.
            let bad = UUID()
            try await connection.run("INSERT INTO \(s).\"\(ledgerTable)\" (sync_id, amount) VALUES ('\(bad.uuidString)', 1)")
            try await connection.run("INSERT INTO \(s).\"\(ledgerTable)\" (sync_id, name, amount) VALUES (gen_random_uuid(), 'good', 2)")
            try await connection.run("INSERT INTO \(s).\"\(badgeTable)\" (sync_id, label) VALUES (gen_random_uuid(), 'gold')")

            let ledgers = temporary.store.box(for: Ledger.self)
            let badges = temporary.store.box(for: Badge.self)
            // (Another test's open transaction may hold the horizon back, and it may pass the
            // badge before the ledger pull sees the bad row: retry until both happened.)
            #expect(try await eventually {
                do { try await replica.syncNow() } catch {}
                return try badges.all().map(\.label) == ["gold"] && !replica.currentStatus.pullFailures.isEmpty
            }, "the badge is pulled although the ledger page cannot be applied")
            let status = replica.currentStatus
            let failure = try #require(status.pullFailures.first)
            #expect(status.pullFailures.count == 1)
            #expect(failure.entity == ledgerTable)
            guard case CofferError.invalidSyncPage(let entity, let field, _)? = failure.error as? CofferError else {
                Issue.record("expected invalidSyncPage, got \(failure.error)")
                return
            }
            #expect(entity == ledgerTable && field == "name")
            #expect(status.lastError != nil)
            #expect(try ledgers.all().isEmpty, "nothing of the bad page was applied, and no row was passed over")

            // Fixed on the server: the next pass pulls both ledgers and the failure goes.
            try await connection.run("UPDATE \(s).\"\(ledgerTable)\" SET name = 'fixed' WHERE sync_id = '\(bad.uuidString)'")
            #expect(try await eventually {
                do { try await replica.syncNow() } catch {}
                return try Set(ledgers.all().map(\.name)) == ["fixed", "good"]
            })
            #expect(replica.currentStatus.pullFailures.isEmpty)
            #expect(replica.currentStatus.lastError == nil)
            await transport.close()
        }
    }

    @Test func aFailingPushLetsThePullRunWithoutLosingLocalChanges() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let a = try await ReplicaNode(index: 0, schema: s, log: WriteLog())
            let b = try await ReplicaNode(index: 1, schema: s, log: WriteLog())
            defer { a.temporary.cleanUp(); b.temporary.cleanUp() }
            let scripted = ScriptedTransport(a.replica.transport)
            let replica = try SyncReplica(store: a.temporary.store, entities: [Replicated.Card.self], transport: scripted)

            var card = Replicated.Card(title: "first", count: 1)
            try a.cards.put(&card)
            try await replica.syncNow()
            let syncId = try #require(try a.cards.syncId(of: card.id))
            #expect(try await eventually {
                try await b.replica.syncNow()
                return try b.cards.all().count == 1
            })

            // B changes the title and the count; later A changes both (pushes fail from
            // now); later still B changes the count again and the note.
            var theirs = try #require(try b.cards.all().first)
            theirs.title = "theirs"
            theirs.count = 7
            try b.cards.put(&theirs)
            try await b.replica.syncNow()
            try await Task.sleep(for: .milliseconds(5))
            scripted.script.withLock { $0.failPushes = true }
            card.title = "mine"
            card.count = 100
            try a.cards.put(&card)
            try await Task.sleep(for: .milliseconds(5))
            theirs.count = 200
            theirs.note = "later"
            try b.cards.put(&theirs)
            try await b.replica.syncNow()

            // A's push fails, its pull runs: B's newer fields arrive, A's newer title stays.
            #expect(try await eventually {
                do { try await replica.syncNow() } catch {}
                return try a.cards.get(card.id)?.note == "later"
            }, "the pull ran although the push failed")
            #expect(replica.currentStatus.lastError is SyncTransportError)
            let pulled = try #require(try a.cards.get(card.id))
            #expect(pulled.title == "mine", "an unacknowledged newer local change is kept")
            #expect(pulled.count == 200, "a newer server value wins over an older unacknowledged local change")

            // Pushes work again: server and replicas converge on the winners.
            scripted.script.withLock { $0.failPushes = false }
            try await replica.syncNow()
            let row = try await connection.rows("SELECT title, count::text, done::text, note FROM \(s).\"Card\" WHERE sync_id = '\(syncId.uuidString)'")
            #expect(row.first == ["mine", "200", "false", "later"])
            #expect(try await eventually {
                try await b.replica.syncNow()
                return try b.cards.get(theirs.id)?.title == "mine"
            })
            await scripted.close()
            await b.replica.transport.close()
        }
    }

    @Test func aPageThatSaysMoreWithoutMovingItsCursorIsAnError() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { _ in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let scripted = ScriptedTransport(try await testTransport(schema: s))
            let replica = try SyncReplica(store: temporary.store, entities: [Replicated.Card.self], transport: scripted)
            scripted.script.withLock { script in
                script.rewrite = { _, cursor, _ in Data(#"{"changes": [], "cursor": "\#(cursor)", "more": true}"#.utf8) }
            }
            let thrown = await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            guard case .malformedReply(let operation, _)? = thrown else {
                Issue.record("expected malformedReply, got \(String(describing: thrown))")
                return
            }
            #expect(operation == "pull Card")
            let status = replica.currentStatus
            #expect(status.pullFailures.map(\.entity) == ["Card"])
            #expect(status.lastError != nil)
            #expect(status.lastSyncedAt == nil, "the pass did not count as in step")

            // Retried: a second failure counts, and a good page clears it.
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(replica.currentStatus.pullFailures.first?.attempts == 2)
            scripted.script.withLock { $0.rewrite = nil }
            try await replica.syncNow()
            #expect(replica.currentStatus.pullFailures.isEmpty)
            await scripted.close()
        }
    }
}
