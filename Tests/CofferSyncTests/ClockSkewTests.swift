@_spi(CofferSync) @testable import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Replicas whose clocks are an hour fast, an hour slow, or jump back an hour, syncing through
/// the real server: their hybrid clocks never go back (across a reopen too), every replica
/// ends with the server's rows, and each field holds the write the conflict rules pick (the
/// greatest (clock, origin) after the server's clamp of clocks more than five minutes ahead
/// of its own; a delete beats every write).
@Suite(.timeLimit(.minutes(3))) struct ClockSkewTests {
    static let hour: Int64 = 3_600_000

    /// A slow replica pulls a change and then changes the same field: its change is the later
    /// one, so it wins on the server and everywhere (a slow clock must not lose to what it
    /// has already seen, nor keep a value the server did not take).
    @Test func aSlowReplicasChangeAfterAPullWins() async throws {
        try await withCardReplicas(2) { connection, s, _, nodes in
            let (normal, slow) = (nodes[0], nodes[1])
            SkewedClock(offset: -Self.hour).install(in: slow.temporary.store)

            try await Self.share(from: normal, to: slow)
            let normalClock = try Self.retitle(normal, "normal")
            try await normal.replica.syncNow()
            #expect(try await eventually {
                try await slow.syncTolerantly()
                return try slow.snapshot().values.first?.title == "normal"
            })
            #expect(try slow.temporary.store.syncClockValue() > normalClock, "the pull moved the slow clock past what it brought")

            #expect(try Self.retitle(slow, "slow, after seeing normal") > normalClock)
            let (server, agreed) = try await settle(nodes, connection: connection, schema: s, attempts: 400, seconds: 15)
            #expect(agreed, "the replicas did not reach the server's rows")
            #expect(server.values.first?.title == "slow, after seeing normal", "the later change wins on the server")
        }
    }

    /// A replica's clock jumps back an hour while it is closed: reopened, its hybrid clock
    /// goes on from where it was, and a change it makes after pulling another replica's
    /// change wins over it everywhere.
    @Test func aClockJumpingBackAcrossAReopenStaysMonotonicAndConverges() async throws {
        try await withCardReplicas(1) { connection, s, _, nodes in
            let normal = nodes[0]
            let jumping = try await ReopenableReplica(schema: s)
            defer { jumping.cleanUp() }

            var card = Replicated.Card(title: "created", count: 1, done: false, note: nil)
            try jumping.cards.put(&card)
            for step in 0..<20 {
                card.count = step + 2
                try jumping.cards.put(&card)
            }
            try await jumping.replica.syncNow()
            let beforeJump = try jumping.store.syncClockValue()

            jumping.clock.shift(by: -Self.hour)
            try await jumping.reopen()
            #expect(try jumping.store.syncClockValue() == beforeJump, "the clock is read back, not taken from the wall")
            card = try #require(try jumping.cards.all().first)
            card.count = 100
            try jumping.cards.put(&card)
            let afterJump = try jumping.store.syncClockValue()
            #expect(afterJump > beforeJump, "a write after the jump ticks past the last value")

            #expect(try await eventually {
                try await jumping.syncTolerantly()
                try await normal.syncTolerantly()
                return try normal.snapshot().values.first?.count == 100
            })
            let normalClock = try Self.retitle(normal, "normal")
            try await normal.replica.syncNow()
            #expect(try await eventually {
                try await jumping.syncTolerantly()
                return try jumping.cards.all().first?.title == "normal"
            })
            #expect(try jumping.store.syncClockValue() > normalClock)
            _ = try Self.retitle(jumping, "jumped, after seeing normal")

            let (server, agreed) = try await settle([jumping, normal], connection: connection, schema: s, attempts: 60, seconds: 15)
            #expect(agreed, "the replicas did not reach the server's rows")
            #expect(server.values.first?.title == "jumped, after seeing normal")
            await jumping.replica.transport.close()
        }
    }

    /// An hour-fast replica's clocks are clamped by the server: a change made elsewhere after
    /// its push (by a clock past the clamp) wins on the server, and the fast replica takes it
    /// when it pulls; the fast replica's next change wins again; all end with the server's rows.
    @Test func aFastReplicaIsClampedAndConverges() async throws {
        try await withCardReplicas(2) { connection, s, _, nodes in
            let (fast, ahead) = (nodes[0], nodes[1])
            SkewedClock(offset: Self.hour).install(in: fast.temporary.store)
            SkewedClock(offset: 10 * 60_000).install(in: ahead.temporary.store)  // clamped too, later

            try await Self.share(from: fast, to: ahead)
            let fastClock = try Self.retitle(fast, "fast")
            try await fast.replica.syncNow()
            let stored = try #require(try await connection.value("SELECT _clocks -> 'title' ->> 0 FROM \(s).\"Card\"").flatMap { UInt64($0) })
            let limit = HybridClock.value(milliseconds: HybridClock.systemMilliseconds() + 5 * 60_000) | 0xFFFF
            #expect(stored < fastClock && stored <= limit, "the server clamped the fast clock")

            try await Task.sleep(for: .milliseconds(5))  // the next push's clamp is later
            _ = try Self.retitle(ahead, "ahead, pushed later")
            try await ahead.replica.syncNow()
            #expect(try await CardState.serverRows(connection, schema: s).values.first?.title == "ahead, pushed later")
            #expect(try await eventually {
                try await fast.syncTolerantly()
                return try fast.snapshot().values.first?.title == "ahead, pushed later"
            }, "the fast replica takes the server's winner although its own clock was higher")

            _ = try Self.retitle(fast, "fast again")
            let (server, agreed) = try await settle(nodes, connection: connection, schema: s, attempts: 400, seconds: 15)
            #expect(agreed, "the replicas did not reach the server's rows")
            #expect(server.values.first?.title == "fast again")
        }
    }

    /// Two changes of one field from one client whose clocks the server clamps to the same
    /// value (one batch, or two pushes within a millisecond): the later one wins, as the
    /// client made it later.
    @Test func theLaterOfTwoClampedChangesFromOneClientWins() async throws {
        try await withCardReplicas(1) { connection, s, _, nodes in
            let node = nodes[0]
            try node.create(number: 0)
            try await node.replica.syncNow()
            let id = try #require(try await connection.value("SELECT sync_id::text FROM \(s).\"Card\""))
            let ahead = HybridClock.value(milliseconds: HybridClock.systemMilliseconds() + UInt64(Self.hour))
            let client = UUID().uuidString.lowercased()
            let batch = """
                [{"mid": 1, "entity": "Card", "id": "\(id)", "op": "upsert", "fields": {"title": "first"}, "clocks": {"title": "\(ahead)"}, "hlc": "\(ahead)"},
                 {"mid": 2, "entity": "Card", "id": "\(id)", "op": "upsert", "fields": {"title": "second"}, "clocks": {"title": "\(ahead + 1)"}, "hlc": "\(ahead + 1)"}]
                """
            _ = try await connection.value("SELECT \(s).coffer_push('\(client)', '\(batch)'::jsonb)::text")
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "second")
        }
    }

    /// A replica a little fast (within the server's clamp) creates a card with no note. The
    /// creation reaches the server but its reply is lost (the pass learns that the server
    /// applied it); plain-SQL writes then set the note and the title (stamped at the server's
    /// time, below the creation's clock); the replica pulls while its pushes fail. The row's
    /// fields are the server's answer to the creation, not values it outranks: kept local,
    /// they would stay for good (the row does not come again).
    @Test func aFieldAWholeCreationLeftEmptyTakesThePulledValue() async throws {
        try await Self.withSkewedReplica(offset: 2 * 60_000) { connection, s, local, transport, replica in
            let cards = local.store.box(for: Replicated.Card.self)
            var card = Replicated.Card(title: "made", count: 1, done: false, note: nil)
            try cards.put(&card)

            transport.script.withLock { $0.lostReplies = 1 }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "made", "the server applied the creation")
            #expect(try local.store.pendingSyncCount() == 0, "the pass asked what the server applied and acknowledged the creation")
            _ = try await connection.value("UPDATE \(s).\"Card\" SET note = 'from sql' RETURNING note")

            // Pulls see a commit once no older transaction holds the horizon back (another
            // test's may, for a while): each step waits for its pull, bounded.
            transport.script.withLock { $0.failPushes = true }
            #expect(try await eventually(attempts: 600, seconds: 90) {
                do { try await replica.syncNow() } catch is SyncTransportError {}
                return try cards.get(card.id)?.note == "from sql"
            }, "the pull took the note the creation never sent")
            // A second plain-SQL write, stamped below the creation's clock too: the record
            // now holds a note, but one the server gave, not the creation.
            _ = try await connection.value("UPDATE \(s).\"Card\" SET note = 'from sql again', title = 'retitled' RETURNING note")
            #expect(try await eventually(attempts: 600, seconds: 90) {
                do { try await replica.syncNow() } catch is SyncTransportError {}
                return try cards.get(card.id).map { [$0.note, $0.title] } == ["from sql again", "retitled"]
            }, "the pulled row is the server's answer to the applied creation")
            transport.script.withLock { $0.failPushes = false }
            try await replica.syncNow()
            #expect(try local.store.pendingSyncCount() == 0)
            #expect(try cards.get(card.id)?.note == "from sql again")
            #expect(try await connection.value("SELECT note FROM \(s).\"Card\"") == "from sql again")
            await transport.close()
        }
    }

    /// A replica ten minutes fast (past the server's clamp) changes a card it has pushed
    /// before. The change reaches the server, which keeps it at the clamped clock, but the
    /// answer is lost, and further pushes fail; a plain-SQL write then changes the title again
    /// (its clock follows the clamped one, below the replica's). The replica does not pull
    /// until the server has said what it applied: pulled while the change still looked on
    /// its way, the row would leave the replica's value in place, and once the change is
    /// acknowledged the row never comes again. It ends with the server's title. An answer
    /// that came but could not be read is as lost (it was taken for a rollback).
    @Test(arguments: [
        SyncTransportError.unreachable(operation: "push", detail: "scripted: the reply was lost"),
        SyncTransportError.malformedReply(operation: "push", detail: "scripted: the reply was garbled"),
    ])
    func aChangeWhoseAnswerWasLostTakesALaterSQLWrite(lostAs failure: SyncTransportError) async throws {
        try await Self.withSkewedReplica(offset: 10 * 60_000) { connection, s, local, transport, replica in
            let cards = local.store.box(for: Replicated.Card.self)
            var card = Replicated.Card(title: "made", count: 1, done: false, note: nil)
            try cards.put(&card)
            try await replica.syncNow()
            #expect(try local.store.pendingSyncCount() == 0)

            card.title = "changed here"
            try cards.put(&card)
            transport.script.withLock { script in
                script.lostReplies = 1
                script.lostReplyError = failure
                script.failPushesAfterLostReply = true
            }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(replica.pushAnswerLost, "the answer counts as lost, whatever the failure")
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "changed here", "the server applied the change")
            #expect(try local.store.pendingSyncCount() == 1, "the change is not acknowledged")
            let txid = try #require(try await connection.value("UPDATE \(s).\"Card\" SET title = 'from sql' RETURNING _txid::text"))
            // Once no older transaction holds the horizon back (another test's may, for a
            // while), a pull would see the write.
            #expect(try await eventually(attempts: 600, seconds: 90) {
                try await connection.value("SELECT (pg_snapshot_xmin(pg_current_snapshot()) > '\(txid)'::xid8)::text") == "true"
            })
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(try cards.get(card.id)?.title == "changed here", "nothing was pulled while the answer was unknown")

            transport.script.withLock { $0.failPushes = false }
            #expect(try await eventually(attempts: 600, seconds: 90) {
                do { try await replica.syncNow() } catch is SyncTransportError {}
                return try cards.get(card.id)?.title == "from sql"
            }, "the replica takes the server's title")
            #expect(try local.store.pendingSyncCount() == 0)
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "from sql")
            await transport.close()
        }
    }

    /// The question "which mid did you apply last" gets an answer that cannot be read: the
    /// answer stays lost (the server may have applied the batch), and no pull runs. Before,
    /// any lasting failure of the question ended the wait.
    @Test func aGarbledAnswerToTheQuestionKeepsTheAnswerLost() async throws {
        try await Self.withLostAnswer { connection, s, local, transport, replica in
            transport.script.withLock { script in
                script.lastMidFailures = [.malformedReply(operation: "read the last mutation id", detail: "scripted: garbled")]
            }
            let pullsBefore = transport.script.withLock { $0.pulls.count }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(replica.pushAnswerLost)
            #expect(transport.script.withLock { $0.pulls.count } == pullsBefore, "nothing was pulled")
            transport.script.withLock { $0.failPushes = false }
            try await replica.syncNow()
            #expect(!replica.pushAnswerLost)
            #expect(try local.store.pendingSyncCount() == 0)
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "changed here")
            await transport.close()
        }
    }

    /// The resend that settles a lost answer is refused outright (the user lost the right to
    /// write): asking again would not help, so the wait ends and pulls go on; the change
    /// stays in the outbox. Before, every later pass skipped its pulls for good.
    @Test func aResendRefusedForGoodEndsTheWait() async throws {
        try await Self.withLostAnswer { connection, s, local, transport, replica in
            transport.script.withLock { script in
                script.failPushesAs = .server(operation: "push", sqlState: "42501", message: "scripted: permission denied")
            }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(!replica.pushAnswerLost, "the refusal ended the wait")
            let pullsBefore = transport.script.withLock { $0.pulls.count }
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(transport.script.withLock { $0.pulls.count } > pullsBefore, "pulls go on")
            let pending = try local.store.pendingSyncCount()
            #expect(pending == 1, "the change stays in the outbox")
            await transport.close()
        }
    }

    /// A replica (clock on time) whose change of a pushed card is applied by the server with
    /// its answer lost and every later push failing, as `script` is then set up further.
    static func withLostAnswer(_ body: (PostgresConnection, String, TemporaryStore, ScriptedTransport, SyncReplica) async throws -> Void)
        async throws {
        try await withSkewedReplica(offset: 0) { connection, s, local, transport, replica in
            let cards = local.store.box(for: Replicated.Card.self)
            var card = Replicated.Card(title: "made", count: 1, done: false, note: nil)
            try cards.put(&card)
            try await replica.syncNow()
            card.title = "changed here"
            try cards.put(&card)
            transport.script.withLock { script in
                script.lostReplies = 1
                script.failPushesAfterLostReply = true
            }
            try await body(connection, s, local, transport, replica)
        }
    }

    /// A store of cards whose clock runs `offset` milliseconds fast, with a replica behind a
    /// scripted transport, in a schema of its own installed over `connection`.
    static func withSkewedReplica(offset: Int64,
                                  _ body: (PostgresConnection, String, TemporaryStore, ScriptedTransport, SyncReplica) async throws -> Void)
        async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let local = try TemporaryStore()
            defer { local.cleanUp() }
            SkewedClock(offset: offset).install(in: local.store)
            let transport = ScriptedTransport(try await testTransport(schema: s))
            let replica = try SyncReplica(store: local.store, entities: [Replicated.Card.self], transport: transport)
            try await body(connection, s, local, transport, replica)
        }
    }

    /// An hour-fast, an hour-slow and a jumping replica (back an hour mid-run) and a plain-SQL
    /// writer change the same objects' fields in rounds: every replica's clock only rises,
    /// all end with the server's rows, and each field of the server holds a logged write that
    /// no other logged write beats by the rules (a fast replica's write counts at its clamped
    /// clock: at least five minutes past the time it was made).
    @Test func skewedReplicasAndASQLWriterConverge() async throws {
        try await withCardReplicas(3) { connection, s, log, nodes in
            let clocks = [Self.hour, -Self.hour, 0].map(SkewedClock.init(offset:))
            for (node, clock) in zip(nodes, clocks) { clock.install(in: node.temporary.store) }
            for number in 0..<6 { try nodes[number % 3].create(number: number) }
            // Bound for a whole suite on two cores, where another test's transaction can hold
            // the pull horizon back for a while.
            #expect(try await eventually(attempts: 600, seconds: 90) {
                for node in nodes { try await node.syncTolerantly() }
                return try nodes.allSatisfy { try $0.snapshot().count == 6 }
            })

            var last = try nodes.map { try $0.temporary.store.syncClockValue() }
            let sql = SQLWriter(schema: s, log: log)
            let seed: UInt64 = 0xC10C_5EED
            for round in 0..<6 {
                if round == 3 { clocks[2].shift(by: -Self.hour) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for node in nodes {
                        group.addTask { try await node.writeRandomly(steps: 12, seed: seed &+ UInt64(round * 10 + node.index)) }
                    }
                    group.addTask { try await sql.writeRandomly(steps: 6, seed: seed &+ UInt64(round * 10 + 9)) }
                    try await group.waitForAll()
                }
                for (index, node) in nodes.enumerated() {
                    let now = try node.temporary.store.syncClockValue()
                    #expect(now >= last[index], "replica \(index)'s clock went back in round \(round)")
                    last[index] = now
                }
            }
            // Last, each replica in turn pulls, changes every title it holds (after what it
            // pulled), and pushes: a change made after seeing another must not lose to it.
            for node in nodes {
                try await node.syncTolerantly()
                let origin = try node.temporary.store.syncClientId()
                for var card in try node.cards.all() {
                    let object = try #require(try node.cards.syncId(of: card.id))
                    card.title = "final-\(node.index)"
                    try node.cards.put(&card)
                    log.record(.init(object: object, field: "title", value: card.title,
                                     clock: try node.temporary.store.syncClockValue(), origin: origin))
                }
                try await node.syncTolerantly()
            }
            let origins = try nodes.map { try $0.temporary.store.syncClientId() }
            for origin in origins {
                let ascending = log.all().filter { $0.origin == origin }.map(\.clock)
                #expect(zip(ascending, ascending.dropFirst()).allSatisfy { $0 <= $1 }, "the clocks of \(origin)'s writes ascend")
            }

            let (server, agreed) = try await settle(nodes, connection: connection, schema: s, attempts: 400, seconds: 60)
            #expect(agreed, "the replicas did not reach the server's rows in time")
            for node in nodes {
                #expect(try node.snapshot() == server, "replica \(node.index) holds the server's rows")
            }
            let fast = origins[0]
            let problems = try await Self.checkWinners(log: log, connection: connection, schema: s) { write in
                guard write.origin == fast else { return write.clock }
                // Clamped at its push, which came after the write: at least five minutes
                // past the write's real time.
                let real = HybridClock.milliseconds(of: write.clock) - UInt64(Self.hour)
                return min(write.clock, HybridClock.value(milliseconds: real + 5 * 60_000))
            }
            #expect(problems.isEmpty, "\(problems.prefix(5)); the fast, slow and jumping replicas are \(origins)")
        }
    }

    /// `first` creates a card, and both sync until `second` holds it (another test's open
    /// transaction may hold the pull horizon back a while).
    static func share(from first: ReplicaNode, to second: ReplicaNode) async throws {
        try first.create(number: 0)
        #expect(try await eventually {
            for node in [first, second] { try await node.syncTolerantly() }
            return try second.snapshot().count == 1
        })
    }

    /// Gives the first card of `node` the title `title`; returns the store's clock after the put.
    static func retitle(_ node: any CardReplica, _ title: String) throws -> UInt64 {
        var card = try #require(try node.cards.all().first)
        card.title = title
        try node.cards.put(&card)
        return try node.replica.store.syncClockValue()
    }

    /// Checks each field of the server's rows against the log: it holds the value of a logged
    /// write of the origin its clock names (at that clock unless `least` lowers the writer's
    /// clocks), and no logged write of a live object beats its (clock, origin) by the least
    /// clock it can have had on the server (a field a creation left empty is no stamped
    /// write: a plain-SQL write after it takes the server's clock, which a replica's clock
    /// may be ahead of). Objects a logged delete removed must be gone.
    static func checkWinners(log: WriteLog, connection: PostgresConnection, schema: String,
                             least: (WriteLog.Write) -> UInt64) async throws -> [String] {
        let writes = log.all()
        let deleted = Set(writes.filter { $0.field == nil }.map(\.object))
        var problems: [String] = []
        let rows = try await connection.rows("""
            SELECT sync_id::text, title, count::text, done::text, note, _clocks::text FROM \(schema)."Card"
            """)
        for row in rows {
            let object = try #require(row[0].flatMap { UUID(uuidString: $0) })
            if deleted.contains(object) { problems.append("\(object) was deleted but is on the server"); continue }
            let clocksText = try #require(row[5])
            let clocks = try #require(try JSONSerialization.jsonObject(with: Data(clocksText.utf8)) as? [String: [Any]])
            let values: [String: String?] = ["title": row[1], "count": row[2], "done": row[3], "note": row[4]]
            for (field, value) in values {
                let candidates = writes.filter { $0.object == object && $0.field == field }
                guard clocks[field] != nil else {
                    // No change the server took named the field (a whole creation sends the
                    // fields the record holds): it is empty, as the last write of it left it.
                    let last = candidates.reduce(nil as WriteLog.Write?) { best, write in best.map { WriteLog.beats(write, $0) ? write : $0 } ?? write }
                    if value != nil || last?.value != nil {
                        problems.append("\(object).\(field) has no clock: \(clocksText), value \(value ?? "nil"), last write \(last?.value ?? "nil")")
                    }
                    continue
                }
                guard let stamp = clocks[field], stamp.count == 2,
                      let clock = (stamp[0] as? NSNumber)?.uint64Value ?? (stamp[0] as? String).flatMap({ UInt64($0) }),
                      let origin = (stamp[1] as? String).flatMap(UUID.init(uuidString:)) else {
                    problems.append("\(object).\(field) has no clock: \(clocksText)")
                    continue
                }
                let winner = WriteLog.Write(object: object, field: field, value: value, clock: clock, origin: origin)
                if !candidates.contains(where: { $0.origin == origin && $0.value == value && least($0) <= clock && clock <= $0.clock }) {
                    problems.append("\(object).\(field) = \(value ?? "nil") at \(clock) from \(origin) is no logged write")
                }
                // Of writes with one stamp, the last logged is the change the server got (a
                // whole creation sends its record as it last stood); one the creation left
                // empty (unstamped) has no clock on the server and beats nothing there.
                let sent = candidates.enumerated().filter { index, write in
                    !candidates[(index + 1)...].contains { $0.origin == write.origin && $0.clock == write.clock }
                }.map(\.element)
                for write in sent where write.stamped {
                    var lowest = write
                    lowest.clock = least(write)
                    // The same stamp from the same origin is the same change (its value is
                    // checked above), not a later one.
                    if !(lowest.clock == clock && write.origin == origin), WriteLog.beats(lowest, winner) {
                        // The field's whole history, in log order, to tell what went astray.
                        let history = candidates.map { "\($0.value ?? "nil")@\($0.clock)/\($0.origin.uuidString.prefix(8))" }
                        problems.append("\(object).\(field): \(write.value ?? "nil") at \(lowest.clock) from \(write.origin) beats the server's \(value ?? "nil") at \(clock) from \(origin); history \(history.joined(separator: ", "))")
                    }
                }
            }
        }
        return problems
    }
}

