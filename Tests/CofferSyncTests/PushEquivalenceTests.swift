import Coffer
import CofferSync
import Foundation
import PostgresNIO
import Testing

/// coffer_push applies most of a batch with a few set-based statements and falls back to the
/// per-change path for what those cannot take. The same random batches pushed into two
/// schemas, one of them with `coffer.push_one_by_one` on (every change alone), must give the
/// same replies, rows, clocks, tombstones and rejections.
@Suite struct PushEquivalenceTests {
    /// A deterministic generator (SplitMix64), so that a failing seed can be replayed.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    /// One random change of a Note or a Tag (codes collide often), sometimes malformed or
    /// with a value the server refuses.
    static func change(mid: Int, ids: [UUID], base: UInt64, random: inout Random) -> String {
        let id = ids[random.below(ids.count)].uuidString
        let tag = random.chance(35)
        let entity = tag ? "Tag" : "Note"
        let clock = { (r: inout Random) in "\"\(base + UInt64(r.below(4_000)) << 16)\"" }
        let roll = random.below(100)
        if roll < 3 {
            return #"{"mid": \#(mid), "entity": "\#(entity)", "id": "not-a-uuid", "op": "upsert", "fields": {}}"#
        }
        if roll < 5 {
            return #"{"mid": \#(mid), "entity": "\#(entity)", "id": "\#(id)", "op": "merge"}"#
        }
        if roll < 8 {
            return #"{"mid": \#(mid), "entity": "\#(entity)", "id": "\#(id)", "op": "delete", "hlc": \#(clock(&random))}"#
        }
        var fields: [String] = []
        var clocks: [String] = []
        let names = tag ? ["code", "label"] : ["title", "pinned"]
        for name in names where random.chance(70) {
            let value: String
            switch (name, random.below(20)) {
            case ("pinned", 0): value = #""yes""#                      // refused: not a boolean
            case ("pinned", _): value = random.chance(50) ? "true" : "false"
            case (_, 0): value = "12"                                   // refused: not a string
            case (_, 1): value = "null"
            case ("code", _): value = "\"c\(random.below(6))\""         // collides with other tags
            default: value = "\"v\(random.below(1_000))\""
            }
            fields.append("\"\(name)\": \(value)")
            if random.chance(95) { clocks.append("\"\(name)\": \(clock(&random))") }
        }
        let create = random.chance(75) ? #", "create": true"# : ""
        let hlc = random.chance(20) ? #", "hlc": \#(clock(&random))"# : ""
        return #"{"mid": \#(mid), "entity": "\#(entity)", "id": "\#(id)", "op": "upsert"\#(create)\#(hlc), "fields": {\#(fields.joined(separator: ", "))}, "clocks": {\#(clocks.joined(separator: ", "))}}"#
    }

    /// Everything a push leaves behind in `schema`, as text.
    static func state(_ connection: PostgresConnection, _ schema: String) async throws -> [[String?]] {
        try await connection.rows("""
            SELECT 'note', sync_id::text, title, pinned::text, _hlc::text, _origin::text, _clocks::text FROM \(schema)."Note"
            UNION ALL SELECT 'tag', sync_id::text, code, label, _hlc::text, _origin::text, _clocks::text FROM \(schema)."Tag"
            UNION ALL SELECT 'tombstone', entity || '/' || sync_id, NULL, NULL, _hlc::text, _origin::text, NULL FROM \(schema).tombstones
            UNION ALL SELECT 'rejection', client_id || '/' || mid, entity, sync_id, reason, change::text, NULL FROM \(schema).rejections
            UNION ALL SELECT 'client', client_id::text, last_mid::text, NULL, NULL, NULL, NULL FROM \(schema).clients
            ORDER BY 1, 2
            """)
    }

    @Test func setBasedPushGivesWhatOneByOneGives() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["COFFER_PUSH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        var random = Random(state: seed)
        let rounds = Int(ProcessInfo.processInfo.environment["COFFER_PUSH_ROUNDS"] ?? "") ?? 40
        let models: [any Entity.Type] = [NoteV2.Note.self, Tagged.Tag.self]
        let setBased = try SyncSchema(models, schema: uniqueSchemaName("set"))
        let oneByOne = try SyncSchema(models, schema: uniqueSchemaName("one"))
        let ids = (0..<120).map { _ in UUID() }
        let clients = (0..<3).map { _ in UUID() }
        var nextMid = [Int](repeating: 1, count: clients.count)
        var lastBatch = [String?](repeating: nil, count: clients.count)
        let base = hlcNow(plus: -600_000)
        try await withInstalled(setBased) { a in
            try await withInstalled(oneByOne) { b in
                try await b.run("SET coffer.push_one_by_one = on")
                for round in 0..<rounds {
                    let client = random.below(clients.count)
                    let batch: String
                    if let previous = lastBatch[client], random.chance(10) {
                        batch = previous   // a resend: changes nothing
                    } else {
                        let size = 1 + random.below(random.chance(30) ? 200 : 40)
                        var changes: [String] = []
                        for _ in 0..<size {
                            changes.append(Self.change(mid: nextMid[client], ids: ids, base: base, random: &random))
                            nextMid[client] += 1 + random.below(2)
                        }
                        batch = "[" + changes.joined(separator: ",\n") + "]"
                    }
                    lastBatch[client] = batch
                    let replyA = try await a.push(setBased.schemaName, client: clients[client], json: batch)
                    let replyB = try await b.push(oneByOne.schemaName, client: clients[client], json: batch)
                    #expect(replyA["lastMid"] as? Int == replyB["lastMid"] as? Int, "seed \(seed), round \(round)")
                    let rejectedA = (replyA["rejected"] as? [[String: Any]] ?? []).map { "\($0["mid"] ?? "")/\($0["reason"] ?? "")" }
                    let rejectedB = (replyB["rejected"] as? [[String: Any]] ?? []).map { "\($0["mid"] ?? "")/\($0["reason"] ?? "")" }
                    #expect(rejectedA == rejectedB, "seed \(seed), round \(round)")
                }
                let stateA = try await Self.state(a, setBased.schemaName)
                let stateB = try await Self.state(b, oneByOne.schemaName)
                #expect(stateA.count == stateB.count, "seed \(seed)")
                for (rowA, rowB) in zip(stateA, stateB) where rowA != rowB {
                    Issue.record("seed \(seed): \(rowA) != \(rowB)")
                    break
                }
                // The random batches exercised both outcomes.
                #expect(stateA.contains { $0[0] == "rejection" }, "seed \(seed)")
                #expect(stateA.contains { $0[0] == "note" } && stateA.contains { $0[0] == "tag" }, "seed \(seed)")
            }
        }
    }
}
