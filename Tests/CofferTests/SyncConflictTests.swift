@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Synced entities with unique properties of each conflict strategy (the to-many relation is
/// `SyncedTeams`'s).
enum SyncedUnique {
    @Sync
    struct Account: Entity {
        var id: Id = 0
        @Unique var email: String
        var name = ""
    }

    @Sync
    struct Badge: Entity {
        var id: Id = 0
        @Unique(onConflict: .replace) var code: String
        var label = ""
    }

    @Sync
    struct Seat: Entity {
        var id: Id = 0
        @Unique(onConflict: .update) var number: Int
        var holder = ""
    }

}

/// Unique values that collide between a pulled object and a local one: parked as
/// conflicts (the page goes on), retried, replaced by later pulls; `.replace` removes only a
/// local holder the server never saw; `.update` never merges two sync ids.
@Suite struct SyncConflictTests {
    let stream = PageBuilder.stream

    @Test func aCollidingPulledObjectIsParkedAndThePageGoesOn() throws {
        try withStore { store in
            try register(SyncedUnique.Account.self, in: store)
            let accounts = store.box(for: SyncedUnique.Account.self)
            var local = SyncedUnique.Account(email: "ada@example.com", name: "local Ada")
            try accounts.put(&local)
            let (clash, fine) = (UUID(), UUID())
            var builder = PageBuilder()
            builder.upsert(clash, clock: 10, origin: nil, fields: [("email", "\"ada@example.com\""), ("name", "\"remote Ada\"")])
            builder.upsert(fine, clock: 10, origin: nil, fields: [("email", "\"grace@example.com\""), ("name", "\"Grace\"")])
            let summary = try store.applyPulledPage(builder.page(cursor: "5"), entity: "Account", stream: stream)
            #expect(summary.conflicts == 1 && summary.upserted == 1 && summary.cursor == "5")
            #expect(try accounts.id(forSyncId: fine) != nil)
            #expect(try accounts.id(forSyncId: clash) == nil)
            #expect(try accounts.get(local.id)?.name == "local Ada")
            let conflicts = try store.syncConflicts()
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            #expect(conflict.entity == "Account" && conflict.syncId == clash && conflict.property == "email")
            #expect(conflict.value == "\"ada@example.com\"")
            #expect(conflict.remoteRow.contains("remote Ada"))

            // Still taken: a retry keeps it parked.
            #expect(try store.retrySyncConflicts() == 0)
            #expect(try store.syncConflicts().count == 1)

            // A later pull of the same object replaces the parked one (here: parked again).
            builder = PageBuilder()
            builder.upsert(clash, clock: 11, origin: nil, fields: [("email", "\"ada@example.com\""), ("name", "\"remote Ada, renamed\"")])
            #expect(try store.applyPulledPage(builder.page(cursor: "6"), entity: "Account", stream: stream).conflicts == 1)
            #expect(try store.syncConflicts().map(\.remoteRow).first?.contains("renamed") == true)

            // The app frees the value: the retry stores the pulled object.
            local.email = "ada@local.example.com"
            try accounts.put(&local)
            #expect(try store.retrySyncConflicts() == 1)
            #expect(try store.syncConflicts().isEmpty)
            let arrived = try #require(try accounts.id(forSyncId: clash).flatMap { try accounts.get($0) })
            #expect(arrived.name == "remote Ada, renamed" && arrived.email == "ada@example.com")

            // A pulled delete of a parked object drops its conflict.
            let other = UUID()
            builder = PageBuilder()
            builder.upsert(other, clock: 12, origin: nil, fields: [("email", "\"grace@example.com\""), ("name", "\"other Grace\"")])
            #expect(try store.applyPulledPage(builder.page(cursor: "7"), entity: "Account", stream: stream).conflicts == 1)
            builder = PageBuilder()
            builder.delete(other, clock: 13, origin: nil)
            _ = try store.applyPulledPage(builder.page(cursor: "8"), entity: "Account", stream: stream)
            #expect(try store.syncConflicts().isEmpty)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func replaceRemovesOnlyAHolderTheServerNeverSaw() throws {
        try withStore { store in
            try register(SyncedUnique.Badge.self, in: store)
            let badges = store.box(for: SyncedUnique.Badge.self)
            var sent = SyncedUnique.Badge(code: "A", label: "local, pushed")
            try badges.put(&sent)
            let batch = try store.takeSyncChanges(limit: 10)
            try store.acknowledgeSyncChanges(through: batch.last?.mid ?? 0)
            var unsent = SyncedUnique.Badge(code: "B", label: "local, never pushed")
            try badges.put(&unsent)

            let (first, second) = (UUID(), UUID())
            var builder = PageBuilder()
            builder.upsert(first, clock: 10, origin: nil, fields: [("code", "\"A\""), ("label", "\"remote A\"")])
            builder.upsert(second, clock: 10, origin: nil, fields: [("code", "\"B\""), ("label", "\"remote B\"")])
            let summary = try store.applyPulledPage(builder.page(), entity: "Badge", stream: stream)
            #expect(summary.upserted == 1 && summary.conflicts == 1)
            // The server holds the pushed holder under another code: it stays, the pulled one is parked.
            #expect(try badges.get(sent.id)?.code == "A")
            #expect(try badges.id(forSyncId: first) == nil && store.syncConflicts().map(\.syncId) == [first])
            // The unsent one never existed there: it gives way, and nothing is sent.
            #expect(try badges.get(unsent.id) == nil)
            #expect(try badges.id(forSyncId: second) != nil)
            #expect(try SyncProbe.snapshot(store).outbox.isEmpty)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func updateNeverMergesTwoSyncIds() throws {
        try withStore { store in
            try register(SyncedUnique.Seat.self, in: store)
            let seats = store.box(for: SyncedUnique.Seat.self)
            var local = SyncedUnique.Seat(number: 7, holder: "local")
            try seats.put(&local)
            let localSyncId = try #require(try seats.syncId(of: local.id))
            let remote = UUID()
            var builder = PageBuilder()
            builder.upsert(remote, clock: 10, origin: nil, fields: [("number", "7"), ("holder", "\"remote\"")])
            let summary = try store.applyPulledPage(builder.page(), entity: "Seat", stream: stream)
            #expect(summary.conflicts == 1)
            #expect(try seats.get(local.id)?.holder == "local")
            #expect(try seats.syncId(of: local.id) == localSyncId)
            #expect(try seats.id(forSyncId: remote) == nil)
            #expect(try store.syncConflicts().first?.property == "number")
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func toManyRelationsArriveAsSyncIdArraysAndWaitForTargets() throws {
        try withStore { store in
            try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: store)
            let teams = store.box(for: SyncedTeams.Team.self)
            let members = store.box(for: SyncedTeams.Member.self)
            var here = SyncedTeams.Member(name: "here")
            try members.put(&here)
            let hereSyncId = try #require(try members.syncId(of: here.id))
            let (team, later) = (UUID(), UUID())
            var builder = PageBuilder()
            builder.upsert(team, clock: 10, origin: nil, fields: [("name", "\"team\""), ("members", "[\"\(hereSyncId)\", \"\(later)\"]")])
            _ = try store.applyPulledPage(builder.page(), entity: "Team", stream: stream)
            let teamId = try #require(try teams.id(forSyncId: team))
            #expect(try teams.get(teamId)?.members.map(\.id) == [here.id])
            builder = PageBuilder()
            builder.upsert(later, clock: 11, origin: nil, fields: [("name", "\"later\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Member", stream: stream)
            let laterId = try #require(try members.id(forSyncId: later))
            #expect(Set(try teams.get(teamId)?.members.map(\.id) ?? []) == [here.id, laterId])
            // null leaves the relation as it is (to-many relations are not always sent).
            builder = PageBuilder()
            builder.upsert(team, clock: 12, origin: nil, fields: [("name", "\"renamed\""), ("members", "null")])
            _ = try store.applyPulledPage(builder.page(), entity: "Team", stream: stream)
            #expect(try teams.get(teamId)?.members.count == 2)
            #expect(try teams.get(teamId)?.name == "renamed")
            #expect(try store.verify().problems.isEmpty)
        }
    }
}
