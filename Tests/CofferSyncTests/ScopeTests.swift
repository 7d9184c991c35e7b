@_spi(CofferSync) import Coffer
import CofferTestSupport
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Partial replication: a replica holds exactly the rows of its subscriptions that its user
/// may see, as subscriptions change, rows move between scopes, and memberships change,
/// through either transport.
@Suite(.timeLimit(.minutes(3))) struct ScopeTests {
    /// Rooms have members (a plain table); a user sees the posts of the rooms they are a
    /// member of, and a change of membership moves posts for the whole table and every scope.
    static func setUp(_ connection: PostgresConnection, schema s: String) async throws {
        try await connection.run("CREATE TABLE \(s).members (room text NOT NULL, member text NOT NULL, PRIMARY KEY (room, member))")
        try await connection.run("GRANT SELECT ON \(s).members TO PUBLIC")
        let visible = "room IN (SELECT m.room FROM \(s).members m WHERE m.member = \(s).coffer_user_id())"
        try await connection.run(#"ALTER TABLE \#(s)."Post" ENABLE ROW LEVEL SECURITY"#)
        try await connection.run(#"CREATE POLICY posts ON \#(s)."Post" USING (\#(visible)) WITH CHECK (\#(visible))"#)
        try await connection.run("SELECT \(s).coffer_define_scope('Post', '', NULL, '{}', ARRAY['\(s).members'])")
    }

    /// Runs `body` with a fresh schema set up as ``setUp(_:schema:)`` does and a login role
    /// for Alice (connection, schema, Alice's user id).
    static func withAlice(_ body: (PostgresConnection, String, String) async throws -> Void) async throws {
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await setUp(connection, schema: s)
            try await RowLevelSecurityTests.withRoles(connection, schema: s, ["alice"], login: true) { roles in
                try await body(connection, s, roles[0])
            }
        }
    }

    /// A post written by plain SQL (as another service would); returns its sync id.
    @discardableResult
    static func post(_ connection: PostgresConnection, _ s: String, room: String, body: String, topic: UUID? = nil) async throws -> UUID {
        let id = UUID()
        let link = topic.map { "'\($0.uuidString)'" } ?? "NULL"
        try await connection.run(#"INSERT INTO \#(s)."Post" (sync_id, room, body, topic) VALUES ('\#(id.uuidString)', '\#(room)', '\#(body)', \#(link))"#)
        return id
    }

    static func member(_ connection: PostgresConnection, _ s: String, _ user: String, of room: String, _ isMember: Bool) async throws {
        if isMember {
            try await connection.run("INSERT INTO \(s).members VALUES ('\(room)', '\(user)') ON CONFLICT DO NOTHING")
        } else {
            try await connection.run("DELETE FROM \(s).members WHERE room = '\(room)' AND member = '\(user)'")
        }
    }

    static func bodies(_ store: Store) throws -> Set<String> { Set(try store.box(for: Scoped.Post.self).all().map(\.body)) }

    /// Syncs until the replica holds `expected` (another test's open transaction may hold the
    /// server's horizon below the last write for a moment).
    static func converges(_ replica: SyncReplica, to expected: Set<String>) async throws -> Bool {
        try await eventually {
            try await replica.syncNow()
            return try bodies(replica.store) == expected
        }
    }

    @Test(arguments: TransportMode.allCases)
    func aReplicaHoldsItsSubscriptionsAsRowsAndMembershipsMove(mode: TransportMode) async throws {
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await Self.setUp(connection, schema: s)
            try await SharedReplicaTests.withUsers(mode, connection, schema: s) { users, transports in
                let alice = users.0
                for room in ["r1", "r2", "r3"] { try await Self.member(connection, s, alice, of: room, true) }
                for (room, body) in [("r1", "a"), ("r1", "b"), ("r2", "c"), ("r2", "d"), ("r3", "e"), ("r4", "f")] {
                    try await Self.post(connection, s, room: room, body: body)
                }
                let store = try TemporaryStore()
                defer { store.cleanUp() }
                let replica = try SyncReplica(store: store.store, entities: [Scoped.Topic.self, Scoped.Post.self], transport: transports.0)

                // Subscribing replaces the whole table; each scope adds its rows, within what
                // Alice may see (r4's post stays hidden).
                try await replica.subscribe(Scoped.room("r1"))
                #expect(try await Self.converges(replica, to: ["a", "b"]))
                try await replica.subscribe(Scoped.room("r2"))
                try await replica.subscribe(Scoped.room("r4"))
                #expect(try await Self.converges(replica, to: ["a", "b", "c", "d"]))

                // Unsubscribing removes what no other subscription holds; nothing is sent.
                try await replica.unsubscribe(Scoped.room("r1"))
                #expect(try await Self.converges(replica, to: ["c", "d"]))
                #expect(replica.currentStatus.leftScope == 2)
                #expect(try store.store.pendingSyncCount() == 0)

                // A post moved out of a subscribed room leaves; one moved in arrives.
                try await connection.run(#"UPDATE \#(s)."Post" SET room = 'r3' WHERE body = 'd'"#)
                #expect(try await Self.converges(replica, to: ["c"]))
                try await connection.run(#"UPDATE \#(s)."Post" SET room = 'r2' WHERE body = 'e'"#)
                #expect(try await Self.converges(replica, to: ["c", "e"]))

                // Memberships move rows without changing them: out, back in, and into a room
                // subscribed to before it was visible.
                try await Self.member(connection, s, alice, of: "r2", false)
                #expect(try await Self.converges(replica, to: []))
                try await Self.member(connection, s, alice, of: "r2", true)
                #expect(try await Self.converges(replica, to: ["c", "e"]))
                try await Self.member(connection, s, alice, of: "r4", true)
                #expect(try await Self.converges(replica, to: ["c", "e", "f"]))

                // The server kept every post; the subscriptions are stored with the store.
                let count = try await connection.rows(#"SELECT count(*)::text FROM \#(s)."Post""#).first?.first ?? nil
                #expect(count == "6")
                #expect(try replica.subscriptions() == [.wholeTable(Scoped.Topic.self), Scoped.room("r2"), Scoped.room("r4")])
                let reopened = try SyncReplica(store: store.store, entities: [Scoped.Topic.self, Scoped.Post.self], transport: transports.0)
                #expect(try reopened.subscriptions() == replica.subscriptions())
                #expect(try store.store.verify().isIntact)
            }
        }
    }

    /// A link into an object that left the replica's scope waits, and is set again when the
    /// object enters again; the server's link is never touched.
    @Test func aLinkIntoAnObjectThatLeftComesBackWithIt() async throws {
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let topic = UUID()
            try await connection.run(#"INSERT INTO \#(s)."Topic" (sync_id, name) VALUES ('\#(topic.uuidString)', 'lobby')"#)
            let post = try await Self.post(connection, s, room: "r1", body: "hello", topic: topic)
            let store = try TemporaryStore()
            defer { store.cleanUp() }
            let transport = try await testTransport(schema: s)
            defer { Task { await transport.close() } }
            let replica = try SyncReplica(store: store.store, entities: [Scoped.Topic.self, Scoped.Post.self], transport: transport)
            let (topics, posts) = (store.store.box(for: Scoped.Topic.self), store.store.box(for: Scoped.Post.self))
            try await replica.subscribe(Scoped.topic("lobby"))
            #expect(try await eventually {
                try await replica.syncNow()
                return try posts.all().first?.topic.targetId != nil && topics.count() == 1
            })
            let first = try #require(try topics.all().first)
            #expect(try posts.all().first?.topic.targetId == first.id)

            try await replica.unsubscribe(Scoped.topic("lobby"))
            try await replica.syncNow()
            #expect(try topics.count() == 0)
            #expect(try posts.all().first?.topic.targetId == nil)
            #expect(try store.store.pendingSyncCount() == 0)
            let link = try await connection.rows(#"SELECT topic::text FROM \#(s)."Post" WHERE sync_id = '\#(post.uuidString)'"#).first?.first ?? nil
            #expect(link == topic.uuidString.lowercased())

            try await replica.subscribe(Scoped.topic("lobby"))
            try await replica.syncNow()
            let again = try #require(try topics.all().first)
            #expect(again.name == "lobby")
            #expect(try posts.all().first?.topic.targetId == again.id)
            #expect(try store.store.verify().isIntact)
        }
    }

    /// Random subscriptions, memberships, moves, inserts and deletes: after each step the
    /// replica holds exactly the posts of its subscribed rooms that Alice is a member of, as a
    /// plain model of the server computes them.
    @Test func randomMovesMembershipsAndSubscriptionsMatchAModel() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(state: seed)
        try await Self.withAlice { connection, s, alice in
            do {
                let transport = try await testTransport(schema: s, user: alice)
                let store = try TemporaryStore()
                defer { store.cleanUp() }
                let replica = try SyncReplica(store: store.store, entities: [Scoped.Topic.self, Scoped.Post.self], transport: transport)
                let rooms = ["r0", "r1", "r2", "r3", "r4"]
                var posts: [String: String] = [:]   // body -> room
                var members = Set<String>()
                var subscribed = Set<String>()
                var next = 0
                try await replica.subscribe(Scoped.room("r0"))
                subscribed.insert("r0")
                for step in 0..<36 {
                    let room = rooms[Int(random.next() % UInt64(rooms.count))]
                    switch random.next() % 6 {
                    case 0, 1:
                        next += 1
                        try await Self.post(connection, s, room: room, body: "p\(next)")
                        posts["p\(next)"] = room
                    case 2:
                        guard let body = posts.keys.sorted().randomElement(using: &random) else { continue }
                        try await connection.run(#"UPDATE \#(s)."Post" SET room = '\#(room)' WHERE body = '\#(body)'"#)
                        posts[body] = room
                    case 3:
                        guard let body = posts.keys.sorted().randomElement(using: &random) else { continue }
                        try await connection.run(#"DELETE FROM \#(s)."Post" WHERE body = '\#(body)'"#)
                        posts[body] = nil
                    case 4:
                        let joins = !members.contains(room)
                        try await Self.member(connection, s, alice, of: room, joins)
                        if joins { members.insert(room) } else { members.remove(room) }
                    default:
                        if subscribed.contains(room) {
                            try await replica.unsubscribe(Scoped.room(room))
                            subscribed.remove(room)
                        } else {
                            try await replica.subscribe(Scoped.room(room))
                            subscribed.insert(room)
                        }
                    }
                    let expected = Set(posts.filter { subscribed.contains($0.value) && members.contains($0.value) }.keys)
                    let converged = try await Self.converges(replica, to: expected)
                    let held = try Self.bodies(store.store).sorted()
                    #expect(converged, "seed \(seed), step \(step): holds \(held), expected \(expected.sorted())")
                    if !converged { break }
                }
                #expect(try store.store.pendingSyncCount() == 0)
                #expect(try store.store.verify().isIntact)
                await transport.close()
            }
        }
    }

    /// An object with changes the server has not acknowledged does not leave: it stays until
    /// they are, and the replica compares again.
    @Test func anObjectWithUnpushedChangesStaysWhenItLeaves() throws {
        let store = try TemporaryStore()
        defer { store.cleanUp() }
        let posts = store.store.box(for: Scoped.Post.self)
        var post = Scoped.Post(room: "r1", body: "draft")
        try posts.put(&post)
        let syncId = try #require(try posts.syncId(of: post.id))
        let result = try store.store.leaveSyncObjects([syncId, UUID()], entity: "Post")
        #expect(result.left == 0)
        #expect(result.kept == 1)
        #expect(try posts.get(post.id)?.body == "draft")
        #expect(try store.store.pendingSyncCount() == 1)
    }

    /// A changed definition moves rows: its subscribers compare and drop what it no longer
    /// holds. The same definition again (as every install repeats it) records no move.
    @Test func redefiningAScopeMovesItsRowsAndRepeatingItDoesNot() async throws {
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            for body in ["a", "b"] { try await Self.post(connection, s, room: "r1", body: body) }
            let transport = try await testTransport(schema: s)
            defer { Task { await transport.close() } }
            let store = try TemporaryStore()
            defer { store.cleanUp() }
            let replica = try SyncReplica(store: store.store, entities: [Scoped.Post.self], transport: transport)
            try await replica.subscribe(Scoped.room("r1"))
            #expect(try await Self.converges(replica, to: ["a", "b"]))
            let moves = { try await connection.rows("SELECT count(*)::text FROM \(s).moves").first?.first ?? nil }
            let before = try await moves()
            try await schema.install(on: connection, logger: connection.logger)
            #expect(try await moves() == before, "repeating a definition recorded a move")
            try await connection.run("""
                SELECT \(s).coffer_define_scope('Post', 'room', 'r.room = scope.parameters ->> ''room'' AND r.body <> ''b''', ARRAY['room'], '{}')
                """)
            #expect(try await Self.converges(replica, to: ["a"]))
        }
    }

    /// A transport that cannot list ids (no `scopeIds`, as an older gateway) resyncs the
    /// whole table when rows moved, which removes what the user no longer sees.
    @Test func aTransportWithoutIdListingsResyncsWhenRowsMove() async throws {
        try await Self.withAlice { connection, s, alice in
            do {
                for room in ["r1", "r2"] { try await Self.member(connection, s, alice, of: room, true) }
                for (room, body) in [("r1", "a"), ("r2", "b")] { try await Self.post(connection, s, room: room, body: body) }
                let direct = try await testTransport(schema: s, user: alice)
                let transport = ScriptedTransport(direct)   // forwards pulls; lists no ids
                let store = try TemporaryStore()
                defer { store.cleanUp() }
                let replica = try SyncReplica(store: store.store, entities: [Scoped.Post.self], transport: transport)
                #expect(try await Self.converges(replica, to: ["a", "b"]))
                try await Self.member(connection, s, alice, of: "r2", false)
                #expect(try await Self.converges(replica, to: ["a"]))
                #expect(replica.currentStatus.resyncs >= 1)
                await direct.close()
            }
        }
    }

    /// Stored subscription state that cannot be read is damage, reported as such; it is
    /// never taken for "no subscriptions" (which would pull whole tables).
    @Test func damagedSubscriptionStateIsAnErrorNotTheWholeTable() async throws {
        let store = try TemporaryStore()
        defer { store.cleanUp() }
        let transport = try await testTransport(schema: "coffer")   // never connects
        let replica = try SyncReplica(store: store.store, entities: [Scoped.Post.self], transport: transport)
        try store.store.setSyncScopeState(Data("{\"entities\": 7".utf8), stream: transport.stream)
        #expect {
            _ = try replica.subscriptions()
        } throws: { error in
            guard case CofferError.damagedStore(part: .sync, _) = error else { return false }
            return true
        }
        await #expect(throws: CofferError.self) { try await replica.subscribe(Scoped.room("r1")) }
    }

    /// An object that links to one leaving, with a change the server has not acknowledged,
    /// keeps the target here: the pusher reads its values when it sends them, and would send
    /// the link cleared. Once the change is acknowledged, the target leaves and the link
    /// waits, with nothing sent.
    @Test func aTargetOfAnUnpushedLinkStaysUntilTheLinkIsAcknowledged() throws {
        let store = try TemporaryStore()
        defer { store.cleanUp() }
        let (topics, posts) = (store.store.box(for: Scoped.Topic.self), store.store.box(for: Scoped.Post.self))
        var topic = Scoped.Topic(name: "lobby")
        try topics.put(&topic)
        var post = Scoped.Post(room: "r1", body: "hello")
        try posts.put(&post)
        func acknowledgeEverything() throws {
            let taken = try store.store.takeSyncChanges(limit: 1000)
            if let last = taken.last?.mid { try store.store.acknowledgeSyncChanges(through: last) }
            #expect(try store.store.pendingSyncCount() == 0)
        }
        try acknowledgeEverything()
        post.topic.targetId = topic.id
        try posts.put(&post)   // unacknowledged
        let topicId = try #require(try topics.syncId(of: topic.id))
        let held = try store.store.leaveSyncObjects([topicId], entity: "Topic")
        #expect(held.left == 0 && held.kept == 1)
        #expect(try posts.get(post.id)?.topic.targetId == topic.id)

        try acknowledgeEverything()
        let gone = try store.store.leaveSyncObjects([topicId], entity: "Topic")
        #expect(gone.left == 1 && gone.kept == 0)
        #expect(try topics.count() == 0)
        #expect(try posts.get(post.id)?.topic.targetId == nil)
        #expect(try store.store.pendingSyncCount() == 0, "a leave sends nothing")
    }

    /// What the server refuses: a scope it does not define, a predicate that does not plan,
    /// a watched column the entity lacks, a subscription of an entity the replica lacks.
    @Test func unknownScopesAndBadDefinitionsAreRefused() async throws {
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let transport = try await testTransport(schema: s)
            defer { Task { await transport.close() } }
            await #expect(throws: SyncTransportError.self) {
                _ = try await transport.pull(subscription: SyncSubscription(Scoped.Post.self, scope: "nope"), cursor: "0", limit: 10, bytes: 1 << 20)
            }
            do {
                _ = try await transport.pull(subscription: SyncSubscription(Scoped.Post.self, scope: "nope"), cursor: "0", limit: 10, bytes: 1 << 20)
            } catch SyncTransportError.server(_, let state, _) {
                #expect(state == "CF008")
            }
            await #expect(throws: (any Error).self) {
                _ = try await connection.rows("SELECT \(s).coffer_define_scope('Post', 'bad', 'r.missing = 1', '{}', '{}')")
            }
            await #expect(throws: (any Error).self) {
                _ = try await connection.rows("SELECT \(s).coffer_define_scope('Post', 'bad', 'true', ARRAY['missing'], '{}')")
            }
            await #expect(throws: (any Error).self) {
                _ = try await connection.rows("SELECT \(s).coffer_define_scope('Post', '', 'true', '{}', '{}')")
            }
            let store = try TemporaryStore()
            defer { store.cleanUp() }
            let replica = try SyncReplica(store: store.store, entities: [Scoped.Post.self], transport: transport)
            await #expect(throws: SyncReplicaError.unknownEntity("Topic")) { try await replica.subscribe(Scoped.topic("x")) }
            await #expect(throws: SyncReplicaError.self) {
                try await replica.subscribe(SyncSubscription(Scoped.Post.self, scope: "room", parameters: ["room": "a\0b"]))
            }
            // A subscription to a scope the server lacks fails that entity's pull, reported.
            try await replica.subscribe(SyncSubscription(Scoped.Post.self, scope: "nope"))
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(replica.currentStatus.pullFailures.map(\.entity) == ["Post"])
        }
    }
}
