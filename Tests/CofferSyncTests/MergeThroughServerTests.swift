@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A counter both replicas increment while apart, merged by the app through the server.
enum Counted {
    @Sync
    struct Tally: Entity {
        var id: Id = 0
        var count = 0
        /// The count both replicas last agreed on: what the merge adds increments to.
        var base = 0
    }
}

/// An app's merge through the real server: a replica with a merge for an entity pulls it
/// before pushing, so a change another replica pushed meets its local changes here, and the
/// merged result is what it pushes.
@Suite(.timeLimit(.minutes(2))) struct MergeThroughServerTests {
    /// Adds both sides' increments: count = local + remote - base, and the sum is the new base.
    static func addIncrements(_ store: Store) {
        store.setSyncMerge(for: Counted.Tally.self) { conflict in
            var merged = conflict.local
            merged.count = conflict.local.count + conflict.remote.count - conflict.local.base
            merged.base = merged.count
            return merged
        }
    }

    func replica(_ temporary: TemporaryStore, schema: String) async throws -> SyncReplica {
        try SyncReplica(store: temporary.store, entities: [Counted.Tally.self], transport: try await testTransport(schema: schema),
                        options: .init(pushBatchSize: 7, pullPageSize: 5, poll: (.milliseconds(20), .milliseconds(200)),
                                       retry: (.milliseconds(20), .milliseconds(200))))
    }

    @Test(.disabled("passes alone, but run with the whole suite the server never reaches the merged sum; not explained yet (open in issue 31)"))
    func incrementsMadeApartAddUp() async throws {
        let schema = try SyncSchema([Counted.Tally.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let (first, second) = (try TemporaryStore(), try TemporaryStore())
            defer { first.cleanUp(); second.cleanUp() }
            let one = try await replica(first, schema: s)
            let two = try await replica(second, schema: s)
            for store in [first.store, second.store] { Self.addIncrements(store) }
            let tallies = (first.store.box(for: Counted.Tally.self), second.store.box(for: Counted.Tally.self))

            var tally = Counted.Tally(count: 10, base: 10)
            try tallies.0.put(&tally)
            #expect(try await eventually {
                try await one.syncNow()
                try await two.syncNow()
                return try tallies.1.all().first?.count == 10
            })

            // Apart: three increments on the first, five on the second.
            for _ in 0..<3 {
                var mine = try #require(try tallies.0.all().first)
                mine.count += 1
                try tallies.0.put(&mine)
            }
            for _ in 0..<5 {
                var mine = try #require(try tallies.1.all().first)
                mine.count += 1
                try tallies.1.put(&mine)
            }
            try await one.syncNow()          // the server has 13
            // (Another test's open transaction may hold the pull horizon below that push.)
            #expect(try await eventually {
                try await connection.value("SELECT (pg_snapshot_xmin(pg_current_snapshot()) > _txid)::text FROM \(s).\"Tally\"") == "true"
            })
            #expect(try await eventually {   // the second merges 13 with its 15 from 10, and pushes 18
                try await two.syncNow()
                return try await connection.value("SELECT count::text FROM \(s).\"Tally\"") == "18"
            })
            #expect(try await eventually {
                try await one.syncNow()
                return try tallies.0.all().first?.count == 18
            })
            #expect(try tallies.1.all().first?.count == 18)
            #expect(try tallies.0.all().first?.base == 18)
            #expect(try first.store.pendingSyncCount() == 0 && second.store.pendingSyncCount() == 0)
            await one.transport.close()
            await two.transport.close()
        }
    }

    /// A transport whose pulls fail as a timeout while `failPulls` is set, counting pushes.
    final class FlakyPullTransport: SyncTransport {
        let inner: any SyncTransport
        let failPulls = LockedState(false)
        let pushes = LockedState(0)

        init(_ inner: any SyncTransport) { self.inner = inner }

        var stream: String { inner.stream }

        func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply {
            pushes.withLock { $0 += 1 }
            return try await inner.push(client: client, batch: batch)
        }

        func lastMutationId(client: UUID) async throws -> UInt64 { try await inner.lastMutationId(client: client) }

        func pull(entity: String, cursor: String, limit: Int) async throws -> Data {
            if failPulls.withLock({ $0 }) { throw SyncTransportError.timedOut(operation: "pull \(entity)", after: .seconds(3)) }
            return try await inner.pull(entity: entity, cursor: cursor, limit: limit)
        }

        func fetch(entity: String, ids: [UUID]) async throws -> Data { try await inner.fetch(entity: entity, ids: ids) }

        func waitForChanges(timeout: Duration) async throws -> Bool { try await inner.waitForChanges(timeout: timeout) }

        func close() async { await inner.close() }
    }

    @Test func aPullBeforeThePushThatTimesOutHoldsThePushBack() async throws {
        let schema = try SyncSchema([Counted.Tally.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { _ in
            let temporary = try TemporaryStore()
            defer { temporary.cleanUp() }
            let transport = FlakyPullTransport(try await testTransport(schema: schema.schemaName))
            let replica = try SyncReplica(store: temporary.store, entities: [Counted.Tally.self], transport: transport)
            Self.addIncrements(temporary.store)
            var tally = Counted.Tally(count: 1, base: 1)
            try temporary.store.box(for: Counted.Tally.self).put(&tally)

            transport.failPulls.withLock { $0 = true }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(transport.pushes.withLock { $0 } == 0, "pushed without the pull the merge needs")
            #expect(try temporary.store.pendingSyncCount() == 1)

            transport.failPulls.withLock { $0 = false }
            try await replica.syncNow()
            #expect(transport.pushes.withLock { $0 } >= 1)
            #expect(try temporary.store.pendingSyncCount() == 0)
            await transport.close()
        }
    }
}
