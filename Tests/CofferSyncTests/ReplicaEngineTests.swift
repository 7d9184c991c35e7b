@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The engine's promises around its loop and identity: a stop is never lost, the replica
/// pushes as the store's current client id, and parked conflicts are retried after pulls.
@Suite(.timeLimit(.minutes(2))) struct ReplicaEngineTests {
    /// Runs `run()` in a task and reports whether it returned within `seconds`; stops it
    /// otherwise, so that the test ends either way.
    static func runReturns(_ replica: SyncReplica, within seconds: Double, afterStarting: () -> Void = {}) async throws -> Bool {
        let returned = LockedState(false)
        let running = Task {
            await replica.run()
            returned.withLock { $0 = true }
        }
        afterStarting()
        let prompt = try await eventually(attempts: 1000, seconds: seconds) { returned.withLock { $0 } }
        if !prompt {
            replica.stop()
            await running.value
        }
        return prompt
    }

    @Test func aStopBeforeRunEndsThatRunAndIsSpentByIt() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let node = try await ReplicaNode(index: 0, schema: s, log: WriteLog())
            defer { node.temporary.cleanUp() }
            node.replica.stop()
            #expect(try await Self.runReturns(node.replica, within: 5), "a stop made before run() was lost")
            #expect(node.replica.currentStatus.phase == .stopped)
            #expect(node.replica.currentStatus.lastSyncedAt == nil, "the stopped run made no pass")

            // A stop right after the task that runs is created, which may begin before or
            // after the stop: the run ends either way.
            for attempt in 0..<20 {
                #expect(try await Self.runReturns(node.replica, within: 2) { node.replica.stop() }, "attempt \(attempt): the stop was lost")
            }

            // The stop is spent: the next run syncs until stopped.
            try node.cards.put(Replicated.Card(title: "after the stops"))
            let running = Task { await node.replica.run() }
            #expect(try await eventually {
                try await connection.value("SELECT count(*)::text FROM \(s).\"Card\" WHERE title = 'after the stops'") == "1"
            }, "the run after a spent stop syncs")
            node.replica.stop()
            await running.value
            #expect(node.replica.currentStatus.phase == .stopped)
            await node.replica.transport.close()
        }
    }

    @Test func aClientIdRenewedByAPullIsTheOnePushedAs() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let transport = InterceptingTransport(try await testTransport(schema: s))
            let replica = try SyncReplica(store: temporary.store, entities: [Replicated.Card.self], transport: transport)
            let cards = temporary.store.box(for: Replicated.Card.self)
            try cards.put(Replicated.Card(title: "before"))
            try await replica.syncNow()
            let original = try temporary.store.syncClientId()

            // The data file is replaced while the store is open (a copy renamed over it): the
            // next pull takes a new client id for the new file.
            let file = temporary.directory + "/data.mdb"
            try FileManager.default.copyItem(atPath: file, toPath: file + ".copy")
            #expect(rename(file + ".copy", file) == 0)
            try await replica.syncNow()
            try cards.put(Replicated.Card(title: "after"))
            let status = try await replica.syncNow()

            let current = try temporary.store.syncClientId()
            #expect(current != original, "the pull took a new id for the new file")
            #expect(status.clientId == current)
            let lastMids = try await connection.rows("SELECT client_id::text, last_mid::text FROM \(s).clients")
            let byClient = Dictionary(uniqueKeysWithValues: lastMids.compactMap { row in
                row[0].flatMap(UUID.init(uuidString:)).map { ($0, row[1] ?? "") }
            })
            #expect(byClient[original] == "1", "nothing was pushed under the old id after it was renewed")
            #expect(byClient[current] == "2", "the change after the renewal was pushed under the new id")
            #expect(transport.checkedClients == [original, current], "the new id was checked against the server")
            #expect(try await connection.value("SELECT string_agg(title, ',' ORDER BY title) FROM \(s).\"Card\"") == "after,before")
            await transport.close()
        }
    }

    @Test func parkedConflictsAreRetriedAfterEachPull() async throws {
        let schema = try SyncSchema([Chore.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { _ in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let replicaA = try SyncReplica(store: a.store, entities: [Chore.self], transport: try await testTransport(schema: s))
            let transportB = ScriptedTransport(try await testTransport(schema: s))
            let replicaB = try SyncReplica(store: b.store, entities: [Chore.self], transport: transportB)
            var fromA = Chore(title: "from a", code: "K7")
            try a.store.box(for: Chore.self).put(&fromA)
            try await replicaA.syncNow()

            // B holds the same code in a local chore it has not pushed yet (its pushes fail
            // for now; a refused creation would be removed at once): A's object is parked
            // when it arrives.
            let choresB = b.store.box(for: Chore.self)
            var local = Chore(title: "local", code: "K7")
            try choresB.put(&local)
            transportB.script.withLock { $0.failPushes = true }
            #expect(try await eventually {
                do { try await replicaB.syncNow() } catch {}
                return try b.store.syncConflicts().count == 1
            }, "A's chore is parked on B")
            #expect(replicaB.currentStatus.parkedConflicts == 1)

            // The app frees the value; the next pass applies the parked object.
            try choresB.remove(local.id)
            transportB.script.withLock { $0.failPushes = false }
            let status = try await replicaB.syncNow()
            #expect(try b.store.syncConflicts().isEmpty, "the engine retried the parked conflict")
            #expect(try choresB.all().map(\.title) == ["from a"])
            #expect(status.parkedConflicts == 0)
            #expect(status.resolvedConflicts == 1)
            await replicaA.transport.close()
            await replicaB.transport.close()
        }
    }
}
