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

    final class LockedCalls: @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [[String]] = []
        func record(_ properties: [String]) { lock.withLock { calls.append(properties) } }
        var all: [[String]] { lock.withLock { calls } }
    }

    @Test(arguments: [false, true])
    func theMergedObjectIsStoredAndRecorded(pulledIsNewer: Bool) throws {
        try withStore { store in
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            let (id, syncId) = try localNote(store)
            let calls = LockedCalls()
            unionOfTags(store, calls: calls)
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
        try withStore { store in
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            let (id, syncId) = try localNote(store)
            let calls = LockedCalls()
            unionOfTags(store, calls: calls)
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
}
