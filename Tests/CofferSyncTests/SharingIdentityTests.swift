@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Who pushes, and what a role granted the use of the schema may touch: `coffer_grant` gives
/// the entity tables and read-only bookkeeping, the sync functions write clients, rejections
/// and tombstones themselves, a client id belongs to the user who first pushed with it, and
/// only a trusted gateway names the user it acts for.
@Suite(.timeLimit(.minutes(2))) struct SharingIdentityTests {
    typealias RLS = RowLevelSecurityTests

    static func expectRefused(_ code: String, _ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("\(what) was allowed")
        } catch let failure as SQLFailure {
            #expect(failure.code == code, "\(what): \(failure)")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }

    /// A role with `coffer_grant` alone pushes creations, edits and deletes (the tombstone is
    /// the sync functions' to write) and pulls them, cannot write the bookkeeping itself, and
    /// is granted the tables a later install adds.
    @Test func aGrantedRoleSyncsButCannotWriteTheBookkeeping() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await RLS.withRoles(connection, schema: s, ["app"], login: true) { roles in
                let app = roles[0]
                let clock = hlcNow(plus: -60_000)
                let (kept, gone) = (UUID(), UUID())
                let client = UUID()
                try await withConnection(as: app) { user in
                    let reply = try await user.push(s, client: client, [
                        RLS.creation(1, kept, title: "kept", clock: clock),
                        RLS.creation(2, gone, title: "gone", clock: clock),
                        RLS.edit(3, kept, count: 7, clock: clock + 1),
                        RLS.delete(4, gone, clock: clock + 2),
                        // Never on the server: a tombstone all the same.
                        RLS.delete(5, UUID(), clock: clock + 3),
                    ])
                    #expect(RLS.reasons(reply).isEmpty, "\(reply)")
                    let pulled = try await user.pullAll(s, "Card").changes
                    #expect(Set(replay(pulled).keys) == [kept.uuidString.lowercased()])
                    #expect(pulled.filter { $0["op"] as? String == "delete" }.count == 2)

                    await Self.expectRefused("42501", "writing tombstones") {
                        try await user.run("INSERT INTO \(s).tombstones (entity, sync_id, _hlc) VALUES ('Card', gen_random_uuid(), 1)")
                    }
                    await Self.expectRefused("42501", "moving a client's mid") {
                        try await user.run("UPDATE \(s).clients SET last_mid = 1000")
                    }
                    await Self.expectRefused("42501", "reading rejections") {
                        _ = try await user.rows("SELECT count(*) FROM \(s).rejections")
                    }
                    // The sync functions, called directly, never tombstone a live row, nor serve
                    // a client that is not the caller's.
                    _ = try await user.rows("SELECT \(s)._tombstone_ids('Card', ARRAY['\(kept)']::uuid[], ARRAY[1]::bigint[], '{}', '\(client)')")
                    await Self.expectRefused("CF005", "tombstoning for another client") {
                        _ = try await user.rows("SELECT \(s)._tombstone_ids('Card', ARRAY[gen_random_uuid()], ARRAY[1]::bigint[], '{}', gen_random_uuid())")
                    }
                    // A plain-SQL insert that would bring a deleted object back is the owner's to make.
                    await Self.expectRefused("42501", "bringing a deleted object back") {
                        try await user.run(#"INSERT INTO \#(s)."Card" (sync_id, title, count, done) VALUES ('\#(gone)', 'back', 0, false)"#)
                    }
                }
                #expect(try await connection.value("SELECT count(*)::text FROM \(s).tombstones WHERE sync_id = '\(kept)'") == "0")
                #expect(try await CardState.serverRows(connection, schema: s)[kept]?.count == 7)

                // A later install with another entity grants the recorded role its table.
                let wider = try SyncSchema([Replicated.Card.self, SyncedTeams.Team.self], schema: s)
                try await wider.install(on: connection, logger: connection.logger)
                let team = SQLText.identifier(wider.tables[1].entity)
                #expect(try await connection.value("SELECT has_table_privilege('\(app)', '\(s).\(team)', 'INSERT')::text") == "true")
            }
        }
    }

    /// A client id is the user's who first pushed with it: another user's push with it fails
    /// as a whole (CF005) and changes nothing, so no one can fill or skip another's queue.
    @Test func aClientIdBelongsToTheUserWhoFirstPushedWithIt() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await RLS.withRoles(connection, schema: s, ["alice", "bob"], login: true) { roles in
                let client = UUID()
                let clock = hlcNow(plus: -60_000)
                let card = UUID()
                try await withConnection(as: roles[0]) { alice in
                    let reply = try await alice.push(s, client: client, [RLS.creation(1, card, title: "alice", clock: clock)])
                    #expect(RLS.reasons(reply).isEmpty)
                }
                try await withConnection(as: roles[1]) { bob in
                    await Self.expectRefused("CF005", "a push with another user's client") {
                        _ = try await bob.push(s, client: client, [RLS.edit(2, card, count: 9, clock: clock + 1),
                                                                   RLS.edit(50, card, count: 10, clock: clock + 2)])
                    }
                    await Self.expectRefused("CF005", "finishing a push of another user's client") {
                        _ = try await bob.rows("SELECT \(s)._finish_push('\(client)', 1000, '[]', '[]')")
                    }
                }
                #expect(try await connection.value("SELECT last_mid::text FROM \(s).clients WHERE client_id = '\(client)'") == "1")
                #expect(try await CardState.serverRows(connection, schema: s)[card]?.count == 0)
                try await withConnection(as: roles[0]) { alice in
                    let reply = try await alice.push(s, client: client, [RLS.edit(2, card, count: 3, clock: clock + 3)])
                    #expect(RLS.reasons(reply).isEmpty)
                    #expect((reply["lastMid"] as? NSNumber)?.intValue == 2)
                }
                #expect(try await CardState.serverRows(connection, schema: s)[card]?.count == 3)
            }
        }
    }

    /// A session that logs in as a member of the trusted gateway role names its user with
    /// `SET LOCAL coffer.user_id`, and policies see that user; a gateway session that names no
    /// one fails its push (CF006); a direct login cannot name another user.
    @Test func onlyATrustedGatewayNamesTheUser() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await connection.run(#"ALTER TABLE \#(s)."Card" ENABLE ROW LEVEL SECURITY"#)
            try await connection.run(#"CREATE POLICY own ON \#(s)."Card" USING (starts_with(title, \#(s).coffer_user_id())) "#
                                     + #"WITH CHECK (starts_with(title, \#(s).coffer_user_id()))"#)
            try await RLS.withRoles(connection, schema: s, ["gateway", "app", "direct"], login: true) { roles in
                let (gateway, app, direct) = (roles[0], roles[1], roles[2])
                try await connection.run("GRANT \(app) TO \(gateway)")
                try await connection.run(schema.trustGatewayStatement(role: gateway))
                let clock = hlcNow(plus: -60_000)
                let (alicesCard, bobsCard) = (UUID(), UUID())
                let client = UUID()
                try await withConnection(as: gateway) { session in
                    // As the gateway would: one transaction per request, the role and the user set locally.
                    func request<T>(_ user: String?, _ body: () async throws -> T) async throws -> T {
                        try await session.run("BEGIN")
                        do {
                            try await session.run("SET LOCAL ROLE \(app)")
                            if let user { try await session.run("SET LOCAL coffer.user_id = '\(user)'") }
                            let result = try await body()
                            try await session.run("COMMIT")
                            return result
                        } catch {
                            try await session.run("ROLLBACK")
                            throw error
                        }
                    }
                    let reply = try await request("alice") {
                        try await session.push(s, client: client, [RLS.creation(1, alicesCard, title: "alice's", clock: clock),
                                                                   RLS.creation(2, UUID(), title: "bob's, forged", clock: clock)])
                    }
                    #expect(Set(RLS.reasons(reply).keys) == [2], "\(reply)")
                    #expect(RLS.reasons(reply)[2]?.hasPrefix("forbidden: ") == true)
                    _ = try await request("bob") {
                        try await session.push(s, client: UUID(), [RLS.creation(1, bobsCard, title: "bob's", clock: clock)])
                    }
                    let seen = try await request("bob") { replay(try await session.pullAll(s, "Card").changes) }
                    #expect(Set(seen.keys) == [bobsCard.uuidString.lowercased()])
                    // Bob through the same gateway with Alice's client.
                    await Self.expectRefused("CF005", "bob pushing with alice's client") {
                        _ = try await request("bob") {
                            try await session.push(s, client: client, [RLS.edit(3, bobsCard, count: 1, clock: clock + 1)])
                        }
                    }
                    await Self.expectRefused("CF006", "a gateway push that names no user") {
                        _ = try await request(nil) {
                            try await session.push(s, client: UUID(), [RLS.creation(1, UUID(), title: "nobody", clock: clock)])
                        }
                    }
                }
                try await withConnection(as: direct) { session in
                    try await session.run("SET coffer.user_id = 'alice'")
                    #expect(try await session.value("SELECT \(s).coffer_user_id()") == direct)
                    #expect(try await session.rows(#"SELECT sync_id FROM \#(s)."Card""#).isEmpty)
                }
                try await connection.run(schema.trustGatewayStatement(role: nil))
                #expect(try await connection.value("SELECT count(*)::text FROM \(s).meta WHERE key = 'gateway_role'") == "0")
            }
        }
    }

    /// The tombstone trigger runs as the schema's owner: no role may attach it to a table of
    /// its own (where it would leave a tombstone for any id, a live row's included), and it
    /// refuses to serve a table outside its schema even for a role that could.
    @Test func theTombstoneTriggerServesOnlyTheSchemasTables() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let live = UUID()
            _ = try await connection.push(s, client: UUID(), [RLS.creation(1, live, title: "live", clock: hlcNow(plus: -60_000))])
            try await RLS.withRoles(connection, schema: s, ["app"], login: true) { roles in
                try await withConnection(as: roles[0]) { user in
                    try await user.run(#"CREATE TEMP TABLE "Card" (sync_id uuid)"#)
                    await Self.expectRefused("42501", "attaching the tombstone trigger") {
                        try await user.run(#"CREATE TRIGGER forge AFTER DELETE ON pg_temp."Card" FOR EACH ROW EXECUTE FUNCTION \#(s)._tombstone()"#)
                    }
                }
            }
            // The owner may attach it, and it refuses to run there.
            try await connection.run(#"CREATE TABLE public."Card_\#(s)" (sync_id uuid)"#)
            try await connection.run(#"CREATE TRIGGER forge AFTER DELETE ON public."Card_\#(s)" FOR EACH ROW EXECUTE FUNCTION \#(s)._tombstone()"#)
            try await connection.run(#"INSERT INTO public."Card_\#(s)" VALUES ('\#(live)')"#)
            await Self.expectRefused("42501", "a tombstone from another schema's table") {
                _ = try await connection.rows(#"DELETE FROM public."Card_\#(s)""#)
            }
            try await connection.run(#"DROP TABLE public."Card_\#(s)""#)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).tombstones") == "0")
        }
    }

    /// On a table whose policies bind its owner too (FORCE ROW LEVEL SECURITY), the check that
    /// tells a hidden row from a missing one cannot look past them: a push that needs it fails
    /// whole (CF007) instead of tombstoning a hidden row, until the table stops forcing.
    @Test func aTableThatForcesItsPoliciesOnTheOwnerFailsThePush() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            for statement in RLS.policies(s) { try await connection.run(statement) }
            let card = UUID()
            try await RLS.withRoles(connection, schema: s, ["alice", "bob"], login: true) { roles in
                let clock = hlcNow(plus: -60_000)
                let client = UUID()
                try await withConnection(as: roles[1]) { bob in
                    let reply = try await bob.push(s, client: UUID(), [RLS.creation(1, card, title: roles[1] + " card", clock: clock)])
                    #expect(RLS.reasons(reply).isEmpty)
                }
                try await connection.run(#"ALTER TABLE \#(s)."Card" FORCE ROW LEVEL SECURITY"#)
                let delete = [RLS.delete(1, card, clock: clock + 1)]
                try await withConnection(as: roles[0]) { alice in
                    await Self.expectRefused("CF007", "a delete on a forced table") {
                        _ = try await alice.push(s, client: client, delete)
                    }
                }
                #expect(try await connection.value("SELECT count(*)::text FROM \(s).tombstones") == "0")
                try await connection.run(#"ALTER TABLE \#(s)."Card" NO FORCE ROW LEVEL SECURITY"#)
                try await withConnection(as: roles[0]) { alice in
                    let reply = try await alice.push(s, client: client, delete)
                    #expect(RLS.reasons(reply)[1]?.hasPrefix("forbidden: ") == true, "\(reply)")
                }
            }
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).tombstones") == "0")
            #expect(try await CardState.serverRows(connection, schema: s)[card] != nil)
        }
    }
}
