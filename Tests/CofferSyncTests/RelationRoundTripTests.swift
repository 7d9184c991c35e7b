@_spi(CofferSync) import Coffer
import CofferSync
import Foundation
import Testing

/// Links and unlinks of a to-many relation made on one replica reach another through
/// `coffer_push` and `coffer_pull`, with no change of the owner's record.
@Suite struct RelationRoundTripTests {
    /// Each team's members by sync id, by the team's sync id.
    static func relations(_ store: Store) throws -> [UUID: Set<UUID>] {
        let teams = store.box(for: SyncedTeams.Team.self)
        let members = store.box(for: SyncedTeams.Member.self)
        var result: [UUID: Set<UUID>] = [:]
        for team in try teams.all() {
            result[try #require(try teams.syncId(of: team.id))] = Set(try team.members.load().map { try #require(try members.syncId(of: $0.id)) })
        }
        return result
    }

    @Test func linksAndUnlinksTravelBothWays() async throws {
        let schema = try SyncSchema([SyncedTeams.Team.self, SyncedTeams.Member.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { _ in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let (transportA, transportB) = (try await testTransport(schema: s), try await testTransport(schema: s))
            let entities: [any Entity.Type] = [SyncedTeams.Team.self, SyncedTeams.Member.self]
            let replicaA = try SyncReplica(store: a.store, entities: entities, transport: transportA)
            let replicaB = try SyncReplica(store: b.store, entities: entities, transport: transportB)
            // Rounds of both replicas until they agree (a pull reaches only the horizon that
            // other tests' open transactions hold back).
            func converge() async throws {
                let agreed = try await eventually {
                    for replica in [replicaA, replicaB, replicaA] {
                        let status = try await replica.syncNow()
                        #expect(status.lastError == nil && status.rejections.isEmpty, "\(String(describing: status.lastError)) \(status.rejections)")
                    }
                    return try a.store.pendingSyncCount() == 0 && b.store.pendingSyncCount() == 0
                        && Self.relations(a.store) == Self.relations(b.store)
                }
                #expect(agreed)
            }
            let teamsA = a.store.box(for: SyncedTeams.Team.self), membersA = a.store.box(for: SyncedTeams.Member.self)
            let teamsB = b.store.box(for: SyncedTeams.Team.self)
            var members = (0..<4).map { SyncedTeams.Member(name: "member \($0)") }
            try membersA.put(&members)
            var team = SyncedTeams.Team(name: "deck")
            team.members.append(members[0])
            team.members.append(members[1])
            try teamsA.put(&team)
            try await converge()
            #expect(try Self.relations(a.store) == Self.relations(b.store))
            #expect(try Self.relations(b.store).values.first?.count == 2)

            // A link alone, on a.
            team.members.append(members[2])
            try teamsA.put(&team)
            #expect(try a.store.pendingSyncCount() == 1)
            try await converge()
            #expect(try Self.relations(b.store).values.first?.count == 3)
            #expect(try Self.relations(a.store) == Self.relations(b.store))

            // An unlink alone, on b.
            var teamB = try #require(try teamsB.all().first)
            _ = try teamB.members.remove(at: 0)
            try teamsB.put(&teamB)
            try await converge()
            #expect(try Self.relations(a.store).values.first?.count == 2)
            #expect(try Self.relations(a.store) == Self.relations(b.store))

            // A removed target, on a: gone from the relation everywhere.
            let linked = try #require(try teamsA.get(team.id)?.members.load().first)
            try membersA.remove(linked.id)
            try await converge()
            #expect(try Self.relations(a.store).values.first?.count == 1)
            #expect(try Self.relations(a.store) == Self.relations(b.store))
            #expect(try a.store.pendingSyncCount() == 0 && b.store.pendingSyncCount() == 0)

            // Random links and unlinks on both replicas, synced now and then.
            var random = SplitMix64(state: 31)
            let stores = [a.store, b.store]
            for step in 0..<40 {
                let store = stores[Int.random(in: 0..<2, using: &random)]
                let teams = store.box(for: SyncedTeams.Team.self), boxMembers = store.box(for: SyncedTeams.Member.self)
                if step % 9 == 0 {
                    var added = SyncedTeams.Member(name: "member \(step)")
                    try boxMembers.put(&added)
                }
                guard var target = try teams.all().randomElement(using: &random) else { continue }
                let current = try target.members.load()
                if Bool.random(using: &random), let member = try boxMembers.all().randomElement(using: &random) {
                    target.members.append(member)
                } else if !current.isEmpty {
                    _ = try target.members.remove(at: Int.random(in: 0..<current.count, using: &random))
                }
                try teams.put(&target)
                if step % 4 == 3 { _ = try await (store === a.store ? replicaA : replicaB).syncNow() }
            }
            try await converge()
            #expect(try Self.relations(a.store) == Self.relations(b.store))
            #expect(try a.store.verify().problems.isEmpty && b.store.verify().problems.isEmpty)
            await transportA.close()
            await transportB.close()
        }
    }
}
