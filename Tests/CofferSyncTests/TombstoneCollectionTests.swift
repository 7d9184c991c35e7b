import CofferSync
import Foundation
import PostgresNIO
import Testing

/// coffer_gc removes tombstones older than the retention and raises the floor; a pull from
/// a cursor below the floor fails with CF004 (resync), a pull from "0" still works.
@Suite struct TombstoneCollectionTests {
    @Test func collectingRaisesTheFloorAndAnOldCursorMustResync() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let client = UUID()
        let t = hlcNow()
        let ids = (0..<3).map { _ in UUID() }
        try await withInstalled(schema) { connection in
            let creations = ids.enumerated().map { index, id in
                #"{"mid": \#(index + 1), "entity": "Note", "id": "\#(id.uuidString)", "op": "upsert", "create": true, "fields": {"title": "n\#(index)"}, "clocks": {"title": "\#(t)"}}"#
            }
            _ = try await connection.push(s, client: client, json: "[" + creations.joined(separator: ",") + "]")
            let before = try await connection.pullAll(s, "Note")
            #expect(before.changes.count == 3)

            _ = try await connection.push(s, client: client, json: """
                [{"mid": 4, "entity": "Note", "id": "\(ids[0].uuidString)", "op": "delete", "hlc": "\(t + 1)"}]
                """)
            try await connection.run("DELETE FROM \(s).\"Note\" WHERE sync_id = '\(ids[1].uuidString)'")
            let afterDeletes = try await connection.pullAll(s, "Note", cursor: before.cursor)
            #expect(afterDeletes.changes.map { $0["op"] as? String } == ["delete", "delete"])

            // Young tombstones stay.
            let kept = try decodeObject(try await connection.value("SELECT \(s).coffer_gc(interval '1 hour')::text"))
            #expect(kept["removed"] as? Int == 0)
            #expect(kept["floor"] as? String == "0")
            // Every tombstone older than now goes.
            let collected = try decodeObject(try await connection.value("SELECT \(s).coffer_gc(interval '0')::text"))
            #expect(collected["removed"] as? Int == 2)
            let floor = try #require((collected["floor"] as? String).flatMap { UInt64($0) })
            #expect(try await connection.value("SELECT value FROM \(s).meta WHERE key = 'gc_floor'") == String(floor))
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).tombstones") == "0")

            // A replica that had not seen the deletes must resync.
            do {
                _ = try await connection.pull(s, "Note", cursor: before.cursor, limit: 100)
                Issue.record("a pull from below the floor succeeded")
            } catch let failure as SQLFailure {
                #expect(failure.code == "CF004")
                #expect(failure.message.contains("resync"))
            }
            // One that had seen them goes on; a resync from "0" brings the live row only.
            #expect(UInt64(afterDeletes.cursor.split(separator: "/")[0]) ?? 0 >= floor)
            _ = try await connection.pull(s, "Note", cursor: afterDeletes.cursor, limit: 100)
            let resynced = try await connection.pullAll(s, "Note")
            #expect(resynced.changes.compactMap { $0["id"] as? String } == [ids[2].uuidString.lowercased()])

            // The floor never goes down, and a retention must be given.
            let again = try decodeObject(try await connection.value("SELECT \(s).coffer_gc(interval '0')::text"))
            #expect(again["floor"] as? String == String(floor))
            await #expect(throws: SQLFailure.self) {
                _ = try await connection.value("SELECT \(s).coffer_gc(interval '-1 day')::text")
            }
        }
    }
}
