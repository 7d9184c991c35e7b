@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Replicas and a plain-SQL writer change the same objects at once; after everyone syncs,
/// every replica holds exactly the server's rows, and each field holds its winning write from
/// a log of all writes: the greatest (hlc, origin), a delete beating every write.
@Suite(.timeLimit(.minutes(3))) struct ReplicaConvergenceTests {
    @Test func twoReplicasAndASQLWriterConverge() async throws {
        try await converge(replicas: 2, seed: 0x5EED_0002)
    }

    @Test func threeReplicasAndASQLWriterConverge() async throws {
        try await converge(replicas: 3, seed: 0x5EED_0003)
    }

    func converge(replicas count: Int, seed: UInt64) async throws {
        try await withCardReplicas(count) { connection, s, log, nodes in
            // Replica 0 creates the shared objects; everyone gets them.
            for number in 0..<8 { try nodes[0].create(number: number) }
            // (Another test's open transaction may hold the pull horizon back a while.)
            #expect(try await eventually {
                for node in nodes { try await node.syncTolerantly() }
                return try nodes.allSatisfy { try $0.snapshot().count == 8 }
            })

            // Everyone writes at once, syncing now and then.
            let sql = SQLWriter(schema: s, log: log)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for node in nodes {
                    group.addTask { try await node.writeRandomly(steps: 60, seed: seed &+ UInt64(node.index)) }
                }
                group.addTask { try await sql.writeRandomly(steps: 40, seed: seed &+ 99) }
                try await group.waitForAll()
            }

            let (server, agreed) = try await settle(nodes, connection: connection, schema: s, seconds: 60)
            #expect(agreed, "the replicas did not reach the server's rows in time")
            #expect(server == log.winners(), "the server holds the winning write of every field")
            for node in nodes {
                #expect(try node.snapshot() == server, "replica \(node.index) holds the server's rows")
                #expect(try node.temporary.store.pendingSyncCount() == 0)
                #expect(node.replica.currentStatus.lastError == nil)
            }
            let rejections = nodes.map { $0.replica.currentStatus.rejectedCount }.reduce(0, +)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).rejections") == String(rejections),
                    "every rejection is reported")
        }
    }
}

/// The observable state of one card, as the server and the replicas hold it.
struct CardState: Equatable, Sendable, CustomStringConvertible {
    var title: String
    var count: Int
    var done: Bool
    var note: String?

    var description: String { "\(title)/\(count)/\(done)/\(note ?? "nil")" }

    static func serverRows(_ connection: PostgresConnection, schema: String) async throws -> [UUID: CardState] {
        var rows: [UUID: CardState] = [:]
        for row in try await connection.rows("SELECT sync_id::text, title, count::text, done::text, note FROM \(schema).\"Card\"") {
            let id = try #require(row[0].flatMap { UUID(uuidString: $0) })
            rows[id] = CardState(title: row[1] ?? "", count: Int(row[2] ?? "") ?? .min, done: row[3] == "true", note: row[4])
        }
        return rows
    }
}

/// Every write of the test, with the clock and origin it was made with.
final class WriteLog: Sendable {
    struct Write: Sendable {
        var object: UUID
        var field: String?          // nil: a delete
        var value: String?
        var clock: UInt64
        var origin: UUID
        /// False for a field a whole creation leaves empty: the creation does not send it,
        /// so the server holds no clock for it and the write beats nothing there.
        var stamped = true
    }

    private let writes = LockedState<[Write]>([])

    func record(_ write: Write) { writes.withLock { $0.append(write) } }

    /// Every write so far, in the order they were logged.
    func all() -> [Write] { writes.withLock { $0 } }

    /// Each object's fields at their winning writes; deleted objects are absent.
    func winners() -> [UUID: CardState] {
        let all = writes.withLock { $0 }
        let deleted = Set(all.filter { $0.field == nil }.map(\.object))
        var best: [UUID: [String: Write]] = [:]
        for write in all {
            guard let field = write.field, !deleted.contains(write.object) else { continue }
            if let current = best[write.object]?[field], !Self.beats(write, current) { continue }
            best[write.object, default: [:]][field] = write
        }
        return best.mapValues { fields in
            CardState(title: fields["title"]?.value ?? "", count: Int(fields["count"]?.value ?? "") ?? .min,
                      done: fields["done"]?.value == "true", note: fields["note"]?.value)
        }
    }

    /// (clock, origin) ordered as the server orders them (uuid order is byte order). Of two
    /// writes with the same stamp (one replica's, sent as one change), the later logged wins.
    static func beats(_ a: Write, _ b: Write) -> Bool {
        if a.clock != b.clock { return a.clock > b.clock }
        if a.origin == b.origin { return true }
        return a.origin.uuidString.lowercased() > b.origin.uuidString.lowercased()
    }
}

/// One replica under test: a store, a replica pushing to the cluster, and a writer that logs
/// every local write with the clock it got.
final class ReplicaNode: CardReplica {
    let index: Int
    let temporary: TemporaryStore
    let replica: SyncReplica
    let log: WriteLog
    /// The clocks of the cards this node created: a change of one before a pusher took its
    /// whole creation is part of that creation, sent at its clock (and ticks nothing).
    private let creationClocks = LockedState<[UUID: UInt64]>([:])