/// A replica's physical clock: the system clock moved by an offset a test may change mid-run.
final class SkewedClock: Sendable {
    private let offset: LockedState<Int64>

    init(offset: Int64) { self.offset = LockedState(offset) }

    func shift(by milliseconds: Int64) { offset.withLock { $0 += milliseconds } }

    func install(in store: Store) {
        store.syncClock.use { [offset] in
            UInt64(max(0, Int64(HybridClock.systemMilliseconds()) + offset.withLock { $0 }))
        }
    }
}

/// A replica whose store can be closed and opened again (same directory, same clock).
final class ReopenableReplica: CardReplica, @unchecked Sendable {
    let directory: String
    let schema: String
    let clock = SkewedClock(offset: 0)
    private(set) var store: Store
    private(set) var replica: SyncReplica

    init(schema: String) async throws {
        let directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        self.directory = directory
        self.schema = schema
        self.store = store
        replica = try await Self.replica(of: store, schema: schema)
        clock.install(in: store)
    }

    private static func replica(of store: Store, schema: String) async throws -> SyncReplica {
        try SyncReplica(store: store, entities: [Replicated.Card.self], transport: try await testTransport(schema: schema),
                        options: .init(pushBatchSize: 7, pullPageSize: 5, poll: (.milliseconds(20), .milliseconds(200)),
                                       retry: (.milliseconds(20), .milliseconds(200))))
    }

    func reopen() async throws {
        await replica.transport.close()
        try store.close()
        store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        clock.install(in: store)
        replica = try await Self.replica(of: store, schema: schema)
    }

    func cleanUp() {
        do { try store.close() } catch { Issue.record("closing the store failed: \(error)") }
        do { try FileManager.default.removeItem(atPath: directory) } catch { Issue.record("removing \(directory) failed: \(error)") }
    }
}
