@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// A synced note whose tags an app merges by union.
enum Merged {
    @Sync
    struct Note: Entity {
        var id: Id = 0
        var text = ""
        var tags: [String] = []
        var pinned = false
    }

    /// A synced medal whose code is unique (`.fail`).
    @Sync
    struct Medal: Entity {
        var id: Id = 0
        @Unique var code: String
        var tags: [String] = []
    }
}

/// An app's merge per entity: called when a pulled field meets an unacknowledged local
/// change of it; its result is stored and recorded as a local change the server will take.
@Suite struct SyncMergeTests {
    let stream = PageBuilder.stream

    /// A note pushed and acknowledged, then changed locally (not pushed): tags and text.
    func localNote(_ store: Store) throws -> (id: Id, syncId: UUID) {
        try register(Merged.Note.self, in: store)
        let notes = store.box(for: Merged.Note.self)
        var note = Merged.Note(text: "first", tags: ["a"])
        try notes.put(&note)
        try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 10).last?.mid ?? 0)
        note.tags = ["a", "mine"]
        note.text = "mine"
        try notes.put(&note)
        return (note.id, try #require(try notes.syncId(of: note.id)))
    }

    func unionOfTags(_ store: Store, calls: LockedCalls) {
        store.setSyncMerge(for: Merged.Note.self) { conflict in
            calls.record(conflict.properties)
            var merged = conflict.local
            merged.tags = Array(Set(conflict.local.tags).union(conflict.remote.tags)).sorted()
            return merged
        }
    }

    /// A store on a manual clock holding ``localNote(_:)``, merged by ``unionOfTags(_:calls:)``.
    func withMergingNote(_ body: (Store, ManualClock, Id, UUID, LockedCalls) throws -> Void) throws {
        try withStore { store in
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            let (id, syncId) = try localNote(store)
            let calls = LockedCalls()
            unionOfTags(store, calls: calls)
            try body(store, clock, id, syncId, calls)
        }
    }

    final class LockedCalls: @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [[String]] = []
        func record(_ properties: [String]) { lock.withLock { calls.append(properties) } }
        var all: [[String]] { lock.withLock { calls } }
    }

    @Test(arguments: [false, true])
    func theMergedObjectIsStoredAndRecorded(pulledIsNewer: Bool) throws {
        try withMergingNote { store, clock, id, syncId, calls in
            let fieldIds = try SyncProbe.fieldIds(Merged.Note.self, in: store)
            // Older than the local change (it keeps its fields), or newer (it takes them).
            let pulledClock: UInt64 = pulledIsNewer ? (clock.now + 1_000) << 16 : 10
            var builder = PageBuilder()
            builder.upsert(syncId, clock: pulledClock, origin: UUID(), fields: [("text", "\"theirs\""), ("tags", "[\"a\", \"theirs\"]"), ("pinned", "true")])
            let summary = try store.applyPulledPage(builder.page(), entity: "Note", stream: stream)
            #expect(calls.all == [["text", "tags"]])
            let note = try #require(try store.box(for: Merged.Note.self).get(id))
            #expect(note.tags == ["a", "mine", "theirs"])
            #expect(note.text == "mine", "the merge kept the local text")
            #expect(note.pinned, "a field no local change set is the pulled one")
            #expect(summary.upserted == 1)
            // Recorded as a local change, newer than the page: the server takes it.
            let outbox = try SyncProbe.snapshot(store).outbox.map(\.entry)
            let tags = try #require(outbox.last?.fields.first { $0.id == fieldIds["tags"] })
            #expect(tags.clock > pulledClock)
            let text = try #require(outbox.last?.fields.first { $0.id == fieldIds["text"] })
            #expect(pulledIsNewer ? text.clock > pulledClock : true)
            let pushed = try store.takeSyncChanges(limit: 10)
            #expect(pushed.last?.fields.first { $0.name == "tags" }?.json == "[\"a\",\"mine\",\"theirs\"]")
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func withoutACollisionOrAMergeTheRulesAreAsBefore() throws {
        try withMergingNote { store, _, id, syncId, calls in
            // Only a field no local change set: no call.
            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: UUID(), fields: [("pinned", "true")])
            _ = try store.applyPulledPage(builder.page(cursor: "1"), entity: "Note", stream: stream)
            #expect(calls.all.isEmpty)
            // The merge removed: last writer wins per field.
            store.removeSyncMerge(for: Merged.Note.self)
            builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: UUID(), fields: [("tags", "[\"theirs\"]")])
            _ = try store.applyPulledPage(builder.page(cursor: "2"), entity: "Note", stream: stream)
            #expect(calls.all.isEmpty)
            #expect(try store.box(for: Merged.Note.self).get(id)?.tags == ["a", "mine"])
        }
    }

    /// A pulled field this replica wrote itself (its origin is the store's client id: an
    /// earlier push coming back, as when a slow transaction held the pull behind it) does not
    /// collide with a newer local change of it: the merge is not called and the local value
    /// stays. A field another replica wrote, in the same change, still collides.
    @Test func aFieldThisReplicaWroteItselfDoesNotCollide() throws {
        try withMergingNote { store, _, id, syncId, calls in
            let mine = try store.syncClientId()
            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: mine, fields: [("text", "\"first\""), ("tags", "[\"a\"]")])
            _ = try store.applyPulledPage(builder.page(cursor: "1"), entity: "Note", stream: stream)
            #expect(calls.all.isEmpty, "the merge was called for the replica's own earlier write")
            var note = try #require(try store.box(for: Merged.Note.self).get(id))
            #expect(note.tags == ["a", "mine"] && note.text == "mine")

            builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: mine, fields: [("text", "\"first\""), ("tags", "[\"a\", \"theirs\"]")],
                           clocks: ["tags": (11, UUID())])
            _ = try store.applyPulledPage(builder.page(cursor: "2"), entity: "Note", stream: stream)
            #expect(calls.all == [["tags"]])
            note = try #require(try store.box(for: Merged.Note.self).get(id))
            #expect(note.tags == ["a", "mine", "theirs"] && note.text == "mine")
        }
    }

    @Test func aMergeThatThrowsFailsThePage() throws {
        struct Refused: Error {}
        try withStore { store in
            let (id, syncId) = try localNote(store)
            store.setSyncMerge(for: Merged.Note.self) { _ in throw Refused() }
            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: UUID(), fields: [("tags", "[\"theirs\"]"), ("pinned", "true")])
            #expect(throws: Refused.self) { _ = try store.applyPulledPage(builder.page(cursor: "3"), entity: "Note", stream: stream) }
            #expect(try store.box(for: Merged.Note.self).get(id)?.pinned == false)
            #expect(try store.syncCursor(entity: "Note", stream: stream) == "0")
        }
    }

    /// A merged result that takes a `.fail` unique value another object holds: the put of the
    /// result throws, so the page fails with the unique error and nothing of it is applied (as
    /// when the merge itself throws). Once the local change is acknowledged (a pass pushes
    /// before it pulls again), the page applies by the usual rules, without the merge.
    @Test func aMergedResultBreakingAFailUniqueFailsThePage() throws {
        try withStore { store in
            try register(Merged.Medal.self, in: store)
            let badges = store.box(for: Merged.Medal.self)
            var gold = Merged.Medal(code: "gold")
            try badges.put(&gold)
            var badge = Merged.Medal(code: "silver", tags: ["a"])
            try badges.put(&badge)
            try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 10).last?.mid ?? 0)
            badge.tags = ["a", "mine"]
            try badges.put(&badge)
            let syncId = try #require(try badges.syncId(of: badge.id))
            let goldSyncId = try #require(try badges.syncId(of: gold.id))
            store.setSyncMerge(for: Merged.Medal.self) { conflict in
                var merged = conflict.local
                merged.code = "gold"
                merged.tags = Array(Set(conflict.local.tags).union(conflict.remote.tags)).sorted()
                return merged
            }
            var builder = PageBuilder()
            builder.upsert(goldSyncId, clock: 10, origin: UUID(), fields: [("tags", "[\"shiny\"]")])
            builder.upsert(syncId, clock: 10, origin: UUID(), fields: [("tags", "[\"a\", \"theirs\"]")])
            do {
                _ = try store.applyPulledPage(builder.page(cursor: "7"), entity: "Medal", stream: stream)
                Issue.record("the page applied although the merged code collides")
            } catch CofferError.uniqueViolation(_, let property, let value) {
                #expect(property == "code")
                #expect(value.contains("gold"))
            }
            #expect(try badges.get(badge.id)?.tags == ["a", "mine"])
            #expect(try badges.get(badge.id)?.code == "silver")
            #expect(try badges.get(gold.id)?.tags == [], "nothing of the page is applied")
            #expect(try store.syncCursor(entity: "Medal", stream: stream) == "0")
            #expect(try store.syncConflicts().isEmpty)

            try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 10).last?.mid ?? 0)
            _ = try store.applyPulledPage(builder.page(cursor: "7"), entity: "Medal", stream: stream)
            #expect(try badges.get(badge.id)?.tags == ["a", "theirs"])
            #expect(try badges.get(gold.id)?.tags == ["shiny"])
            #expect(try store.syncCursor(entity: "Medal", stream: stream) == "7")
        }
    }

    /// A pulled delete that follows a merge of the same object in one page removes the object
    /// and drops the merge's outbox entry (deletes win; the server would refuse the entry).
    @Test func aPulledDeleteAfterAMergeDropsTheMergesEntry() throws {
        try withStore { store in
            let (id, syncId) = try localNote(store)
            let inFlight = try store.takeSyncChanges(limit: 10).map(\.mid)   // the local change is being pushed
            #expect(inFlight.count == 1)
            let calls = LockedCalls()
            unionOfTags(store, calls: calls)
            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: UUID(), fields: [("tags", "[\"a\", \"theirs\"]")])
            builder.delete(syncId, clock: 11, origin: UUID())
            _ = try store.applyPulledPage(builder.page(), entity: "Note", stream: stream)
            #expect(calls.all == [["tags"]])
            #expect(try store.box(for: Merged.Note.self).get(id) == nil)
            let entries = try SyncProbe.snapshot(store).outbox.filter { $0.entry.syncId == syncId }.map(\.mid)
            #expect(entries == inFlight, "only the change in flight is left (the server refuses it: it deleted the object)")
            #expect(try store.verify().problems.isEmpty)
        }
    }

    /// Both sides changed a to-many relation: it is among the colliding properties, the views
    /// hold each side's targets, and a merge returning their union stores and records it.
    @Test(arguments: [false, true])
    func aToManyRelationChangedOnBothSidesIsMerged(pulledIsNewer: Bool) throws {
        try withStore { store in
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            try register(SyncedTeams.Team.self, SyncedTeams.Member.self, in: store)
            let members = store.box(for: SyncedTeams.Member.self)
            let teams = store.box(for: SyncedTeams.Team.self)
            var people = [SyncedTeams.Member(name: "ann"), SyncedTeams.Member(name: "bob"), SyncedTeams.Member(name: "cy")]
            for index in people.indices { try members.put(&people[index]) }
            var team = SyncedTeams.Team(name: "deck")
            team.members.append(people[0])
            try teams.put(&team)
            try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 10).last?.mid ?? 0)
            team = try #require(try teams.get(team.id))
            team.members.append(people[1])   // local: ann, bob
            try teams.put(&team)
            let teamSyncId = try #require(try teams.syncId(of: team.id))
            let memberSyncIds = try people.map { try #require(try members.syncId(of: $0.id)) }

            let calls = LockedCalls()
            let views = LockedViews()
            store.setSyncMerge(for: SyncedTeams.Team.self) { conflict in
                calls.record(conflict.properties)
                let local = try conflict.local.members.load()
                let remote = try conflict.remote.members.load()
                views.record(local: local.map(\.name), remote: remote.map(\.name))
                var merged = conflict.local
                merged.members.removeAll()
                var seen = Set<Id>()
                for member in local + remote where seen.insert(member.id).inserted { merged.members.append(member) }
                return merged
            }
            let pulledClock: UInt64 = pulledIsNewer ? (clock.now + 1_000) << 16 : 10
            var builder = PageBuilder()
            let remoteTargets = [memberSyncIds[0], memberSyncIds[2]].map { "\"\($0.uuidString.lowercased())\"" }.joined(separator: ", ")
            builder.upsert(teamSyncId, clock: pulledClock, origin: UUID(), fields: [("members", "[\(remoteTargets)]")])
            _ = try store.applyPulledPage(builder.page(), entity: "Team", stream: stream)
            #expect(calls.all == [["members"]])
            #expect(views.all.map { Set($0.local) } == [["ann", "bob"]])
            #expect(views.all.map { Set($0.remote) } == [["ann", "cy"]])
            let stored = try #require(try teams.get(team.id))
            #expect(Set(try stored.members.load().map(\.name)) == ["ann", "bob", "cy"])
            let fieldIds = try SyncProbe.fieldIds(SyncedTeams.Team.self, in: store)
            let entry = try #require(try SyncProbe.snapshot(store).outbox.last { $0.entry.syncId == teamSyncId }?.entry)
            let field = try #require(entry.fields.first { $0.id == fieldIds["members"] })
            #expect(field.clock > pulledClock, "the union is recorded above the page's clock")
            #expect(try store.verify().problems.isEmpty)
        }
    }

    final class LockedViews: @unchecked Sendable {
        private let lock = NSLock()
        private var views: [(local: [String], remote: [String])] = []
        func record(local: [String], remote: [String]) { lock.withLock { views.append((local, remote)) } }
        var all: [(local: [String], remote: [String])] { lock.withLock { views } }
    }
}
