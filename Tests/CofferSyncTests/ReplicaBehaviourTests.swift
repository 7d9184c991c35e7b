@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// What a replica promises besides convergence: it refuses entities that are not synced,
/// reports the server's rejections and goes on, takes a new client id when the server is
/// ahead of the store, wakes on notifications and local changes, and stops promptly.
@Suite(.timeLimit(.minutes(2))) struct ReplicaBehaviourTests {
    @Test func refusesEntitiesThatAreNotSynced() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.cleanUp() }
        let transport = try await testTransport(schema: "coffer")
        #expect(throws: SyncReplicaError.notSynced("Replicated.Scratch")) {
            _ = try SyncReplica(store: temporary.store, entities: [Replicated.Scratch.self], transport: transport)
        }
        #expect(throws: SyncReplicaError.duplicateEntity("Card")) {
            _ = try SyncReplica(store: temporary.store, entities: [Replicated.Card.self, Replicated.Card.self], transport: transport)
        }
    }

    @Test func rejectionsAreReportedAndTheQueueGoesOn() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let node = try await ReplicaNode(index: 0, schema: s, log: WriteLog())
            defer { node.temporary.cleanUp() }
            var doomed = Replicated.Card(title: "doomed")
            try node.cards.put(&doomed)
            try await node.replica.syncNow()
            let doomedId = try #require(try node.cards.syncId(of: doomed.id))
            try await connection.run("DELETE FROM \(s).\"Card\" WHERE sync_id = '\(doomedId.uuidString)'")

            // A change to the row deleted on the server, then a new card behind it.
            doomed.title = "too late"
            try node.cards.put(&doomed)
            var next = Replicated.Card(title: "next")
            try node.cards.put(&next)
            let status = try await node.replica.syncNow()
            #expect(status.rejectedCount == 1)
            let rejection = try #require(status.rejections.first)
            #expect(rejection.reason.hasPrefix("deleted"))
            #expect(try await connection.value("SELECT mid::text FROM \(s).rejections") == String(rejection.mid))
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "next", "the queue went on")
            #expect(status.pending == 0)
            // A pull brings the server's delete (once the horizon passes it: another test's
            // open transaction may hold it back a while).
            #expect(try await eventually {
                try await node.replica.syncNow()
                return try node.cards.get(doomed.id) == nil
            })
            await node.replica.transport.close()
        }
    }

    @Test func aStoreBehindTheServerTakesANewClientId() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let original = try temporary.store.syncClientId()
            // The server has applied mids of this client beyond what the store handed out,
            // as it would after the store was restored from an older backup.
            try await connection.run("INSERT INTO \(s).clients (client_id, last_mid) VALUES ('\(original.uuidString)', 1000)")
            let transport = try await testTransport(schema: s)
            let replica = try SyncReplica(store: temporary.store, entities: [Replicated.Card.self], transport: transport)
            try temporary.store.box(for: Replicated.Card.self).put(Replicated.Card(title: "after restore"))
            let status = try await replica.syncNow()
            let renewed = try #require(status.clientId)
            #expect(renewed != original)
            #expect(try temporary.store.syncClientId() == renewed)
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "after restore", "not skipped as an old mid")
            #expect(try await connection.value("SELECT last_mid::text FROM \(s).clients WHERE client_id = '\(renewed.uuidString)'") == "1")
            await transport.close()
        }
    }

    /// With a transport that notifies changes, a wait that ends with nothing changed (a
    /// gateway holds a wait 25 s at most) is followed by another wait, not a pass: only a
    /// wake-up or the longest poll's safety net pulls. With a thousand quiet replicas, those
    /// passes were a pull every 25 s each. A transport that does not notify polls as before.
    @Test(arguments: [true, false]) func quietWaitsOfANotifyingTransportDoNotPull(notifies: Bool) async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let scripted = ScriptedTransport(try await testTransport(schema: s))
            scripted.script.withLock { script in
                script.notifies = notifies
                script.quietWaits = true
            }
            let replica = try SyncReplica(store: temporary.store, entities: [Replicated.Card.self], transport: scripted,
                                          options: .init(poll: (.milliseconds(1), notifies ? .seconds(3600) : .milliseconds(2))))
            let running = Task { await replica.run() }
            // (Each poll is a pass through the server: beside the whole suite, a slow one.)
            #expect(try await eventually(attempts: 600, seconds: 120) { scripted.script.withLock { $0.waits >= 20 } })
            replica.stop()
            await running.value
            let (pulls, waits) = scripted.script.withLock { ($0.pulls.count, $0.waits) }
            if notifies {
                #expect(pulls == 1, "\(pulls) pulls in \(waits) waits: only the first pass pulls")
            } else {
                #expect(pulls >= waits - 1, "\(pulls) pulls in \(waits) waits: every poll pulls")
            }
            await scripted.close()
        }
    }

    @Test func runWakesOnChangesAndStopsPromptly() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let (a, b) = (try await ReplicaNode(index: 0, schema: s, log: WriteLog()), try await ReplicaNode(index: 1, schema: s, log: WriteLog()))
            defer { a.temporary.cleanUp(); b.temporary.cleanUp() }
            let phases = LockedState<Set<SyncStatus.Phase>>([])
            let watcher = Task {
                for await status in a.replica.status { _ = phases.withLock { $0.insert(status.phase) } }
            }
            let running = Task { await a.replica.run() }

            // A change from elsewhere reaches the running replica.
            try b.cards.put(Replicated.Card(title: "from b"))
            try await b.replica.syncNow()
            #expect(try await eventually { try a.cards.all().map(\.title) == ["from b"] })
            // A local change leaves without anyone calling syncNow.
            try a.cards.put(Replicated.Card(title: "from a"))
            #expect(try await eventually {
                try await connection.value("SELECT count(*)::text FROM \(s).\"Card\" WHERE title = 'from a'") == "1"
            })

            a.replica.stop()
            await running.value
            #expect(a.replica.currentStatus.phase == .stopped)
            watcher.cancel()
            #expect(phases.withLock { $0.isSuperset(of: [.pushing, .pulling, .waiting]) })
            await a.replica.transport.close()
            await b.replica.transport.close()
        }
    }
}
