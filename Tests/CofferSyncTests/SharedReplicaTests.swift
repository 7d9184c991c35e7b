@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Replicas of two users, each connecting as its own role under row-level security: each
/// pulls only the rows its policies show it, and a change of a row that left its view is a
/// `forbidden:` rejection that the replica records, after which the object leaves it, while
/// the rest of its queue is applied.
@Suite(.timeLimit(.minutes(2))) struct SharedReplicaTests {
    /// Cards belong to the user their title starts with; cards whose title starts with
    /// "shared" are everyone's.
    static func policies(_ s: String) -> [String] {
        let mine = #"starts_with(title, \#(s).coffer_user_id()) OR starts_with(title, 'shared')"#
        return [
            #"ALTER TABLE \#(s)."Card" ENABLE ROW LEVEL SECURITY"#,
            #"CREATE POLICY cards ON \#(s)."Card" USING (\#(mine)) WITH CHECK (\#(mine))"#,
        ]
    }

    /// Two users' transports in `mode`, with each user's id (what `coffer_user_id()` returns).
    static func withUsers(_ mode: TransportMode, _ connection: PostgresConnection, schema s: String,
                          _ body: (_ users: (String, String), _ transports: (any SyncTransport, any SyncTransport)) async throws -> Void) async throws {
        // Runs `body` with the two users' transports and closes them afterwards, also when it throws.
        func run(_ users: (String, String), _ transports: (any SyncTransport, any SyncTransport)) async throws {
            do {
                try await body(users, transports)
            } catch {
                await transports.0.close()
                await transports.1.close()
                throw error
            }
            await transports.0.close()
            await transports.1.close()
        }
        switch mode {
        case .direct:
            try await RowLevelSecurityTests.withRoles(connection, schema: s, ["alice", "bob"], login: true) { roles in
                try await run((roles[0], roles[1]), (try await testTransport(schema: s, user: roles[0]),
                                                     try await testTransport(schema: s, user: roles[1])))
            }
        case .gateway:
            try await TestGateway.with(connection, schema: s) { gateway in
                let users = ("alice_" + s, "bob_" + s)
                try await run(users, (try await gateway.transport(for: users.0), try await gateway.transport(for: users.1)))
            }
        }
    }

    @Test(arguments: TransportMode.allCases)
    func eachUserPullsTheirRowsAndAWriteToAnothersIsRejectedWhileTheRestIsApplied(mode: TransportMode) async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            for statement in Self.policies(s) { try await connection.run(statement) }
            try await Self.withUsers(mode, connection, schema: s) { users, transport in
                let (aliceRole, bobRole) = users
                let (a, b) = (try TemporaryStore(), try TemporaryStore())
                defer { a.cleanUp(); b.cleanUp() }
                let alice = try SyncReplica(store: a.store, entities: [Replicated.Card.self], transport: transport.0)
                let bob = try SyncReplica(store: b.store, entities: [Replicated.Card.self], transport: transport.1)
                let cards = (a: a.store.box(for: Replicated.Card.self), b: b.store.box(for: Replicated.Card.self))

                // Bob makes a private card and a shared one; Alice sees only the shared one.
                var bobsPrivate = Replicated.Card(title: bobRole + " private")
                try cards.b.put(&bobsPrivate)
                var shared = Replicated.Card(title: "shared plan")
                try cards.b.put(&shared)
                try await bob.syncNow()
                // Another test's open transaction may hold the server's horizon below Bob's push
                // for a moment: Alice pulls until she has it.
                #expect(try await eventually {
                    try await alice.syncNow()
                    return try cards.a.all().map(\.title) == ["shared plan"]
                })
                let sharedId = try #require(try cards.b.syncId(of: shared.id))
                let alicesShared = try #require(try cards.a.all().first)

                // Bob takes the shared card private; Alice, before she pulls that, edits it and
                // makes a card of her own.
                shared.title = bobRole + " taken back"
                try cards.b.put(&shared)
                try await bob.syncNow()
                var edited = alicesShared
                edited.count = 42
                try cards.a.put(&edited)
                var own = Replicated.Card(title: aliceRole + " list")
                try cards.a.put(&own)
                let status = try await alice.syncNow()

                // Her edit is refused as forbidden and recorded; her own card went through; the
                // card she may no longer see has left her replica; her queue is empty.
                #expect(status.rejectedCount == 1)
                let rejections = try a.store.syncRejections()
                #expect(rejections.count == 1)
                #expect(rejections.first?.syncId == sharedId)
                #expect(rejections.first?.reason.hasPrefix("forbidden: ") == true, "\(rejections)")
                #expect(try a.store.pendingSyncCount() == 0)
                #expect(try cards.a.all().map(\.title) == [aliceRole + " list"])

                // Bob's rows are his: the edit never reached them, and he never sees Alice's card.
                try await bob.syncNow()
                #expect(Set(try cards.b.all().map(\.title)) == [bobRole + " private", bobRole + " taken back"])
                #expect(try cards.b.all().allSatisfy { $0.count == 0 })
                let rows = try await CardState.serverRows(connection, schema: s)
                #expect(rows[sharedId]?.count == 0)
                #expect(rows.count == 3)
            }
        }
    }
}
