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
    /// These tests are about merges, not deadlines: a loaded machine (the whole suite runs at
    /// once on two cores) may take seconds to answer a pull.
    static let deadline = Duration.seconds(15)

    /// Adds both sides' increments: count = local + remote - base, and the sum is the new base.
    /// `calls` counts the merges.
    static func addIncrements(_ store: Store, calls: LockedState<Int> = LockedState(0)) {
        store.setSyncMerge(for: Counted.Tally.self) { conflict in
            calls.withLock { $0 += 1 }
            var merged = conflict.local
            merged.count = conflict.local.count + conflict.remote.count - conflict.local.base
            merged.base = merged.count
            return merged
        }
    }

    func replica(_ temporary: TemporaryStore, schema: String) async throws -> SyncReplica {
        try SyncReplica(store: temporary.store, entities: [Counted.Tally.self], transport: try await testTransport(schema: schema, timeout: Self.deadline),
                        options: .init(pushBatchSize: 7, pullPageSize: 5, poll: (.milliseconds(20), .milliseconds(200)),
                                       retry: (.milliseconds(20), .milliseconds(200))))
    }

    /// Two replicas of one tally on a fresh schema, each merging with ``addIncrements(_:calls:)``.
    struct Apart {
        let connection: PostgresConnection
        let schema: String
        let one: SyncReplica
        let two: SyncReplica
        let tallies: (first: Box<Counted.Tally>, second: Box<Counted.Tally>)
        let merges: (first: LockedState<Int>, second: LockedState<Int>)

        /// Adds `times` increments to the tally in `box`.
        func increment(_ box: Box<Counted.Tally>, times: Int) throws {
            for _ in 0..<times {
                var mine = try #require(try box.all().first)
                mine.count += 1
                try box.put(&mine)
            }
        }

        /// Waits until the pull horizon is past the tally's last write (another test's open
        /// transaction may hold it below).
        func waitForTheHorizon() async throws {
            #expect(try await eventually {
                try await connection.value("SELECT (pg_snapshot_xmin(pg_current_snapshot()) > _txid)::text FROM \(schema).\"Tally\"") == "true"
            })
        }

        /// The tally on the server, as "count/base".
        func onTheServer() async throws -> String {
            try await connection.value("SELECT count::text || '/' || base::text FROM \(schema).\"Tally\"") ?? "none"
        }

        /// The first replica has pushed 13 (10 and three increments), the second holds 15 (10
        /// and five) from 10: the second merges 13 into 18 and pushes it, and the first pulls it.
        func expectTheSecondToMergeTheSum() async throws {
            try await waitForTheHorizon()
            let merged = try await eventually {
                try await two.syncNow()
                return try await onTheServer() == "18/18"
            }
            let server = try await onTheServer()
            #expect(merged, "the server holds \(server), not 18/18")
            #expect(try await eventually {
                try await one.syncNow()
                return try tallies.first.all().first?.count == 18
            })
            #expect(try tallies.second.all().first.map { [$0.count, $0.base] } == [18, 18])
            #expect(try tallies.first.all().first?.base == 18)
            #expect(try one.store.pendingSyncCount() == 0 && two.store.pendingSyncCount() == 0)
        }
    }

    func withTwoReplicas(_ body: (Apart) async throws -> Void) async throws {
        let schema = try SyncSchema([Counted.Tally.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            let (first, second) = (try TemporaryStore(), try TemporaryStore())
            defer { first.cleanUp(); second.cleanUp() }
            let apart = Apart(connection: connection, schema: schema.schemaName,
                              one: try await replica(first, schema: schema.schemaName), two: try await replica(second, schema: schema.schemaName),
                              tallies: (first.store.box(for: Counted.Tally.self), second.store.box(for: Counted.Tally.self)),
                              merges: (LockedState(0), LockedState(0)))
            Self.addIncrements(first.store, calls: apart.merges.first)
            Self.addIncrements(second.store, calls: apart.merges.second)
            do {
                try await body(apart)
            } catch {
                await apart.one.transport.close()
                await apart.two.transport.close()
                throw error
            }
            await apart.one.transport.close()
            await apart.two.transport.close()
        }
    }

    @Test func incrementsMadeApartAddUp() async throws {
        try await withTwoReplicas { apart in
            var tally = Counted.Tally(count: 10, base: 10)
            try apart.tallies.first.put(&tally)
            // Bound for a whole suite on two cores, where another test's transaction can hold
            // the pull horizon back for a while.
            #expect(try await eventually(attempts: 600, seconds: 90) {
                try await apart.one.syncNow()
                try await apart.two.syncNow()
                return try apart.tallies.second.all().first?.count == 10
            })
            // Apart: three increments on the first, five on the second.
            try apart.increment(apart.tallies.first, times: 3)
            try apart.increment(apart.tallies.second, times: 5)
            try await apart.one.syncNow()          // the server has 13
            try await apart.expectTheSecondToMergeTheSum()
        }
    }

    /// A replica's own earlier push that comes back while it has a newer change of the same
    /// field is not another replica's change: the merge is not asked. Here a transaction held
    /// open on the server keeps the first replica's pull behind its own creation (as another
    /// session's transaction does under load), so its pre-push pull of the increments brings
    /// its own 10 back. Merged as remote, that 10 made the first push 13 with base 13, and the
    /// second replica's merge then counted from 13: the sum ended at 15, not 18.
    @Test func aReplicasOwnEarlierPushIsNotMergedAsRemote() async throws {
        try await withTwoReplicas { apart in
            var tally = Counted.Tally(count: 10, base: 10)
            try apart.tallies.first.put(&tally)
            try await withConnection { holder in
                try await holder.run("BEGIN")
                _ = try await holder.value("SELECT pg_current_xact_id()::text")
                try await apart.one.syncNow()   // pushed; its own row is behind the horizon
                try await holder.run("COMMIT")
            }
            #expect(try await eventually {
                try await apart.two.syncNow()
                return try apart.tallies.second.all().first?.count == 10
            })
            try apart.increment(apart.tallies.first, times: 3)
            try apart.increment(apart.tallies.second, times: 5)
            try await apart.waitForTheHorizon()
            try await apart.one.syncNow()   // pulls its own 10 back, then pushes 13
            #expect(apart.merges.first.withLock { $0 } == 0, "the first replica merged its own earlier push")
            let afterFirst = try await apart.onTheServer()
            #expect(afterFirst == "13/10", "the first pushed \(afterFirst)")
            try await apart.expectTheSecondToMergeTheSum()
            #expect(apart.merges.second.withLock { $0 } == 1)
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
            let transport = FlakyPullTransport(try await testTransport(schema: schema.schemaName, timeout: Self.deadline))
            let replica = try SyncReplica(store: temporary.store, entities: [Counted.Tally.self], transport: transport)
            Self.addIncrements(temporary.store)
            var tally = Counted.Tally(count: 1, base: 1)
            try temporary.store.box(for: Counted.Tally.self).put(&tally)

            transport.failPulls.withLock { $0 = true }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(transport.pushes.withLock { $0 } == 0, "pushed without the pull the merge needs")
            #expect(try temporary.store.pendingSyncCount() == 1)

            transport.failPulls.withLock { $0 = false }
            // The real transport's deadline is short: on a machine stalled by other tests a
            // real pull can time out too, and the next pass goes through.
            #expect(try await eventually(attempts: 5) {
                do {
                    try await replica.syncNow()
                    return true
                } catch let error as SyncTransportError where error.isTransient {
                    return false
                }
            })
            #expect(transport.pushes.withLock { $0 } >= 1)
            #expect(try temporary.store.pendingSyncCount() == 0)
            await transport.close()
        }
    }
}
