import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The conflict rules coffer_push implements: per-field last writer wins by (hlc, origin),
/// deletes win, no resurrection by a late change, replays change nothing, rejections do not
/// stop the batch, clocks far ahead are clamped.
@Suite struct ConflictTests {
    static func upsert(_ mid: Int, _ id: UUID, _ fields: String, clocks: String) -> String {
        #"{"mid": \#(mid), "entity": "Note", "id": "\#(id.uuidString)", "op": "upsert", "fields": {\#(fields)}, "clocks": {\#(clocks)}}"#
    }

    static func delete(_ mid: Int, _ id: UUID, hlc: UInt64) -> String {
        #"{"mid": \#(mid), "entity": "Note", "id": "\#(id.uuidString)", "op": "delete", "hlc": "\#(hlc)"}"#
    }

    @Test func eachFieldKeepsItsLatestWrite() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let id = UUID()
        let t = hlcNow()
        let (a, b) = (UUID(uuidString: "00000000-0000-0000-0000-00000000000a")!, UUID(uuidString: "00000000-0000-0000-0000-00000000000b")!)
        try await withInstalled(schema) { connection in
            _ = try await connection.push(s, client: a, json: "[" + Self.upsert(1, id, #""title": "a", "pinned": false"#,
                                                                            clocks: #""title": "\#(t + 10)", "pinned": "\#(t + 10)""#) + "]")
            // b's title is older (loses), its pinned newer (wins).
            _ = try await connection.push(s, client: b, json: "[" + Self.upsert(1, id, #""title": "b", "pinned": true"#,
                                                                            clocks: #""title": "\#(t + 5)", "pinned": "\#(t + 20)""#) + "]")
            #expect(try await connection.value("SELECT title || '/' || pinned FROM \(s).\"Note\"") == "a/true")
            // Same clock: the greater origin wins.
            _ = try await connection.push(s, client: b, json: "[" + Self.upsert(2, id, #""title": "b2""#, clocks: #""title": "\#(t + 10)""#) + "]")
            #expect(try await connection.value("SELECT title FROM \(s).\"Note\"") == "b2")
            _ = try await connection.push(s, client: a, json: "[" + Self.upsert(2, id, #""title": "a2""#, clocks: #""title": "\#(t + 10)""#) + "]")
            #expect(try await connection.value("SELECT title FROM \(s).\"Note\"") == "b2")
            #expect(try await connection.value("SELECT _clocks -> 'title' ->> 1 FROM \(s).\"Note\"") == b.uuidString.lowercased())
            // A change that wins nothing writes nothing (no new _txid, so nothing to pull).
            let txid = try await connection.value("SELECT _txid::text FROM \(s).\"Note\"")
            _ = try await connection.push(s, client: a, json: "[" + Self.upsert(3, id, #""title": "old""#, clocks: #""title": "\#(t)""#) + "]")
            #expect(try await connection.value("SELECT _txid::text FROM \(s).\"Note\"") == txid)
        }
    }

    @Test func aClockFarAheadIsClampedToFiveMinutes() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let id = UUID()
        try await withInstalled(schema) { connection in
            let ahead = hlcNow(plus: 3_600_000)
            _ = try await connection.push(s, client: UUID(), json: "[" + Self.upsert(1, id, #""title": "future""#, clocks: #""title": "\#(ahead)""#) + "]")
            let storedText = try await connection.value("SELECT _clocks -> 'title' ->> 0 FROM \(s).\"Note\"")
            let stored = try #require(storedText.flatMap { UInt64($0) })
            #expect(stored < hlcNow(plus: 300_000 + 1_000))
            #expect(stored > hlcNow(plus: 300_000 - 60_000))
            // A write a little later than the clamp wins over the far-future one (clamped
            // too, but a few milliseconds later).
            try await Task.sleep(for: .milliseconds(5))
            _ = try await connection.push(s, client: UUID(), json: "[" + Self.upsert(1, id, #""title": "now""#, clocks: #""title": "\#(hlcNow(plus: 400_000))""#) + "]")
            #expect(try await connection.value("SELECT title FROM \(s).\"Note\"") == "now")
        }
    }

    @Test func deletesWinAndALateChangeDoesNotResurrect() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let id = UUID()
        let t = hlcNow()
        let (a, b) = (UUID(), UUID())
        try await withInstalled(schema) { connection in
            _ = try await connection.push(s, client: a, json: "[" + Self.upsert(1, id, #""title": "x""#, clocks: #""title": "\#(t + 100)""#) + "]")
            // An older delete still deletes.
            _ = try await connection.push(s, client: b, json: "[" + Self.delete(1, id, hlc: t + 1) + "]")
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"Note\"") == "0")
            #expect(try await connection.value("SELECT _hlc::text FROM \(s).tombstones WHERE sync_id = '\(id.uuidString)'") == "\(t + 1)")
            // A later change of the deleted object is rejected, not applied.
            let late = try await connection.push(s, client: a, json: "[" + Self.upsert(2, id, #""title": "y""#, clocks: #""title": "\#(t + 200)""#) + "]")
            let rejected = try #require(late["rejected"] as? [[String: Any]])
            #expect(rejected.count == 1 && (rejected.first?["reason"] as? String)?.hasPrefix("deleted") == true)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"Note\"") == "0")
            let pulled = try await connection.pullAll(s, "Note")
            #expect(pulled.changes.map { $0["op"] as? String } == ["delete"])
        }
    }

    @Test func aReplayedBatchChangesNothing() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let (first, second, third) = (UUID(), UUID(), UUID())
        let t = hlcNow()
        let client = UUID()
        try await withInstalled(schema) { connection in
            let batch = "[" + Self.upsert(1, first, #""title": "1""#, clocks: #""title": "\#(t)""#) + ","
                + Self.upsert(2, second, #""title": "2""#, clocks: #""title": "\#(t)""#) + "]"
            let once = try await connection.push(s, client: client, json: batch)
            #expect(once["lastMid"] as? Int == 2)
            let snapshot = "SELECT string_agg(sync_id || title || _txid, ',' ORDER BY sync_id) FROM \(s).\"Note\""
            let before = try await connection.value(snapshot)
            let again = try await connection.push(s, client: client, json: batch)
            #expect(again["lastMid"] as? Int == 2)
            #expect(try await connection.value(snapshot) == before)
            // An overlapping resend applies only what is new.
            let overlap = "[" + Self.upsert(2, second, #""title": "changed""#, clocks: #""title": "\#(t + 5)""#) + ","
                + Self.upsert(3, third, #""title": "3""#, clocks: #""title": "\#(t)""#) + "]"
            let resent = try await connection.push(s, client: client, json: overlap)
            #expect(resent["lastMid"] as? Int == 3)
            #expect(try await connection.value("SELECT string_agg(title, ',' ORDER BY title) FROM \(s).\"Note\"") == "1,2,3")
        }
    }

    @Test func aRejectedChangeIsRecordedAndTheBatchGoesOn() async throws {
        let schema = try SyncSchema([Sample.self, Owner.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let t = hlcNow()
        let client = UUID()
        let ids = (0..<5).map { _ in UUID() }
        func change(_ mid: Int, _ fields: String) -> String {
            let name = fields.split(separator: "\"")[0]
            return #"{"mid": \#(mid), "entity": "Sample", "id": "\#(ids[mid - 1].uuidString)", "op": "upsert", "fields": {\#(fields)}, "clocks": {"\#(name)": "\#(t)"}}"#
        }
        try await withInstalled(schema) { connection in
            let batch = "[" + [
                change(1, #""string": "ok""#),
                change(2, #""int8": 128"#),
                change(3, #""uuid": "not-a-uuid""#),
                change(4, #""int": 1.5"#),
                change(5, #""string": "also ok""#),
            ].joined(separator: ",") + "]"
            let result = try await connection.push(s, client: client, json: batch)
            #expect(result["lastMid"] as? Int == 5)
            let rejected = try #require(result["rejected"] as? [[String: Any]])
            #expect(rejected.compactMap { $0["mid"] as? Int } == [2, 3, 4])
            let reasons = rejected.compactMap { $0["reason"] as? String }
            #expect(reasons[0].contains("int8"))
            #expect(reasons[1].contains(#"field "uuid""#))
            #expect(reasons[2].contains(#"field "int""#))
            #expect(try await connection.value("SELECT string_agg(string, ',' ORDER BY string) FROM \(s).\"Sample\"") == "also ok,ok")
            #expect(try await connection.value("SELECT string_agg(mid::text, ',' ORDER BY mid) FROM \(s).rejections WHERE client_id = '\(client.uuidString)'") == "2,3,4")
        }
    }
}
