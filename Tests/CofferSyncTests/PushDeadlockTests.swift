@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Pushers updating the same rows at once, each batch naming them in its own order (each
/// object twice, so that a batch is applied in several runs), never deadlock: `coffer_push` locks
/// every row a batch changes before changing any, in one order for all. Every row ends at its
/// per-field winner.
@Suite(.timeLimit(.minutes(2))) struct PushDeadlockTests {
    @Test func concurrentPushesOfTheSameRowsNeverDeadlock() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let log = WriteLog()
            let base = hlc(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000) - 3_600_000)
            // The rows, created by one client.
            let creator = UUID()
            let objects = (0..<6).map { _ in UUID() }
            let creations = objects.enumerated().map { index, object in
                for (field, value) in [("title", "created"), ("count", "0")] {
                    log.record(.init(object: object, field: field, value: value, clock: base, origin: creator))
                }
                return #"{"mid": \#(index + 1), "entity": "Card", "id": "\#(object.uuidString)", "op": "upsert", "create": true, "#
                    + #""fields": {"title": "created", "count": 0, "done": false}, "clocks": {"title": "\#(base)", "count": "\#(base)", "done": "\#(base)"}}"#
            }
            _ = try await connection.push(s, client: creator, json: "[" + creations.joined(separator: ",") + "]")

            let deadlocks = LockedState(0)
            let rounds = LockedState(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pusher in 0..<4 {
                    group.addTask {
                        try await Self.push(pusher: pusher, objects: objects, schema: s, base: base, log: log,
                                            rounds: Self.roundsPerPusher, deadlocks: deadlocks, counted: rounds)
                    }
                }
                try await group.waitForAll()
            }
            let server = try await CardState.serverRows(connection, schema: s)
            let winners = log.winners()
            #expect(rounds.withLock { $0 } == 4 * Self.roundsPerPusher)
            #expect(deadlocks.withLock { $0 } == 0, "pushes deadlocked (40P01) \(deadlocks.withLock { $0 }) times")
            for object in objects {
                #expect(server[object]?.title == winners[object]?.title, "title of \(object)")
                #expect(server[object]?.count == winners[object]?.count, "count of \(object)")
            }
        }
    }

    /// Rounds each pusher runs: a count, not a duration, so a loaded machine runs the same
    /// interleavings more slowly instead of fewer of them.
    static let roundsPerPusher = 20

    /// One pusher: `rounds` rounds of one batch each. A batch changes four random
    /// rows in random order, each twice (its title, its count); each write gets a random clock
    /// (in the past, so none is clamped). A deadlock is counted and the batch sent again.
    static func push(pusher: Int, objects: [UUID], schema: String, base: UInt64, log: WriteLog,
                     rounds: Int, deadlocks: LockedState<Int>, counted: LockedState<Int>) async throws {
        let client = UUID()
        var random = SplitMix64(state: 0xDEAD_10C0 &+ UInt64(pusher))
        var mid = 0
        try await withConnection { connection in
            for _ in 0..<rounds {
                let chosen = Array(objects.shuffled(using: &random).prefix(4))
                var changes: [String] = []
                var writes: [WriteLog.Write] = []
                // Each object twice in a row: the batch is applied in runs ({a}, {a, b}, {b, c},
                // ...) that lock rows in this pusher's own order unless the push orders them.
                for object in chosen.flatMap({ [$0, $0] }) {
                    mid += 1
                    let clock = base + UInt64.random(in: 1...1_000_000, using: &random)
                    let (field, value, json) = mid.isMultiple(of: 2)
                        ? ("title", "p\(pusher)-\(mid)", "\"p\(pusher)-\(mid)\"")
                        : ("count", String(pusher * 1_000_000 + mid), String(pusher * 1_000_000 + mid))
                    changes.append(#"{"mid": \#(mid), "entity": "Card", "id": "\#(object.uuidString)", "op": "upsert", "#
                        + #""fields": {"\#(field)": \#(json)}, "clocks": {"\#(field)": "\#(clock)"}}"#)
                    writes.append(.init(object: object, field: field, value: value, clock: clock, origin: client))
                }
                while true {
                    do {
                        _ = try await connection.push(schema, client: client, json: "[" + changes.joined(separator: ",") + "]")
                        break
                    } catch let failure as SQLFailure where failure.code == "40P01" {
                        deadlocks.withLock { $0 += 1 }
                    }
                }
                for write in writes { log.record(write) }
                counted.withLock { $0 += 1 }
            }
        }
    }
}