    convenience init(index: Int, schema: String, log: WriteLog, port: Int? = nil, timeout: Duration = .seconds(3)) async throws {
        try self.init(index: index, log: log, transport: try await testTransport(schema: schema, port: port, timeout: timeout))
    }

    /// A node that reaches the server through `transport` (a gateway's, say).
    init(index: Int, log: WriteLog, transport: any SyncTransport) throws {
        self.index = index
        self.log = log
        temporary = try TemporaryStore()
        replica = try SyncReplica(store: temporary.store, entities: [Replicated.Card.self], transport: transport,
                                  options: .init(pushBatchSize: 7, pullPageSize: 5,
                                                 poll: (.milliseconds(20), .milliseconds(200)),
                                                 retry: (.milliseconds(20), .milliseconds(200))))
    }

    /// Creates a card and logs its four fields at the write's clock.
    func create(number: Int) throws {
        var card = Replicated.Card(title: "r\(index)-create-\(number)", count: index * 1_000_000 + number,
                                   done: false, note: nil)
        try cards.put(&card)
        let object = try #require(try cards.syncId(of: card.id))
        let clock = try temporary.store.syncClockValue()
        let origin = try temporary.store.syncClientId()
        creationClocks.withLock { $0[object] = clock }
        let fields: [(String, String?)] = [("title", card.title), ("count", String(card.count)), ("done", "false"), ("note", nil)]
        for (field, value) in fields {
            log.record(.init(object: object, field: field, value: value, clock: clock, origin: origin, stamped: value != nil))
        }
    }

    /// Random changes of one field of a random card (each value new, so that every write
    /// changes something), an occasional delete or creation, and a sync now and then.
    func writeRandomly(steps: Int, seed: UInt64) async throws {
        var random = SplitMix64(state: seed)
        let origin = try temporary.store.syncClientId()
        for step in 0..<steps {
            let all = try cards.all()
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 3 || all.isEmpty {
                try create(number: 100 + step)
            } else if var card = all.randomElement(using: &random) {
                let object = try #require(try cards.syncId(of: card.id))
                if roll < 6 {
                    try cards.remove(card.id)
                    log.record(.init(object: object, field: nil, value: nil, clock: try temporary.store.syncClockValue(), origin: origin))
                } else {
                    let previous = card
                    let field: String
                    let value: String?
                    switch roll % 4 {
                    case 0: card.title = "r\(index)-\(step)"; (field, value) = ("title", card.title)
                    case 1: card.count = index * 1_000_000 + 1000 + step; (field, value) = ("count", String(card.count))
                    case 2: card.done.toggle(); (field, value) = ("done", String(card.done))
                    default: card.note = step % 5 == 0 ? nil : "n\(index)-\(step)"; (field, value) = ("note", card.note)
                    }
                    let changed = previous.title != card.title || previous.count != card.count || previous.done != card.done
                        || previous.note != card.note
                    let before = try temporary.store.syncClockValue()
                    try cards.put(&card)
                    let clock = try temporary.store.syncClockValue()
                    if clock != before {
                        log.record(.init(object: object, field: field, value: value, clock: clock, origin: origin))
                    } else if changed {
                        // No tick for a change: it joined the card's untaken whole creation.
                        let creation = try #require(creationClocks.withLock { $0[object] }, "a change of \(object) recorded nothing")
                        log.record(.init(object: object, field: field, value: value, clock: creation, origin: origin, stamped: value != nil))
                    }   // else the put changed nothing: it sends nothing
                }
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                try await syncTolerantly()
            }
        }
    }
}

/// A plain-SQL writer (another service, an admin) changing and deleting the same rows; the
/// triggers give its writes their clocks, which it reads back for the log.
struct SQLWriter: Sendable {
    let schema: String
    let log: WriteLog
    static let origin = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    func writeRandomly(steps: Int, seed: UInt64) async throws {
        var random = SplitMix64(state: seed)
        try await withConnection { connection in
            for step in 0..<steps {
                let ids = try await connection.rows("SELECT sync_id::text FROM \(schema).\"Card\"").compactMap { $0.first ?? nil }
                guard let id = ids.randomElement(using: &random), let object = UUID(uuidString: id) else {
                    try await Task.sleep(for: .milliseconds(5))
                    continue
                }
                let roll = Int.random(in: 0..<100, using: &random)
                if roll < 5 {
                    let gone = try await connection.rows("DELETE FROM \(schema).\"Card\" WHERE sync_id = '\(id)' RETURNING sync_id::text")
                    if !gone.isEmpty { log.record(.init(object: object, field: nil, value: nil, clock: 0, origin: Self.origin)) }
                } else {
                    let (field, value, literal): (String, String?, String) = switch roll % 3 {
                    case 0: ("title", "sql-\(step)", "'sql-\(step)'")
                    case 1: ("count", String(-1000 - step), String(-1000 - step))
                    default: ("note", "sql-note-\(step)", "'sql-note-\(step)'")
                    }
                    let clocks = try await connection.rows("""
                        UPDATE \(schema)."Card" SET \(field) = \(literal) WHERE sync_id = '\(id)' RETURNING _clocks -> '\(field)' ->> 0
                        """)
                    if let text = clocks.first?.first ?? nil, let clock = UInt64(text) {
                        log.record(.init(object: object, field: field, value: value, clock: clock, origin: Self.origin))
                    }
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...10, using: &random)))
            }
        }
    }
}
