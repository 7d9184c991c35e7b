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
}
