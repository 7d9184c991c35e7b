@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// The synced write path's shortcuts, checked against what they stand for: creation entries
/// written straight from the record, look-ups that try the entry after the previous one,
/// and merges that only advance clocks rewritten in place.
@Suite struct SyncWritePathTests {
    @Test func updatesInAnyOrderMergeIntoTheirOwnObjectsEntries() throws {
        try withStore { store in
            let clock = ManualClock(1_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            let fields = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            let priority = try #require(fields["priority"]), done = try #require(fields["done"])
            // Explicit ids at 2^62 and above: random sync ids, creations that list their fields.
            var all = (0..<60).map { Synced.Task(id: (1 << 62) + Id($0), title: "t\($0)") }
            try tasks.put(&all)
            let ids = all.map(\.id)
            let created = try SyncProbe.snapshot(store)
            let creationClock = created.state.clock
            var syncIds: [Id: UUID] = [:]
            for id in ids { syncIds[id] = try tasks.syncId(of: id) }
            #expect(syncIds.count == 60)
            let creations = Dictionary(uniqueKeysWithValues: created.outbox.map { ($0.entry.syncId, $0) })
            #expect(creations.count == 60)

            // A gap in the ids (its creation entry dropped), then one transaction visiting
            // objects ascending with gaps, descending, and ascending again: the shortcut
            // (the next entry) and the search both find each object's own entries.
            let removed = ids[10]
            try tasks.remove(removed)
            let visits = stride(from: 0, to: 60, by: 2).map { ids[$0] } + stride(from: 59, to: 0, by: -3).map { ids[$0] }
                + [ids[1], ids[3], ids[5], removed, ids[7]]
            try store.write {
                for id in visits {
                    guard var task = try tasks.get(id) else { continue }
                    task.priority += 1
                    try tasks.put(&task)
                }
            }
            let visitedClock = try SyncProbe.snapshot(store).state.clock
            try tasks.modifyEach { $0.done.toggle() }
            let snapshot = try SyncProbe.snapshot(store)
            let walkedClock = snapshot.state.clock
            #expect(creationClock < visitedClock && visitedClock < walkedClock)

            #expect(snapshot.outbox.count == 59)
            #expect(syncIds[removed].map { creations[$0] != nil } == true)
            for (id, syncId) in syncIds where id != removed {
                let before = try #require(creations[syncId])
                let after = try #require(snapshot.outbox.first { $0.entry.syncId == syncId })
                #expect(after.mid == before.mid, "merged into its creation, not a new entry")
                #expect(snapshot.pending[syncId] == before.mid)
                #expect(after.entry.isCreation && after.entry.operation == .upsert)
                #expect(after.entry.fields.map(\.id) == before.entry.fields.map(\.id))
                for field in after.entry.fields {
                    let expected: UInt64
                    switch field.id {
                    case done: expected = walkedClock
                    case priority: expected = visits.contains(id) ? visitedClock : creationClock
                    default: expected = creationClock
                    }
                    #expect(field.clock == expected, "object \(id), field \(field.id)")
                }
                #expect(after.entry.clock == walkedClock)
            }
        }
    }

    /// Updates in any order of objects whose creations are whole (derived sync ids) write
    /// nothing to the outbox and take no tick, and the pusher sends each object's current
    /// values.
    @Test func updatesInAnyOrderJoinTheirObjectsWholeCreations() throws {
        try withStore { store in
            let clock = ManualClock(1_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            var all = (0..<60).map { Synced.Task(title: "t\($0)") }
            try tasks.put(&all)
            let ids = all.map(\.id)
            let created = try SyncProbe.snapshot(store)
            #expect(created.outbox.count == 60 && created.outbox.allSatisfy(\.entry.isWhole))
            try tasks.remove(ids[10])
            let removedClock = try SyncProbe.snapshot(store).state.clock
            let visits = stride(from: 0, to: 60, by: 2).map { ids[$0] } + stride(from: 59, to: 0, by: -3).map { ids[$0] }
                + [ids[1], ids[3], ids[5], ids[10], ids[7]]
            try store.write {
                for id in visits {
                    guard var task = try tasks.get(id) else { continue }
                    task.priority += 1
                    try tasks.put(&task)
                }
            }
            try tasks.modifyEach { $0.done.toggle() }
            let snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.state.clock == removedClock, "no tick")
            #expect(snapshot.outbox.map(\.mid) == created.outbox.map(\.mid).filter { $0 != created.outbox[10].mid })
            #expect(snapshot.outbox.map(\.entry) == created.outbox.map(\.entry).enumerated().filter { $0.offset != 10 }.map(\.element))
            let sent = try store.takeSyncChanges(limit: 100)
            for (change, id) in zip(sent, ids.filter { $0 != ids[10] }) {
                let task = try #require(try tasks.get(id))
                let values = Dictionary(uniqueKeysWithValues: change.fields.map { ($0.name, $0.json) })
                #expect(values["priority"] == "\(task.priority)" && values["done"] == "\(task.done)", "object \(id)")
                #expect(change.fields.allSatisfy { $0.clock == created.state.clock })
            }
        }
    }

    @Test func aCreationEntryListsEveryStoredFieldInIdOrder() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let fields = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            let id = try tasks.put(Synced.Task(id: 1 << 62, title: "a", note: "n"))
            let entry = try #require(try SyncProbe.snapshot(store).outbox.first?.entry)
            #expect(entry.isCreation)
            #expect(entry.syncId == (try tasks.syncId(of: id)))
            let stored = try store.performWrite { transaction in
                try RecordFieldsProbe.fieldIds(of: Synced.Task.self, id: id, in: store, transaction: transaction)
            }
            #expect(entry.fields.map(\.id) == stored.sorted())
            #expect(Set(entry.fields.map(\.id)).isSuperset(of: ["title", "done", "priority", "note"].compactMap { fields[$0] }))
            #expect(entry.fields.allSatisfy { $0.clock == entry.clock })

            // A build whose newest property comes first writes records whose field ids do not
            // ascend: the entry still lists them in id order, each once.
            let reordered = store.box(for: SyncReordered.Task.self)
            let other = try reordered.put(SyncReordered.Task(id: (1 << 62) + 1, title: "b"))
            let tag = try #require(try SyncProbe.fieldIds(SyncReordered.Task.self, in: store)["tag"])
            let snapshot = try SyncProbe.snapshot(store)
            let syncId = try #require(try reordered.syncId(of: other))
            let created = try #require(snapshot.outbox.first { $0.entry.syncId == syncId }?.entry)
            let ids = created.fields.map(\.id)
            #expect(ids == ids.sorted() && Set(ids).count == ids.count)
            #expect(ids.contains(tag) && ids.contains(fields["title"]!))
        }
    }

    /// The whole creation of a record whose field ids do not ascend: the pusher sends its
    /// fields in id order, each once.
    @Test func aWholeCreationSendsEveryStoredFieldInIdOrder() throws {
        try withStore { store in
            let fields = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            let reordered = store.box(for: SyncReordered.Task.self)
            let tag = try #require(try SyncProbe.fieldIds(SyncReordered.Task.self, in: store)["tag"])
            let derived = try reordered.put(SyncReordered.Task(title: "c"))
            let derivedSyncId = try #require(try reordered.syncId(of: derived))
            let whole = try #require(try SyncProbe.snapshot(store).outbox.first { $0.entry.syncId == derivedSyncId }?.entry)
            #expect(whole.isWhole && whole.fields.isEmpty)
            let change = try #require(try store.takeSyncChanges(limit: 10).first { $0.syncId == derivedSyncId })
            let sent = change.fields.map(\.storedId)
            #expect(sent == sent.sorted() && Set(sent).count == sent.count)
            #expect(sent.contains(tag) && sent.contains(fields["title"]!))
        }
    }
}

/// `Task` as a later build declares it, with a property it added first (its stored id is the
/// highest, its field comes first in the record).
enum SyncReordered {
    @Sync
    @StoredAs("Task")
    struct Task: Entity {
        var id: Id = 0
        var tag = "new"
        @Index var title: String
        var done = false
        var priority = 0
        var note: String?
        var folder: ToOne<Synced.Folder> = nil
    }
}

/// The stored field ids of one record, in record order.
enum RecordFieldsProbe {
    static func fieldIds<E: Entity>(of type: E.Type, id: Id, in store: Store, transaction: Transaction) throws -> [UInt16] {
        let binding = try store.writableBinding(for: type, in: transaction)
        var ids: [UInt16] = []
        try transaction.withCursor(binding.table, "records") { cursor in
            var current = try cursor.first()
            while let stored = current {
                if IdKey(stored.key)?.id == id {
                    try RecordFields(bytes: stored.value, layout: binding, id: id).forEach { fieldId, _ in ids.append(fieldId) }
                }
                current = try cursor.next()
            }
        }
        return ids
    }
}
