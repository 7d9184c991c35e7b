@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Local changes of to-many relations (their rows live outside the owner's record) make
/// outbox entries naming the relation's field, and the pusher sends the relation as the
/// array of its targets' sync ids.
@Suite struct SyncRelationCaptureTests {
    let stream = PageBuilder.stream

    /// The sync ids a pushed to-many value names.
    static func syncIds(_ json: String?) throws -> Set<UUID> {
        guard let json, let data = json.data(using: .utf8),
              let array = try JSONSerialization.jsonObject(with: data) as? [String] else { return [] }
        return Set(array.compactMap(UUID.init(uuidString:)))
    }

    static func members(of team: SyncedTeams.Team, in store: Store) throws -> Set<UUID> {
        let members = store.box(for: SyncedTeams.Member.self)
        return Set(try team.members.load().map { try #require(try members.syncId(of: $0.id)) })
    }

    @Test func aLinkOrAnUnlinkAloneIsCaptured() throws {
        try withStore { store in
            try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: store)
            let teams = store.box(for: SyncedTeams.Team.self)
            let members = store.box(for: SyncedTeams.Member.self)
            var people = (0..<3).map { SyncedTeams.Member(name: "m\($0)") }
            try members.put(&people)
            var team = SyncedTeams.Team(name: "t")
            team.members.append(people[0])
            try teams.put(&team)
            try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 100).last?.mid ?? 0)

            // Linked: the record is the same, the relation is not.
            team.members.append(people[1])
            try teams.put(&team)
            var taken = try store.takeSyncChanges(limit: 100)
            #expect(taken.count == 1)
            var field = try #require(taken.first?.fields.first { $0.name == "members" })
            #expect(try Self.syncIds(field.json) == [try #require(try members.syncId(of: people[0].id)),
                                                     try #require(try members.syncId(of: people[1].id))])
            try store.acknowledgeSyncChanges(through: taken.last?.mid ?? 0)

            // Unlinked.
            team = try #require(try teams.get(team.id))
            _ = try team.members.remove(at: 0)
            try teams.put(&team)
            taken = try store.takeSyncChanges(limit: 100)
            field = try #require(taken.first?.fields.first { $0.name == "members" })
            #expect(try Self.syncIds(field.json) == [try #require(try members.syncId(of: people[1].id))])
            try store.acknowledgeSyncChanges(through: taken.last?.mid ?? 0)

            // A removed target leaves the relation: the owner's field changed too.
            try members.remove(people[1].id)
            taken = try store.takeSyncChanges(limit: 100)
            #expect(taken.contains { $0.entity == "Member" && $0.operation == .delete })
            field = try #require(taken.first { $0.entity == "Team" }?.fields.first { $0.name == "members" })
            #expect(try Self.syncIds(field.json).isEmpty)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    /// A new object's whole creation sends its relations that hold targets, as they are
    /// when the pusher takes it (links made or removed before then included), and none that
    /// is empty.
    @Test func aWholeCreationSendsTheRelationsThatHoldTargets() throws {
        try withStore { store in
            try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: store)
            let teams = store.box(for: SyncedTeams.Team.self)
            let members = store.box(for: SyncedTeams.Member.self)
            var people = (0..<3).map { SyncedTeams.Member(name: "m\($0)") }
            try members.put(&people)
            var full = SyncedTeams.Team(name: "full")
            full.members.append(people[0])
            try teams.put(&full)
            full.members.append(people[1])
            try teams.put(&full)
            full = try #require(try teams.get(full.id))
            _ = try full.members.remove(at: 0)
            full.members.append(people[2])
            try teams.put(&full)
            var empty = SyncedTeams.Team(name: "empty")
            try teams.put(&empty)
            var emptied = SyncedTeams.Team(name: "emptied")
            emptied.members.append(people[0])
            try teams.put(&emptied)
            emptied = try #require(try teams.get(emptied.id))
            emptied.members.removeAll()
            try teams.put(&emptied)
            let teamEntity = try SyncProbe.entityId(SyncedTeams.Team.self, in: store)
            let creations = try SyncProbe.snapshot(store).outbox.map(\.entry).filter { $0.entityId == teamEntity }
            #expect(creations.count == 3 && creations.allSatisfy(\.isWhole), "the relation changes joined the creations")
            let taken = try store.takeSyncChanges(limit: 100).filter { $0.entity == "Team" }
            let byName = Dictionary(uniqueKeysWithValues: taken.map { change in
                (change.fields.first { $0.name == "name" }?.json ?? "", change)
            })
            let sent = try #require(byName["\"full\""]?.fields.first { $0.name == "members" })
            #expect(try Self.syncIds(sent.json) == Set([people[1], people[2]].map { try #require(try members.syncId(of: $0.id)) }))
            #expect(byName["\"empty\""]?.fields.map(\.name) == ["name"])
            #expect(byName["\"emptied\""]?.fields.map(\.name) == ["name"])
        }
    }

    @Test func pendingTargetsAreSentWithTheRelation() throws {
        try withStore { store in
            try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: store)
            let teams = store.box(for: SyncedTeams.Team.self)
            let members = store.box(for: SyncedTeams.Member.self)
            let (team, away) = (UUID(), UUID())
            var builder = PageBuilder()
            builder.upsert(team, clock: 10, origin: nil, fields: [("name", "\"pulled\""), ("members", "[\"\(away.uuidString)\"]")])
            _ = try store.applyPulledPage(builder.page(), entity: "Team", stream: stream)
            var here = SyncedTeams.Member(name: "here")
            try members.put(&here)
            var local = try #require(try teams.id(forSyncId: team).flatMap { try teams.get($0) })
            local.members.append(here)
            try teams.put(&local)
            let field = try #require(try store.takeSyncChanges(limit: 100).first { $0.entity == "Team" }?.fields.first { $0.name == "members" })
            // The target that has not arrived is still part of the relation.
            #expect(try Self.syncIds(field.json) == [away, try #require(try members.syncId(of: here.id))])
        }
    }

    /// Random links, unlinks, replacements and removals on one replica; every push is
    /// replayed into a server model (the last pushed array of each team wins) and the model
    /// is applied to a second store as pulled pages: both stores hold the same relations.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func relationsTravelAsTheyChange(seed: Int) throws {
        var random = SplitMix64(state: UInt64(seed) &* 104_729)
        try withStore { store in
            try withStore { other in
                try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: store)
                try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: other)
                let teams = store.box(for: SyncedTeams.Team.self)
                let members = store.box(for: SyncedTeams.Member.self)
                var serverTeams: [UUID: (name: String, members: Set<UUID>)] = [:]
                var serverMembers: [UUID: String] = [:]

                func push(acknowledging: Bool) throws {
                    let taken = try store.takeSyncChanges(limit: 10_000)
                    for change in taken {
                        switch (change.entity, change.operation) {
                        case ("Team", .delete): serverTeams[change.syncId] = nil
                        case ("Member", .delete): serverMembers[change.syncId] = nil
                        case ("Team", .upsert) where change.objectExists:
                            var team = serverTeams[change.syncId] ?? ("", [])
                            for field in change.fields {
                                if field.name == "name" { team.name = try JSONSerialization.jsonObject(with: Data((field.json ?? "\"\"").utf8), options: .fragmentsAllowed) as? String ?? "" }
                                if field.name == "members" { team.members = try Self.syncIds(field.json) }
                            }
                            serverTeams[change.syncId] = team
                        case ("Member", .upsert) where change.objectExists:
                            serverMembers[change.syncId] = serverMembers[change.syncId] ?? "m"
                        default: break
                        }
                    }
                    if acknowledging, let last = taken.last { try store.acknowledgeSyncChanges(through: last.mid) }
                }

                for step in 0..<120 {
                    var stored = try members.all()
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0:
                        var member = SyncedTeams.Member(name: "m\(step)")
                        try members.put(&member)
                    case 1:
                        var team = SyncedTeams.Team(name: "t\(step)")
                        for member in stored where Bool.random(using: &random) { team.members.append(member) }
                        try teams.put(&team)
                    case 2, 3, 4:
                        // Link one member.
                        guard var team = try teams.all().randomElement(using: &random), let member = stored.randomElement(using: &random) else { continue }
                        team.members.append(member)
                        try teams.put(&team)
                    case 5, 6:
                        // Unlink one member.
                        guard var team = try teams.all().randomElement(using: &random) else { continue }
                        let count = try team.members.load().count
                        guard count > 0 else { continue }
                        _ = try team.members.remove(at: Int.random(in: 0..<count, using: &random))
                        try teams.put(&team)
                    case 7:
                        // Replace the whole relation.
                        guard var team = try teams.all().randomElement(using: &random) else { continue }
                        team.members.removeAll()
                        stored.shuffle(using: &random)
                        for member in stored.prefix(2) { team.members.append(member) }
                        try teams.put(&team)
                    case 8:
                        // Remove a member: the teams linking it change.
                        guard let member = stored.randomElement(using: &random) else { continue }
                        try members.remove(member.id)
                    default:
                        try push(acknowledging: Bool.random(using: &random))
                    }
                }
                try push(acknowledging: true)

                // What the server holds is what the store holds.
                for team in try teams.all() {
                    let syncId = try #require(try teams.syncId(of: team.id))
                    #expect(serverTeams[syncId]?.members ?? [] == (try Self.members(of: team, in: store)), "seed \(seed)")
                }

                // Applied to a second store: teams first (members wait), then members.
                var builder = PageBuilder()
                for (syncId, team) in serverTeams {
                    let array = team.members.map { "\"\($0.uuidString)\"" }.joined(separator: ",")
                    builder.upsert(syncId, clock: 10, origin: nil, fields: [("name", PageBuilder.string(team.name)), ("members", "[\(array)]")])
                }
                _ = try other.applyPulledPage(builder.page(cursor: "1"), entity: "Team", stream: stream)
                builder = PageBuilder()
                for syncId in serverMembers.keys {
                    builder.upsert(syncId, clock: 10, origin: nil, fields: [("name", "\"m\"")])
                }
                _ = try other.applyPulledPage(builder.page(cursor: "1"), entity: "Member", stream: stream)
                let otherTeams = other.box(for: SyncedTeams.Team.self)
                #expect(try otherTeams.count() == teams.count())
                for team in try otherTeams.all() {
                    let syncId = try #require(try otherTeams.syncId(of: team.id))
                    let local = try #require(try teams.id(forSyncId: syncId).flatMap { try teams.get($0) })
                    #expect(try Self.members(of: team, in: other) == Self.members(of: local, in: store), "seed \(seed)")
                }
                #expect(try other.pendingSyncCount() == 0)
                #expect(try store.verify().problems.isEmpty && other.verify().problems.isEmpty)
            }
        }
    }
}
