@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A replica whose cursor the server's tombstone collection passed (CF004) resyncs: it pulls
/// the entity again from "0", removes the objects the server no longer has (no outbox
/// entry), keeps its unpushed changes and pushes them, and resumes an interrupted resync.
@Suite(.timeLimit(.minutes(2))) struct ResyncTests {
    /// A replica of `Replicated.Card` over a scripted transport, on a store in `directory`.
    struct Node {
        let store: Store
        let transport: ScriptedTransport
        let replica: SyncReplica

        init(directory: String, schema: String) async throws {
            store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
            transport = ScriptedTransport(try await testTransport(schema: schema))
            replica = try SyncReplica(store: store, entities: [Replicated.Card.self], transport: transport,
                                      options: .init(pushBatchSize: 7, pullPageSize: 5))
        }

        var cards: Box<Replicated.Card> { store.box(for: Replicated.Card.self) }

        func titles() throws -> Set<String> { Set(try cards.all().map(\.title)) }

        func close() async throws {
            await transport.close()
            try store.close()
        }
    }

    /// Creates `count` cards on `node` and pushes them; returns their sync ids by title.
    func seed(_ node: Node, count: Int) async throws -> [String: UUID] {
        var ids: [String: UUID] = [:]
        for number in 0..<count {
            var card = Replicated.Card(title: "card \(number)", count: number)
            try node.cards.put(&card)
            let syncId = try #require(try node.cards.syncId(of: card.id))
            ids[card.title] = syncId
        }
        try await node.replica.syncNow()
        return ids
    }

    /// Deletes `titles` on the server with plain SQL and collects every tombstone.
    func deleteAndCollect(_ titles: [String], ids: [String: UUID], connection: PostgresConnection, schema s: String) async throws {
        for title in titles {
            let syncId = try #require(ids[title])
            try await connection.run("DELETE FROM \(s).\"Card\" WHERE sync_id = '\(syncId.uuidString)'")
        }
        let collected = try decodeObject(try await connection.value("SELECT \(s).coffer_gc(interval '0')::text"))
        #expect(collected["removed"] as? Int ?? 0 >= titles.count)
        // Another test's open transaction may hold the pull horizon back: wait until it
        // passes everything committed so far, so the resync's pull returns every live card.
        _ = try await connection.pullAll(s, "Card")
    }

    @Test func aResyncRemovesGhostsAndKeepsUnpushedChanges() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let node = try await Node(directory: directory, schema: s)
            let ids = try await seed(node, count: 6)

            // Offline: the server deletes three cards and collects their tombstones, while
            // the replica edits a card the server keeps and creates one.
            try await deleteAndCollect(["card 3", "card 4", "card 5"], ids: ids, connection: connection, schema: s)
            let keptSyncId = try #require(ids["card 0"])
            let keptId = try #require(try node.cards.id(forSyncId: keptSyncId))
            var kept = try #require(try node.cards.get(keptId))
            kept.title = "card 0 edited offline"
            try node.cards.put(&kept)
            try node.cards.put(Replicated.Card(title: "made offline"))

            // The push fails this time, so the resync runs with the changes unacknowledged.
            node.transport.script.withLock { $0.failPushes = true }
            await #expect(throws: SyncTransportError.self) { try await node.replica.syncNow() }
            let status = node.replica.currentStatus
            #expect(status.resyncs == 1)
            #expect(status.pullFailures.isEmpty, "the resync completed: \(status.pullFailures.map { "\($0.entity): \($0.error)" })")
            #expect(try node.titles() == ["card 0 edited offline", "card 1", "card 2", "made offline"],
                    "no ghosts, no unpushed change lost")
            #expect(Set(node.transport.script.withLock { $0.fetched }) == Set(["card 3", "card 4", "card 5"].compactMap { ids[$0] }),
                    "only the objects the resync did not see were fetched")
            #expect(try node.store.pendingSyncCount() == 2, "the outbox is kept")
            #expect(try node.store.isResyncing(entity: "Card", stream: node.transport.stream) == false)

            // Once the push goes through, the server has the unpushed changes.
            node.transport.script.withLock { $0.failPushes = false }
            try await node.replica.syncNow()
            let serverTitles = Set(try await connection.rows("SELECT title FROM \(s).\"Card\"").compactMap { $0.first ?? nil })
            #expect(serverTitles == ["card 0 edited offline", "card 1", "card 2", "made offline"])
            #expect(try node.titles() == serverTitles)
            #expect(try node.store.pendingSyncCount() == 0)
            #expect(node.replica.currentStatus.resyncs == 1, "one resync was enough")
            try await node.close()
        }
    }

    @Test func anInterruptedResyncResumesAfterARestart() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var node = try await Node(directory: directory, schema: s)
            let ids = try await seed(node, count: 14)
            let ghosts = ["card 1", "card 7", "card 12"]
            try await deleteAndCollect(ghosts, ids: ids, connection: connection, schema: s)

            // The resync's second page fails (11 live cards: three pages of 5): the first
            // page's ids are recorded with it.
            let before = node.transport.script.withLock { $0.pulls.count }
            node.transport.script.withLock { $0.failingPull = before + 3 }   // CF004, "0", then this one
            await #expect(throws: SyncTransportError.self) { try await node.replica.syncNow() }
            #expect(node.replica.currentStatus.resyncs == 1)
            #expect(try node.store.isResyncing(entity: "Card", stream: node.transport.stream))
            #expect(try node.store.syncCursor(entity: "Card", stream: node.transport.stream) != "0", "the first page was applied")

            // The process ends; a new one resumes the resync where it stopped.
            try await node.close()
            node = try await Node(directory: directory, schema: s)
            try await node.replica.syncNow()
            let resumed = try #require(node.transport.script.withLock { $0.pulls.first })
            #expect(resumed.cursor != "0", "resumed from the stored cursor, not from the start")
            #expect(node.replica.currentStatus.resyncs == 0, "no new resync began")
            #expect(Set(node.transport.script.withLock { $0.fetched }) == Set(ghosts.compactMap { ids[$0] }),
                    "the ids seen before the interruption were kept")
            let expected = Set((0..<14).map { "card \($0)" }).subtracting(ghosts)
            #expect(try node.titles() == expected)
            #expect(try node.store.isResyncing(entity: "Card", stream: node.transport.stream) == false)
            try await node.close()
        }
    }
}
