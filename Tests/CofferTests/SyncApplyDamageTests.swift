@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Pulled changes of objects whose local record cannot be read: never merged with the fields
/// read before the damage (the push would send the lost ones as null); a change that sets
/// every field replaces the record.
@Suite struct SyncApplyDamageTests {
    let stream = PageBuilder.stream

    /// Cuts the last byte off the stored record: the fields before the last one still read.
    func damageTail(of id: Id, in store: Store) throws {
        let bytes = try store.performWrite { transaction in
            let binding = try store.writableBinding(for: Synced.Task.self, in: transaction)
            return try #require(try transaction.record(id, table: binding.table, entity: binding.schema.name)).map { $0 }
        }
        try Damage.overwriteRecord(store, Synced.Task.self, id: id, with: Array(bytes.dropLast()))
    }

    func fullRow(_ title: String, note: String?) -> [(String, String)] {
        [("title", PageBuilder.string(title)), ("done", "false"), ("priority", "2"),
         ("note", note.map(PageBuilder.string) ?? "null"), ("folder", "null")]
    }

    /// A task stored and acknowledged by the server (nothing waits to be pushed).
    func storeAcknowledgedTask(in store: Store) throws -> (Box<Synced.Task>, Synced.Task, UUID) {
        try register(Synced.Task.self, Synced.Folder.self, in: store)
        let tasks = store.box(for: Synced.Task.self)
        var task = Synced.Task(title: "local", done: true, priority: 5, note: "kept")
        try tasks.put(&task)
        let syncId = try #require(try tasks.syncId(of: task.id))
        try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 10).last?.mid ?? 0)
        return (tasks, task, syncId)
    }

    @Test func aPartialChangeOfADamagedRecordThrowsAndAppliesNothing() throws {
        try withStore { store in
            let (tasks, task, syncId) = try storeAcknowledgedTask(in: store)
            try damageTail(of: task.id, in: store)

            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: nil, fields: [("title", PageBuilder.string("remote"))])
            #expect {
                _ = try store.applyPulledPage(builder.page(cursor: "7"), entity: "Task", stream: stream)
            } throws: { error in
                guard Damage.isCorrupt(error, entity: "Task", id: task.id), case CofferError.damagedRecord(_, _, let reason) = error else { return false }
                return reason.contains(syncId.uuidString) && reason.contains("done") && reason.contains("note")
            }
            // Nothing applied: the record is as damaged as before, the cursor did not move,
            // and nothing waits to be pushed.
            #expect(throws: CofferError.self) { _ = try tasks.get(task.id) }
            #expect(try store.syncCursor(entity: "Task", stream: stream) == "0")
            #expect(try store.pendingSyncCount() == 0)
        }
    }

    @Test func aFullRowReplacesADamagedRecord() throws {
        try withStore { store in
            let (tasks, task, syncId) = try storeAcknowledgedTask(in: store)
            try damageTail(of: task.id, in: store)

            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: nil, fields: fullRow("remote", note: "from the server"))
            let summary = try store.applyPulledPage(builder.page(cursor: "8"), entity: "Task", stream: stream)
            #expect(summary.upserted == 1)
            let repaired = try #require(try tasks.get(task.id))
            #expect(repaired.title == "remote" && !repaired.done && repaired.priority == 2 && repaired.note == "from the server")
            #expect(try store.pendingSyncCount() == 0)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func aFullRowThatLeavesALocalChangeAloneStillThrows() throws {
        try withStore { store in
            ManualClock(5_000_000).install(in: store)
            let (tasks, stored, syncId) = try storeAcknowledgedTask(in: store)
            var task = stored
            task.title = "edited here"
            try tasks.put(&task)  // unacknowledged, newer than the pulled row: kept local
            try damageTail(of: task.id, in: store)

            var builder = PageBuilder()
            builder.upsert(syncId, clock: 10, origin: nil, fields: fullRow("remote", note: nil))
            #expect {
                _ = try store.applyPulledPage(builder.page(cursor: "9"), entity: "Task", stream: stream)
            } throws: { error in
                guard Damage.isCorrupt(error, entity: "Task", id: task.id), case CofferError.damagedRecord(_, _, let reason) = error else { return false }
                return reason.contains("title")
            }
            #expect(try store.syncCursor(entity: "Task", stream: stream) == "0")
        }
    }
}
