@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Applying pulled pages: one transaction per page, the cursor, the clock, read-your-writes,
/// deletes winning, fields left alone, links, malformed pages.
@Suite struct SyncApplyTests {
    let stream = PageBuilder.stream

    @Test func aPageInsertsUpdatesAndStoresItsCursorWithoutOutboxEntries() throws {
        try withStore { store in
            try register(Synced.Task.self, Synced.Folder.self, in: store)
            let tasks = store.box(for: Synced.Task.self)
            let clock = ManualClock(1_000_000)
            clock.install(in: store)
            let (a, b) = (UUID(), UUID())
            let remote = HybridClock.value(milliseconds: 1_000_100)
            var builder = PageBuilder()
            builder.upsert(a, clock: remote, origin: UUID(), fields: [("title", "\"from the server\""), ("done", "true"), ("priority", "7"), ("note", "null")])
            builder.upsert(b, clock: remote, origin: nil, fields: [("title", "\"second\""), ("priority", "1")])
            #expect(try store.syncCursor(entity: "Task", stream: stream) == "0")
            let summary = try store.applyPulledPage(builder.page(cursor: "812", more: true), entity: "Task", stream: stream)
            #expect(summary == SyncPullSummary(upserted: 2, cursor: "812", more: true))
            #expect(try store.syncCursor(entity: "Task", stream: stream) == "812")
            #expect(try store.syncCursor(entity: "Task", stream: "another") == "0", "cursors are per stream")
            #expect(try store.pendingSyncCount() == 0, "pulled changes are not sent back")
            #expect(try store.syncClockValue() > remote, "the clock moved past the page's")

            let first = try #require(try tasks.id(forSyncId: a).flatMap { try tasks.get($0) })
            #expect(first.title == "from the server" && first.done && first.priority == 7 && first.note == nil)
            #expect(try tasks.query { Synced.Task.title == "second" }.build().find().count == 1, "the index sees pulled objects")
            #expect(try tasks.syncId(of: first.id) == a)

            // A later page changes some fields; the others stay.
            builder = PageBuilder()
            builder.upsert(a, clock: remote + 5, origin: nil, fields: [("priority", "8")])
            let second = try store.applyPulledPage(builder.page(cursor: "900"), entity: "Task", stream: stream)
            #expect(second.upserted == 1 && second.cursor == "900" && !second.more)
            let updated = try #require(try tasks.get(first.id))
            #expect(updated.title == "from the server" && updated.done && updated.priority == 8)

            // The same values again change nothing.
            let again = try store.applyPulledPage(builder.page(cursor: "901"), entity: "Task", stream: stream)
            #expect(again.upserted == 0 && again.unchanged == 1)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func fieldsThisBuildDoesNotKnowAreIgnoredAndMissingOnesKept() throws {
        try withStore { store in
            try register(Synced.Task.self, in: store)
            let tasks = store.box(for: Synced.Task.self)
            var task = Synced.Task(title: "local", priority: 3, note: "kept")
            try tasks.put(&task)
            let syncId = try #require(try tasks.syncId(of: task.id))
            let batch = try store.takeSyncChanges(limit: 10)
            try store.acknowledgeSyncChanges(through: batch.last?.mid ?? 0)
            var builder = PageBuilder()
            builder.upsert(syncId, clock: HybridClock.value(milliseconds: HybridClock.systemMilliseconds()) + 10, origin: UUID(),
                           fields: [("title", "\"remote\""), ("color", "\"blue\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            let stored = try #require(try tasks.get(task.id))
            #expect(stored.title == "remote" && stored.priority == 3 && stored.note == "kept")
        }
    }

    @Test func readYourWritesKeepsNewerLocalFieldsTakenOrNot() throws {
        try withStore { store in
            try register(Synced.Task.self, in: store)
            let clock = ManualClock(2_000_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            var task = Synced.Task(title: "mine", priority: 1)
            try tasks.put(&task)
            let syncId = try #require(try tasks.syncId(of: task.id))
            let client = try store.syncClientId()
            let local = HybridClock.value(milliseconds: 2_000_000)

            // Older remote title: kept local (untaken entry); newer remote priority: applied.
            var builder = PageBuilder()
            builder.upsert(syncId, clock: local + 10, origin: UUID(), fields: [("title", "\"theirs\""), ("priority", "5")],
                           clocks: ["title": (local - 1, UUID())])
            var summary = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(summary.fieldsKeptLocal == 1)
            var stored = try #require(try tasks.get(task.id))
            #expect(stored.title == "mine" && stored.priority == 5)

            // A whole creation a pusher took protects nothing: a pulled row of the object shows
            // the server applied it (its reply may have been lost), so the row is the server's
            // answer to it, whatever its clock.
            let creation = try store.takeSyncChanges(limit: 10)
            builder = PageBuilder()
            builder.upsert(syncId, clock: local - 5, origin: nil, fields: [("priority", "6")])
            summary = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(summary.fieldsKeptLocal == 0)
            #expect(try tasks.get(task.id)?.priority == 6)
            try store.acknowledgeSyncChanges(through: creation.last?.mid ?? 0)

            // A change of a stored object, taken but not acknowledged: still kept (the row
            // existed before it, so a pulled row says nothing of it). The same clock decides
            // by origin.
            clock.now = 2_000_100
            task = try #require(try tasks.get(task.id))
            task.title = "mine, changed"
            try tasks.put(&task)
            let changed = HybridClock.value(milliseconds: 2_000_100)
            let batch = try store.takeSyncChanges(limit: 10)
            let below = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
            let above = UUID(uuidString: "ffffffff-ffff-ffff-ffff-ffffffffffff")!
            builder = PageBuilder()
            builder.upsert(syncId, clock: changed, origin: below, fields: [("title", "\"same clock, lower origin\"")])
            summary = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(summary.fieldsKeptLocal == 1)
            #expect(try tasks.get(task.id)?.title == "mine, changed")
            builder = PageBuilder()
            builder.upsert(syncId, clock: changed, origin: above, fields: [("title", "\"same clock, higher origin\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(try tasks.get(task.id)?.title == (client.uuidString < above.uuidString ? "same clock, higher origin" : "mine, changed"))

            // Acknowledged: the server's value is the truth, whatever its clock.
            try store.acknowledgeSyncChanges(through: batch.last?.mid ?? 0)
            builder = PageBuilder()
            builder.upsert(syncId, clock: local - 100, origin: nil, fields: [("title", "\"server\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            stored = try #require(try tasks.get(task.id))
            #expect(stored.title == "server")
        }
    }

    @Test func deletesWinBothWays() throws {
        try withStore { store in
            try register(Synced.Task.self, in: store)
            let tasks = store.box(for: Synced.Task.self)
            let clock = ManualClock(3_000_000)
            clock.install(in: store)
            var removed = Synced.Task(title: "removed here")
            try tasks.put(&removed)
            let removedSyncId = try #require(try tasks.syncId(of: removed.id))
            var changed = Synced.Task(title: "changed here")
            try tasks.put(&changed)
            let changedSyncId = try #require(try tasks.syncId(of: changed.id))
            var taken = Synced.Task(title: "taken")
            try tasks.put(&taken)
            let takenSyncId = try #require(try tasks.syncId(of: taken.id))
            let batch = try store.takeSyncChanges(limit: 10)
            try store.acknowledgeSyncChanges(through: batch.last?.mid ?? 0)

            taken.priority = 4
            try tasks.put(&taken)
            _ = try store.takeSyncChanges(limit: 10)  // taken, not acknowledged: kept after a pulled delete
            try tasks.remove(removed.id)          // an unacknowledged local delete
            changed.priority = 9
            try tasks.put(&changed)               // an untaken update
            taken.priority = 5
            try tasks.put(&taken)                 // and an untaken one: dropped
            #expect(try store.pendingSyncCount() == 4)

            let later = HybridClock.value(milliseconds: 3_000_500)
            var builder = PageBuilder()
            builder.upsert(removedSyncId, clock: later, origin: nil, fields: [("title", "\"edited remotely\"")])
            builder.delete(changedSyncId, clock: later - 1_000_000, origin: nil)
            builder.delete(takenSyncId, clock: later, origin: UUID())
            let summary = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(summary.skipped == 1 && summary.deleted == 2 && summary.upserted == 0)
            #expect(try tasks.id(forSyncId: removedSyncId) == nil, "a local delete wins over a later remote edit")
            #expect(try tasks.get(changed.id) == nil, "a remote delete wins over a later local edit")
            #expect(try tasks.get(taken.id) == nil)
            let left = try SyncProbe.snapshot(store).outbox.map(\.entry)
            #expect(left.count == 2)
            #expect(left.contains { $0.syncId == removedSyncId && $0.operation == .delete }, "the local delete still goes out")
            #expect(left.contains { $0.syncId == takenSyncId && $0.operation == .upsert }, "the taken entry stays (the server refuses it)")
            #expect(try SyncProbe.snapshot(store).pending.isEmpty)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func linksArriveAsSyncIdsAndWaitForTheirTargets() throws {
        try withStore { store in
            try register(Synced.Task.self, Synced.Folder.self, in: store)
            let tasks = store.box(for: Synced.Task.self)
            let folders = store.box(for: Synced.Folder.self)
            let clock = HybridClock.value(milliseconds: HybridClock.systemMilliseconds())
            let (task, folder, other) = (UUID(), UUID(), UUID())
            var builder = PageBuilder()
            builder.upsert(task, clock: clock, origin: nil, fields: [("title", "\"child first\""), ("folder", "\"\(folder.uuidString)\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            let taskId = try #require(try tasks.id(forSyncId: task))
            #expect(try tasks.get(taskId)?.folder.targetId == nil, "no link until the target arrives")
            #expect(try store.performWrite { transaction in try transaction.allPendingLinks().count } == 1)

            builder = PageBuilder()
            builder.upsert(folder, clock: clock, origin: nil, fields: [("name", "\"parent\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Folder", stream: stream)
            let folderId = try #require(try folders.id(forSyncId: folder))
            #expect(try tasks.get(taskId)?.folder.targetId == folderId, "set in the transaction that brought the target")
            #expect(try store.performWrite { transaction in try transaction.allPendingLinks() }.isEmpty)
            #expect(try store.pendingSyncCount() == 0)

            // A link to a target that is here resolves at once; a later value replaces a waiting one.
            builder = PageBuilder()
            builder.upsert(task, clock: clock + 1, origin: nil, fields: [("folder", "\"\(other.uuidString)\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(try tasks.get(taskId)?.folder.targetId == nil)
            builder = PageBuilder()
            builder.upsert(task, clock: clock + 2, origin: nil, fields: [("folder", "\"\(folder.uuidString)\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            #expect(try tasks.get(taskId)?.folder.targetId == folderId)
            #expect(try store.performWrite { transaction in try transaction.allPendingLinks() }.isEmpty)

            // A target put locally with its sync id resolves what waits for it too.
            builder = PageBuilder()
            builder.upsert(task, clock: clock + 3, origin: nil, fields: [("folder", "\"\(other.uuidString)\"")])
            _ = try store.applyPulledPage(builder.page(), entity: "Task", stream: stream)
            var otherFolder = Synced.Folder(name: "put with its sync id")
            _ = try store.applyRemoteChanges { try folders.put(&otherFolder, syncId: other) }
            #expect(try tasks.get(taskId)?.folder.targetId == otherFolder.id)
            #expect(try store.pendingSyncCount() == 0)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func malformedPagesAreRefusedWithNothingApplied() throws {
        try withStore { store in
            try register(Synced.Task.self, in: store)
            let tasks = store.box(for: Synced.Task.self)
            let id = UUID().uuidString
            let good = #"{"op": "upsert", "id": "\#(id)", "txid": "1", "hlc": "5", "origin": null, "clocks": {}, "fields": {"title": "ok"}}"#
            let cases: [(String, String?)] = [
                ("not json", nil),
                ("[]", nil),
                (#"{"changes": {}, "cursor": "1", "more": false}"#, nil),
                (#"{"changes": [], "more": false}"#, nil),
                (#"{"changes": [], "cursor": 7, "more": false}"#, nil),
                (#"{"changes": [], "cursor": "", "more": false}"#, nil),
                (#"{"changes": [], "cursor": "1", "more": "yes"}"#, nil),
                (#"{"changes": [\#(good), {"op": "upsert", "id": "nope", "hlc": "1"}], "cursor": "1"}"#, nil),
                (#"{"changes": [\#(good), {"op": "merge", "id": "\#(id)", "hlc": "1"}], "cursor": "1"}"#, nil),
                (#"{"changes": [\#(good), {"op": "delete", "id": "\#(id)", "hlc": "-1"}], "cursor": "1"}"#, nil),
                (#"{"changes": [\#(good), {"op": "delete", "id": "\#(id)", "hlc": "18446744073709551616"}], "cursor": "1"}"#, nil),
                (#"{"changes": [\#(good), {"op": "delete", "id": "\#(id)", "hlc": "1", "origin": 5}], "cursor": "1"}"#, nil),
                (#"{"changes": [\#(good)], "cursor": "1", "cursor": "2"}"#, nil),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "fields": {"title": 5}}], "cursor": "1"}"#, "title"),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "fields": {"title": null}}], "cursor": "1"}"#, "title"),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "fields": {"title": "t", "priority": 1.5}}], "cursor": "1"}"#, "priority"),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "fields": {"title": "t", "priority": "9223372036854775808"}}], "cursor": "1"}"#, "priority"),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "fields": {"title": "t", "folder": 12}}], "cursor": "1"}"#, "folder"),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "fields": {"title": "t", "title": "u"}}], "cursor": "1"}"#, nil),
                (#"{"changes": [{"op": "upsert", "id": "\#(id)", "hlc": "1", "clocks": {"title": [1, 2, 3]}, "fields": {"title": "t"}}], "cursor": "1"}"#, nil),
            ]
            for (page, field) in cases {
                #expect(performing: { _ = try store.applyPulledPage(Data(page.utf8), entity: "Task", stream: stream) }, throws: { error in
                    guard case CofferError.invalidSyncPage(let entity, let reportedField, let reason) = error else { return false }
                    return entity == "Task" && reportedField == field && !reason.isEmpty
                })
                #expect(try tasks.count() == 0, "\(page)")
                #expect(try store.syncCursor(entity: "Task", stream: stream) == "0")
            }
            #expect(throws: CofferError.unknownEntity(name: "Nothing", path: store.path, known: ["Task"])) {
                _ = try store.applyPulledPage(Data(#"{"changes": [], "cursor": "1"}"#.utf8), entity: "Nothing", stream: stream)
            }
        }
    }

    @Test func pagesOfUnsyncedEntitiesAreMisuse() throws {
        try withStore { store in
            try register(Synced.Plain.self, in: store)
            #expect(throws: CofferError.misuse(.notSynced(entity: "Plain"))) {
                _ = try store.applyPulledPage(Data(#"{"changes": [], "cursor": "1"}"#.utf8), entity: "Plain", stream: stream)
            }
        }
    }

    /// Random byte mutations of a valid page: each is applied whole or refused with a
    /// `CofferError` that leaves the store as it was; none crashes.
    @Test func mutatedPagesApplyWholeOrNotAtAll() throws {
        try withStore { store in
            try register(Synced.Task.self, Synced.Folder.self, in: store)
            let tasks = store.box(for: Synced.Task.self)
            var builder = PageBuilder()
            let clock = HybridClock.value(milliseconds: HybridClock.systemMilliseconds())
            for index in 0..<4 {
                builder.upsert(UUID(), clock: clock + UInt64(index), origin: UUID(),
                               fields: [("title", "\"task \(index) ☃\""), ("done", "false"), ("priority", "\(index * 1000)"),
                                        ("note", index % 2 == 0 ? "null" : "\"n\\u0041\""), ("folder", "\"\(UUID().uuidString)\"")])
            }
            builder.delete(UUID(), clock: clock, origin: nil)
            let valid = Array(builder.page(cursor: "77"))
            var generator = SystemRandomNumberGenerator()
            let alphabet = Array("{}[]\",:0123456789.-+eEtrufalsn\\u \u{0}".utf8) + [0xFF, 0xC3, 0x80]
            var refused = 0
            for round in 0..<400 {
                var bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let at = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[at] = alphabet.randomElement(using: &generator) ?? 0
                    case 1: bytes.remove(at: at)
                    default: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: at)
                    }
                }
                let before = try tasks.count()
                let cursor = try store.syncCursor(entity: "Task", stream: stream)
                do {
                    let summary = try store.applyPulledPage(Data(bytes), entity: "Task", stream: stream)
                    #expect(try store.syncCursor(entity: "Task", stream: stream) == summary.cursor)
                } catch let error as CofferError {
                    refused += 1
                    #expect(try tasks.count() == before, "round \(round): \(error)")
                    #expect(try store.syncCursor(entity: "Task", stream: stream) == cursor)
                }
            }
            #expect(refused > 100)
            #expect(try store.verify().problems.isEmpty)
        }
    }
}
