@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The server is authoritative over what it refuses: after a push with rejections the
/// replica fetches the server's state of those objects and applies it (a refused creation
/// is removed, refused values are replaced) without waiting for the server's row to change,
/// and keeps each refused change, with its values, in `store.syncRejections()`.
@Suite(.timeLimit(.minutes(2))) struct RejectionTests {
    @Test func refusedChangesTakeTheServersStateAndAreKept() async throws {
        try await Self.withTwoReplicas { connection, s, a, b, transport, replica in
            let chores = (a: a.store.box(for: Chore.self), b: b.store.box(for: Chore.self))

            // B takes the code "c1" first; A's chore with the same code is refused.
            try chores.b.put(Chore(title: "b's", code: "c1"))
            try await replica.b.syncNow()
            var collided = Chore(title: "a's", code: "c1")
            try chores.a.put(&collided)
            let collidedId = try #require(try chores.a.syncId(of: collided.id))
            // Two chores that arrive: one gets an edit that takes B's code, the other is
            // deleted on the server and then edited here.
            var recoded = Chore(title: "recoded", code: "c2")
            try chores.a.put(&recoded)
            var gone = Chore(title: "gone", code: "c3")
            try chores.a.put(&gone)
            try await replica.a.syncNow()
            #expect(replica.a.currentStatus.rejectedCount == 1)
            let goneId = try #require(try chores.a.syncId(of: gone.id))
            try await connection.run("DELETE FROM \(s).\"Chore\" WHERE sync_id = '\(goneId.uuidString)'")
            // B takes "c9" after A's last pull; A, not knowing, gives it to a chore.
            try chores.b.put(Chore(title: "b's second", code: "c9"))
            try await replica.b.syncNow()
            recoded.code = "c9"
            recoded.done = true
            try chores.a.put(&recoded)
            gone.title = "edited after the server deleted it"
            try chores.a.put(&gone)
            let status = try await replica.a.syncNow()
            #expect(status.rejectedCount == 3)

            // The replica holds the server's state at once, though the server's rows did not
            // change: the refused creation is gone, the refused edit undone, the object the
            // server deleted removed.
            #expect(try chores.a.get(collided.id) == nil)
            let undone = try #require(try chores.a.get(recoded.id))
            #expect(undone.code == "c2" && undone.done == false && undone.title == "recoded")
            #expect(try chores.a.get(gone.id) == nil)
            #expect(try chores.a.all().allSatisfy { $0.title != "a's" && $0.title != "gone" && $0.title != "edited after the server deleted it" })
            #expect(try a.store.pendingSyncCount() == 0)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"Chore\" WHERE code = 'c1'") == "1")

            // Every refusal is kept with its values.
            let rejections = try a.store.syncRejections()
            #expect(rejections.map(\.kind) == [.creation, .update, .update])
            #expect(rejections.map(\.mid) == rejections.map(\.mid).sorted())
            let unique = try #require(rejections.first)
            #expect(unique.syncId == collidedId && unique.entity == "Chore")
            #expect(unique.reason.hasPrefix("unique"))
            let uniqueValues = try #require(try JSONSerialization.jsonObject(with: Data(unique.values.utf8)) as? [String: Any])
            #expect(uniqueValues["title"] as? String == "a's")
            #expect(uniqueValues["code"] as? String == "c1")
            let refusedEdit = try #require(rejections.first { $0.kind == .update && $0.reason.hasPrefix("unique") })
            let editValues = try #require(try JSONSerialization.jsonObject(with: Data(refusedEdit.values.utf8)) as? [String: Any])
            #expect(editValues["code"] as? String == "c9")
            #expect(editValues["done"] as? Bool == true)
            #expect(try a.store.syncObjectsAwaitingServerState(entity: "Chore").isEmpty)

            // The app clears what it dealt with.
            #expect(try a.store.clearSyncRejections(through: unique.mid) == 1)
            #expect(try a.store.syncRejections().count == 2)
            #expect(try a.store.clearSyncRejections() == 2)
            #expect(try a.store.syncRejections().isEmpty)
        }
    }

    /// A fetch the server refuses as too large (many large rows) is halved down to single
    /// ids: the replica takes the server's state of every refused object in the same pass.
    /// A push whose change the server refuses loses its answer. The next attempt sends the
    /// change again, which the server skips as applied; its answer gives the refusal again,
    /// so the replica records it once and takes the server's state, instead of taking the
    /// change for applied.
    @Test func aRefusalWhoseAnswerWasLostIsAnsweredAgain() async throws {
        try await Self.withTwoReplicas { connection, s, a, b, transport, replica in
            let chores = (a: a.store.box(for: Chore.self), b: b.store.box(for: Chore.self))
            try chores.b.put(Chore(title: "b's", code: "c1"))
            try await replica.b.syncNow()
            var collided = Chore(title: "a's", code: "c1")
            try chores.a.put(&collided)
            var kept = Chore(title: "a's other", code: "c2")
            try chores.a.put(&kept)

            transport.a.script.withLock { $0.lostReplies = 1 }
            await #expect(throws: SyncTransportError.self) { try await replica.a.syncNow() }
            try await replica.a.syncNow()
            #expect(try a.store.syncRejections().count == 1)
            #expect(replica.a.currentStatus.rejectedCount == 1)
            #expect(try chores.a.get(collided.id) == nil, "the refused creation is undone")
            #expect(try chores.a.get(kept.id)?.code == "c2")
            #expect(try a.store.pendingSyncCount() == 0)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"Chore\"") == "2")
        }
    }

    @Test func aFetchTooLargeForTheServerIsSplit() async throws {
        try await Self.withScriptedReplica { connection, s, temporary, scripted, replica in
            let chores = temporary.store.box(for: Chore.self)
            var refused = (0..<5).map { Chore(title: "c\($0)", code: "code\($0)") }
            try chores.put(&refused)
            try await replica.syncNow()
            for index in refused.indices {
                let syncId = try #require(try chores.syncId(of: refused[index].id))
                try await connection.run("DELETE FROM \(s).\"Chore\" WHERE sync_id = '\(syncId.uuidString)'")
                refused[index].title = "edited"
            }
            try chores.put(&refused)
            scripted.script.withLock { $0.largestFetch = 1; $0.fetched = [] }
            try await replica.syncNow()
            #expect(try chores.count() == 0, "every refused object took the server's state (deleted)")
            #expect(try temporary.store.syncObjectsAwaitingServerState(entity: "Chore").isEmpty)
            #expect(try temporary.store.syncRejections().count == 5)
            #expect(Set(scripted.script.withLock { $0.fetched }).count == 5)
        }
    }

    @Test func aFailedFetchIsDoneByTheNextPass() async throws {
        try await Self.withScriptedReplica { connection, s, temporary, scripted, replica in
            let chores = temporary.store.box(for: Chore.self)
            var refused = Chore(title: "first", code: "x")
            try chores.put(&refused)
            try await replica.syncNow()
            let syncId = try #require(try chores.syncId(of: refused.id))
            try await connection.run("DELETE FROM \(s).\"Chore\" WHERE sync_id = '\(syncId.uuidString)'")
            refused.title = "edited"
            try chores.put(&refused)
            // The push is refused and acknowledged; the fetch of the server's state fails.
            scripted.script.withLock { $0.failFetches = true }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(try temporary.store.syncRejections().count == 1)
            #expect(try temporary.store.syncObjectsAwaitingServerState(entity: "Chore") == [syncId])
            #expect(try chores.get(refused.id) != nil)
            #expect(replica.currentStatus.pullFailures.map(\.entity) == ["Chore"])

            scripted.script.withLock { $0.failFetches = false }
            try await replica.syncNow()
            #expect(try chores.get(refused.id) == nil)
            #expect(try temporary.store.syncObjectsAwaitingServerState(entity: "Chore").isEmpty)
            #expect(try temporary.store.syncRejections().count == 1)
        }
    }

    /// Replicas of `Chore` in two new stores (A's through a scripted transport, B's direct) to
    /// a newly installed schema `s`; the transports are closed after `body`.
    static func withTwoReplicas(
        _ body: (PostgresConnection, String, TemporaryStore, TemporaryStore, (a: ScriptedTransport, b: PostgresTransport),
                 (a: SyncReplica, b: SyncReplica)) async throws -> Void
    ) async throws {
        let schema = try SyncSchema([Chore.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let transport = (a: ScriptedTransport(try await testTransport(schema: s)), b: try await testTransport(schema: s))
            let replica = (a: try SyncReplica(store: a.store, entities: [Chore.self], transport: transport.a),
                           b: try SyncReplica(store: b.store, entities: [Chore.self], transport: transport.b))
            do {
                try await body(connection, s, a, b, transport, replica)
            } catch {
                await transport.a.close()
                await transport.b.close()
                throw error
            }
            await transport.a.close()
            await transport.b.close()
        }
    }

    /// A replica of `Chore` in a new store, through a scripted transport to a newly installed
    /// schema `s`; the transport is closed after `body`.
    static func withScriptedReplica(
        _ body: (PostgresConnection, String, TemporaryStore, ScriptedTransport, SyncReplica) async throws -> Void
    ) async throws {
        let schema = try SyncSchema([Chore.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let scripted = ScriptedTransport(try await testTransport(schema: schema.schemaName))
            let replica = try SyncReplica(store: temporary.store, entities: [Chore.self], transport: scripted)
            do {
                try await body(connection, schema.schemaName, temporary, scripted, replica)
            } catch {
                await scripted.close()
                throw error
            }
            await scripted.close()
        }
    }
}
