@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The sync functions run as the caller, so row-level security on an entity table decides
/// what a role pulls and changes. A change the policies refuse is a `forbidden:` rejection and
/// the rest of the batch is applied; a hidden row is never taken for a missing one (a delete
/// of it must not leave a tombstone, which would remove the row from every replica); a
/// policy that cannot tell who pushes fails the push instead of rejecting its changes for good.
@Suite(.timeLimit(.minutes(2))) struct RowLevelSecurityTests {
    /// Cards belong to the role their title starts with.
    static func policies(_ s: String) -> [String] {
        [
            #"ALTER TABLE \#(s)."Card" ENABLE ROW LEVEL SECURITY"#,
            #"CREATE POLICY own_read ON \#(s)."Card" FOR SELECT USING (starts_with(title, current_user::text))"#,
            #"CREATE POLICY own_create ON \#(s)."Card" FOR INSERT WITH CHECK (starts_with(title, current_user::text))"#,
            #"CREATE POLICY own_edit ON \#(s)."Card" FOR UPDATE USING (starts_with(title, current_user::text)) "#
                + #"WITH CHECK (starts_with(title, current_user::text))"#,
            #"CREATE POLICY own_delete ON \#(s)."Card" FOR DELETE USING (starts_with(title, current_user::text))"#,
        ]
    }

    /// Runs `body` with roles named after the schema (roles are the cluster's: each test gets
    /// its own), each granted the use of the schema by `coffer_grant` alone (so the sync
    /// functions keep the bookkeeping themselves), and drops them afterwards. `login` roles
    /// can connect (a connection as one is a user of its own: `coffer_user_id()`); the test
    /// role can `SET ROLE` to every one.
    static func withRoles(_ connection: PostgresConnection, schema s: String, _ names: [String], login: Bool = false,
                          privileges: String? = nil, _ body: ([String]) async throws -> Void) async throws {
        let roles = names.map { "\($0)_\(s)" }
        for role in roles {
            try await connection.run("CREATE ROLE \(role) \(login ? "LOGIN" : "NOLOGIN")")
            try await connection.run("GRANT \(role) TO current_user")
            try await connection.run("SELECT \(s).coffer_grant('\(role)')")
            if let privileges {
                try await connection.run("REVOKE ALL ON \(s).\"Card\" FROM \(role)")
                try await connection.run("GRANT \(privileges) ON \(s).\"Card\" TO \(role)")
            }
        }
        do {
            try await body(roles)
        } catch {
            try? await connection.run("RESET ROLE")
            for role in roles {
                try? await connection.run("DROP OWNED BY \(role)")
                try? await connection.run("DROP ROLE \(role)")
            }
            throw error
        }
        try await connection.run("RESET ROLE")
        for role in roles {
            try await connection.run("DROP OWNED BY \(role)")
            try await connection.run("DROP ROLE \(role)")
        }
    }

    static func creation(_ mid: Int, _ id: UUID, title: String, clock: UInt64) -> [String: Any] {
        ["mid": mid, "entity": "Card", "id": id.uuidString, "op": "upsert", "create": true,
         "fields": ["title": title, "count": 0, "done": false],
         "clocks": ["title": String(clock), "count": String(clock), "done": String(clock)]]
    }

    static func edit(_ mid: Int, _ id: UUID, count: Int, clock: UInt64) -> [String: Any] {
        ["mid": mid, "entity": "Card", "id": id.uuidString, "op": "upsert",
         "fields": ["count": count], "clocks": ["count": String(clock)]]
    }

    static func delete(_ mid: Int, _ id: UUID, clock: UInt64) -> [String: Any] {
        ["mid": mid, "entity": "Card", "id": id.uuidString, "op": "delete", "hlc": String(clock)]
    }

    static func reasons(_ reply: [String: Any]) -> [Int: String] {
        var reasons: [Int: String] = [:]
        for rejection in reply["rejected"] as? [[String: Any]] ?? [] {
            if let mid = (rejection["mid"] as? NSNumber)?.intValue { reasons[mid] = rejection["reason"] as? String ?? "" }
        }
        return reasons
    }

    @Test(arguments: [false, true]) func aWriteTheUsersPoliciesRefuseIsRejectedAndTheRestIsApplied(oneByOne: Bool) async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            for statement in Self.policies(s) { try await connection.run(statement) }
            if oneByOne { try await connection.run("SET coffer.push_one_by_one = on") }
            try await Self.withRoles(connection, schema: s, ["alice", "bob"]) { roles in
                let (alice, bob) = (roles[0], roles[1])
                let clock = hlcNow(plus: -60_000)
                let bobsCards = [UUID(), UUID()]
                try await connection.run("SET ROLE \(bob)")
                let bobs = try await connection.push(s, client: UUID(), [
                    Self.creation(1, bobsCards[0], title: bob + " card", clock: clock),
                    Self.creation(2, bobsCards[1], title: bob + " list", clock: clock),
                ])
                #expect(Self.reasons(bobs).isEmpty)

                try await connection.run("SET ROLE \(alice)")
                let alicesCard = UUID()
                let stolen = UUID()
                let reply = try await connection.push(s, client: UUID(), [
                    Self.creation(1, alicesCard, title: alice + " card", clock: clock + 1),
                    Self.edit(2, bobsCards[0], count: 99, clock: clock + 2),
                    Self.delete(3, bobsCards[1], clock: clock + 3),
                    Self.creation(4, stolen, title: bob + " forged", clock: clock + 4),
                    Self.edit(5, alicesCard, count: 5, clock: clock + 5),
                    // The same id as Bob's card, as a creation: the row exists, hidden.
                    Self.creation(6, bobsCards[0], title: alice + " takeover", clock: clock + 6),
                ])
                let reasons = Self.reasons(reply)
                #expect(Set(reasons.keys) == [2, 3, 4, 6], "\(reasons)")
                for mid in [2, 3, 4, 6] {
                    #expect(reasons[mid]?.hasPrefix("forbidden: ") == true, "mid \(mid): \(reasons[mid] ?? "applied")")
                }
                // Alice pulls her own card only.
                let pulled = replay(try await connection.pullAll(s, "Card").changes)
                #expect(Set(pulled.keys) == [alicesCard.uuidString.lowercased()], "\(pulled.keys)")
                #expect((pulled[alicesCard.uuidString.lowercased()]?["count"] as? NSNumber)?.intValue == 5)

                // Bob's rows are untouched and nothing was tombstoned.
                try await connection.run("RESET ROLE")
                let rows = try await CardState.serverRows(connection, schema: s)
                #expect(rows[bobsCards[0]] == CardState(title: bob + " card", count: 0, done: false, note: nil))
                #expect(rows[bobsCards[1]] == CardState(title: bob + " list", count: 0, done: false, note: nil))
                #expect(rows[stolen] == nil)
                #expect(try await connection.rows("SELECT entity, sync_id::text, _origin::text FROM \(s).tombstones") == [])
            }
        }
    }

    /// A role that may read and insert an entity but neither update nor delete it creates
    /// objects; its edits and deletes are rejected, never failing its pushes.
    @Test func aRoleThatMayOnlyInsertCreatesAndIsRefusedTheRest() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await Self.withRoles(connection, schema: s, ["writer"], privileges: "SELECT, INSERT") { roles in
                try await connection.run("SET ROLE \(roles[0])")
                let clock = hlcNow(plus: -60_000)
                let card = UUID()
                let client = UUID()
                let first = try await connection.push(s, client: client, [
                    Self.creation(1, card, title: "note", clock: clock),
                    Self.edit(2, card, count: 3, clock: clock + 1),
                ])
                #expect(Set(Self.reasons(first).keys) == [2], "\(Self.reasons(first))")
                let second = try await connection.push(s, client: client, [
                    Self.edit(3, card, count: 4, clock: clock + 2),
                    Self.delete(4, card, clock: clock + 3),
                ])
                let reasons = Self.reasons(second)
                #expect(Set(reasons.keys) == [3, 4], "\(reasons)")
                #expect(reasons.values.allSatisfy { $0.hasPrefix("forbidden: ") }, "\(reasons)")
                try await connection.run("RESET ROLE")
                let rows = try await CardState.serverRows(connection, schema: s)
                #expect(rows[card] == CardState(title: "note", count: 0, done: false, note: nil))
                #expect(try await connection.rows("SELECT entity, sync_id::text, _origin::text FROM \(s).tombstones") == [])
            }
        }
    }

    /// A policy that raises for a caller it cannot identify (SQLSTATE class 28) fails the
    /// whole push: nothing is acknowledged, and the same batch is applied once the identity
    /// is there.
    @Test func aPushWithoutAnIdentityFailsInsteadOfRejecting() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await connection.run("""
                CREATE FUNCTION \(s).test_identity() RETURNS text LANGUAGE plpgsql STABLE AS $$
                BEGIN
                    IF nullif(current_setting('test.caller', true), '') IS NULL THEN
                        RAISE EXCEPTION 'no user' USING ERRCODE = '28000';
                    END IF;
                    RETURN current_setting('test.caller');
                END $$
                """)
            try await connection.run(#"ALTER TABLE \#(s)."Card" ENABLE ROW LEVEL SECURITY"#)
            try await connection.run(#"CREATE POLICY anyone ON \#(s)."Card" USING (true) WITH CHECK (\#(s).test_identity() IS NOT NULL)"#)
            try await Self.withRoles(connection, schema: s, ["guest"], login: true) { roles in
                try await connection.run("GRANT EXECUTE ON FUNCTION \(s).test_identity() TO \(roles[0])")
                let client = UUID()
                let card = UUID()
                let batch = [Self.creation(1, card, title: "guest card", clock: hlcNow(plus: -60_000))]
                // postgres-nio closes a connection on a class 28 error: each attempt gets its own.
                try await withConnection(as: roles[0]) { guest in
                    do {
                        _ = try await guest.push(s, client: client, batch)
                        Issue.record("a push without an identity was applied or rejected")
                    } catch let failure as SQLFailure {
                        #expect(failure.code == "28000", "\(failure)")
                    }
                }
                try await withConnection(as: roles[0]) { guest in
                    try await guest.run("SET test.caller = 'guest'")
                    let reply = try await guest.push(s, client: client, batch)
                    #expect(Self.reasons(reply).isEmpty, "\(reply)")
                }
                #expect(try await CardState.serverRows(connection, schema: s)[card]?.title == "guest card")
            }
        }
    }
}
