@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The direct transport against the test cluster: pushes a store's outbox in the wire format
/// and pulls pages untouched, names what failed, gives up on a stalled network at its
/// deadline (then works again once healed), and keeps LISTENing across dropped connections.
@Suite(.timeLimit(.minutes(2))) struct PostgresTransportTests {
    @Test func pushesAStoresChangesAndPullsThePageUntouched() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let temporary = try TemporaryStore()
        defer { temporary.cleanUp() }
        let cards = temporary.store.box(for: Replicated.Card.self)
        var first = Replicated.Card(title: "quote \" back \\ tab \t", count: 3, done: true, note: nil)
        var second = Replicated.Card(title: "ü ☃", count: -7, note: "n")
        try cards.put(&first)
        try cards.put(&second)
        second.count = 8
        try cards.put(&second)
        let doomed = try cards.put(Replicated.Card(title: "gone"))
        _ = try temporary.store.takeSyncChanges(limit: 10)   // taken (not acknowledged): its creation is on its way...
        try cards.remove(doomed)                               // ...so its delete is a change of its own

        try await withInstalled(schema) { connection in
            let transport = try await testTransport(schema: s)
            let client = UUID()
            let changes = try temporary.store.takeSyncChanges(limit: 100)
            let batch = try #require(SyncPushBatch(changes: changes))
            // The removed object's creation is left out (its values are gone); its delete goes.
            #expect(batch.count == changes.count - 1 && batch.lastMid == changes.last?.mid)
            let reply = try await transport.push(client: client, batch: batch)
            #expect(reply.lastMid == batch.lastMid)
            #expect(changes.map(\.operation) == [.upsert, .upsert, .upsert, .delete])
            #expect(reply.rejected.isEmpty)
            #expect(try await transport.lastMutationId(client: client) == batch.lastMid)
            #expect(try await transport.lastMutationId(client: UUID()) == 0)
            try temporary.store.acknowledgeSyncChanges(through: reply.lastMid)

            // The typed columns hold the exact values.
            let rows = try await connection.rows("SELECT title, count::text, done::text, note FROM \(s).\"Card\" ORDER BY count")
            #expect(rows == [["quote \" back \\ tab \t", "3", "true", nil], ["ü ☃", "8", "false", "n"]])

            // A resent batch changes nothing (the server skips applied mids).
            let again = try await transport.push(client: client, batch: batch)
            #expect(again.lastMid == batch.lastMid && again.rejected.isEmpty)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"Card\"") == "2")

            // A pull returns exactly the text coffer_pull returns, but for the server's clock
            // at the time of each call.
            // (Another test's transaction may move the cluster's horizon between the two calls,
            // and with it the cursor: compared again until the horizon holds still.)
            func withoutClock(_ text: String?) -> String? { text?.replacing(#/"clock": "[0-9]+", /#, with: "") }
            var page = Data()
            var direct: String?
            for _ in 0..<50 {
                page = try await transport.pull(entity: "Card", cursor: "0", limit: 10)
                direct = try await connection.value("SELECT \(s).coffer_pull('Card', '0', 10)::text")
                if withoutClock(String(decoding: page, as: UTF8.self)) == withoutClock(direct) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(String(decoding: page, as: UTF8.self).contains(#""clock": ""#))
            #expect(withoutClock(String(decoding: page, as: UTF8.self)) == withoutClock(direct))
            await transport.close()
            await #expect(throws: SyncTransportError.closed) { _ = try await transport.pull(entity: "Card", cursor: "0", limit: 1) }
        }
    }

    @Test func failuresSayWhatFailed() async throws {
        let installed = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        try await withInstalled(installed) { _ in
            // An entity the server's schema lacks: the schema is behind the model.
            let transport = try await testTransport(schema: installed.schemaName)
            let batch = SyncPushBatch(json: #"[{"mid": 1, "entity": "Card", "id": "\#(UUID().uuidString)", "op": "upsert", "create": true, "fields": {}, "clocks": {}}]"#,
                                      count: 1, lastMid: 1)
            let behind = await #expect(throws: SyncTransportError.self) {
                _ = try await transport.push(client: UUID(), batch: batch)
            }
            guard case .schemaBehind(let operation, let message)? = behind else {
                Issue.record("expected schemaBehind, got \(String(describing: behind))")
                return
            }
            #expect(operation == "push" && message.contains("Card") && behind?.isTransient == false)
            // A schema that does not exist: the server's error, with its SQLSTATE.
            let nowhere = try await testTransport(schema: "no_such_schema")
            let missing = await #expect(throws: SyncTransportError.self) {
                _ = try await nowhere.pull(entity: "Card", cursor: "0", limit: 1)
            }
            guard case .server(let operation, let state, let message)? = missing else {
                Issue.record("expected a server error, got \(String(describing: missing))")
                return
            }
            #expect(operation == "pull Card" && state.hasPrefix("3F") && message.contains("no_such_schema"), "\(state) \(message)")
            await nowhere.close()
            await transport.close()
        }
        // Nobody listening: unreachable, transient.
        let closedPort = try await testTransport(schema: "coffer", port: 1)
        let unreachable = await #expect(throws: SyncTransportError.self) {
            _ = try await closedPort.lastMutationId(client: UUID())
        }
        guard case .unreachable? = unreachable else {
            Issue.record("expected unreachable, got \(String(describing: unreachable))")
            return
        }
        #expect(unreachable?.isTransient == true)
        #expect(unreachable?.description.contains("connect (read the last mutation id)") == true, "\(String(describing: unreachable))")
        await closedPort.close()
    }

    @Test func aStalledNetworkTimesOutAndAHealedOneWorksWithoutDuplicates() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let endpoint = try await PostgresCluster.shared.endpoint()
        let proxy = try FaultProxy(upstreamPort: UInt16(endpoint.port))
        defer { proxy.stop() }
        try await withInstalled(schema) { connection in
            let transport = try await testTransport(schema: s, port: Int(proxy.port), timeout: .seconds(1))
            let client = UUID()
            func batch(_ mid: UInt64) -> SyncPushBatch {
                SyncPushBatch(json: #"[{"mid": \#(mid), "entity": "Card", "id": "\#(UUID().uuidString)", "op": "upsert", "create": true, "fields": {"title": "m\#(mid)"}, "clocks": {"title": "\#(hlcNow())"}}]"#,
                              count: 1, lastMid: mid)
            }
            #expect(try await transport.push(client: client, batch: batch(1)).lastMid == 1)

            // Requests held: the push times out.
            proxy.faults = .init(stallToServer: true)
            let stalled = await #expect(throws: SyncTransportError.self) { _ = try await transport.push(client: client, batch: batch(2)) }
            guard case .timedOut? = stalled else {
                Issue.record("expected a timeout, got \(String(describing: stalled))")
                return
            }
            // Replies held on a connection that is open (a new one could not even log in): the
            // server applies the push, the client never hears of it.
            proxy.faults = .init()
            _ = try await retryingTransient { try await transport.lastMutationId(client: client) }
            proxy.faults = .init(stallToClient: true)
            let unheard = batch(3)
            await #expect(throws: SyncTransportError.self) { _ = try await transport.push(client: client, batch: unheard) }
            proxy.faults = .init()
            // The server applied mid 3 though its answer never arrived: note the row's version
            // (xmin changes with every write of the row), so that a second application shows.
            let applied = try await eventually {
                try await connection.value("SELECT \(s).coffer_last_mid('\(client.uuidString)'::uuid)::text") == "3"
            }
            #expect(applied, "the server applied the batch whose answer was held")
            let version = try await connection.value("SELECT xmin::text FROM \(s).\"Card\" WHERE title = 'm3'")
            // Healed: the resent batch is skipped, not applied twice. (The timed-out push of
            // mid 2 may have reached the server once its bytes were released: either way,
            // nothing is there twice.) A new connection's set-up can outlast the one-second
            // deadline on a loaded machine, or be cut while the proxy drops the stalled ones:
            // the batch is resent then, as a replica would, for up to 30 seconds.
            let healed = try await retryingTransient { try await transport.push(client: client, batch: unheard) }
            #expect(healed.lastMid == 3)
            let titles = try await connection.rows("SELECT title FROM \(s).\"Card\"").map { $0.first ?? nil }
            #expect(Set(titles).isSuperset(of: ["m1", "m3"]) && Set(titles).count == titles.count, "\(titles)")
            #expect(try await connection.value("SELECT xmin::text FROM \(s).\"Card\" WHERE title = 'm3'") == version,
                    "the resent batch was applied again")

            // A reset breaks the idle connection: the next call finds out and uses another, or
            // (when postgres-nio does not notice the reset) ends at its deadline; a later call
            // works (on a loaded machine a new connection's set-up may need more than one).
            proxy.resetAll()
            #expect(try await retryingTransient { try await transport.lastMutationId(client: client) } == 3)
            await transport.close()
        }
    }

    @Test func listensForChangesAcrossDroppedConnections() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let endpoint = try await PostgresCluster.shared.endpoint()
        let proxy = try FaultProxy(upstreamPort: UInt16(endpoint.port))
        defer { proxy.stop() }
        try await withInstalled(schema) { connection in
            let transport = try await testTransport(schema: s, port: Int(proxy.port))
            // The first wait starts listening and reports it (nothing can have been seen yet).
            #expect(try await transport.waitForChanges(timeout: .seconds(20)))
            #expect(try await transport.waitForChanges(timeout: .milliseconds(50)) == false)
            try await connection.run("NOTIFY \"\(s)_changes\", 'Card'")
            #expect(try await transport.waitForChanges(timeout: .seconds(20)))

            // The LISTEN connection breaks: once it is back, the wait ends (a notification may
            // have been missed), and later notifications arrive again.
            proxy.resetAll()
            #expect(try await transport.waitForChanges(timeout: .seconds(20)))
            var notified = false
            for _ in 0..<20 where !notified {
                try await connection.run("NOTIFY \"\(s)_changes\", 'Card'")
                notified = try await transport.waitForChanges(timeout: .seconds(1))
            }
            #expect(notified)
            await transport.close()
            await #expect(throws: SyncTransportError.closed) { _ = try await transport.waitForChanges(timeout: .seconds(1)) }
        }
    }
}
