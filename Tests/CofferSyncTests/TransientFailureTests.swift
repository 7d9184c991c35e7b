@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A change that fails for a passing reason (here a lock another session holds past
/// `lock_timeout`) fails the whole push, to be retried: recording it as a rejection would let
/// the replica acknowledge a write the server never applied.
@Suite struct TransientFailureTests {
    @Test func aLockTimeoutFailsThePushInsteadOfRejectingTheChange() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let client = UUID()
            let id = UUID().uuidString
            func change(_ mid: Int, _ title: String, create: Bool) -> [String: Any] {
                ["mid": mid, "entity": "Card", "id": id, "op": "upsert", "create": create,
                 "fields": ["title": title], "clocks": ["title": "\(hlcNow())"]]
            }
            _ = try await connection.push(s, client: client, [change(1, "a", create: true)])
            try await withConnection { holder in
                try await holder.run("BEGIN")
                try await holder.run("SELECT 1 FROM \(s).\"Card\" FOR UPDATE")
                try await connection.run("SET lock_timeout = '200ms'")
                await #expect(throws: SQLFailure.self) { _ = try await connection.push(s, client: client, [change(2, "b", create: false)]) }
                try await connection.run("RESET lock_timeout")
                try await holder.run("ROLLBACK")
            }
            #expect(try await connection.value("SELECT last_mid::text FROM \(s).clients") == "1")
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).rejections") == "0")
            // Retried once the lock is gone, it applies.
            let reply = try await connection.push(s, client: client, [change(2, "b", create: false)])
            #expect(reply["lastMid"] as? Int == 2)
            #expect(try await connection.value("SELECT title FROM \(s).\"Card\"") == "b")
        }
    }
}
