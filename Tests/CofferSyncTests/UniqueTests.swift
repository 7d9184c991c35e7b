import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A `@Unique` property is unique on the server: a push that collides is a rejection naming
/// the property and the value, and the rest of the batch applies.
@Suite struct UniqueTests {
    static func tag(_ mid: Int, _ id: UUID, code: String, create: Bool = true, clock: UInt64) -> String {
        #"{"mid": \#(mid), "entity": "Tag", "id": "\#(id.uuidString)", "op": "upsert"\#(create ? #", "create": true"# : ""), "fields": {"code": "\#(code)", "label": "l\#(mid)"}, "clocks": {"code": "\#(clock)", "label": "\#(clock)"}}"#
    }

    @Test func aCollidingPushIsARejectionNamingThePropertyAndValue() async throws {
        let schema = try SyncSchema([Tagged.Tag.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        #expect(schema.tables[0].columns.first { $0.name == "code" }?.isUnique == true)
        let client = UUID()
        let t = hlcNow()
        let ids = (0..<8).map { _ in UUID() }
        try await withInstalled(schema) { connection in
            #expect(try await connection.value("SELECT indexdef FROM pg_indexes WHERE schemaname = '\(s)' AND indexname = 'Tag_code_unique'")?
                .contains("UNIQUE") == true)
            let first = try await connection.push(s, client: client, json: "[" + [
                Self.tag(1, ids[0], code: "A7", clock: t),
                Self.tag(2, ids[1], code: "A7", clock: t),   // collides with mid 1
                Self.tag(3, ids[2], code: "B1", clock: t),
                Self.tag(4, ids[3], code: "C1", clock: t),
            ].joined(separator: ",") + "]")
            #expect(first["lastMid"] as? Int == 4)
            let rejected = try #require(first["rejected"] as? [[String: Any]])
            #expect(rejected.compactMap { $0["mid"] as? Int } == [2])
            let reason = rejected.first?["reason"] as? String ?? ""
            #expect(reason.hasPrefix("unique:") && reason.contains("code") && reason.contains("A7"), "\(reason)")
            #expect(try await connection.value("SELECT string_agg(code, ',' ORDER BY code) FROM \(s).\"Tag\"") == "A7,B1,C1")
            #expect(try await connection.value("SELECT reason FROM \(s).rejections WHERE mid = 2") == reason)

            // Updates of existing objects in one batch: one takes a code another holds.
            let second = try await connection.push(s, client: client, json: "[" + [
                Self.tag(5, ids[2], code: "B2", create: false, clock: t + 1),
                Self.tag(6, ids[3], code: "A7", create: false, clock: t + 1),   // A7 is taken
                Self.tag(7, ids[0], code: "A8", create: false, clock: t + 1),
                Self.tag(8, ids[4], code: "B1", clock: t + 1),                  // freed by mid 5
            ].joined(separator: ",") + "]")
            #expect((second["rejected"] as? [[String: Any]])?.compactMap { $0["mid"] as? Int } == [6])
            #expect(try await connection.value("SELECT string_agg(code, ',' ORDER BY code) FROM \(s).\"Tag\"") == "A8,B1,B2,C1")

            // Plain SQL meets the same index.
            await #expect(throws: SQLFailure.self) {
                try await connection.run("INSERT INTO \(s).\"Tag\" (code, label) VALUES ('B2', 'sql')")
            }
        }
    }
}
