@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

@Suite struct SyncOutboxTests {
    @Test func updatesBeforeAPushCoalesceAndLaterOnesGetNewEntries() throws {
        try withStore { store in
            let clock = ManualClock(1_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            let fields = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            // A new object's creation is whole: later changes before a push join it with
            // no write and no tick.
            var task = Synced.Task(title: "a")
            try tasks.put(&task)
            task.priority = 2
            try tasks.put(&task)
            task.note = "n"
            try tasks.put(&task)
            try tasks.put(&task)   // nothing changed
            var snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.count == 1)
            let entry = try #require(snapshot.outbox.first?.entry)
            #expect(entry.isCreation && entry.isWhole && entry.fields.isEmpty)
            let base = HybridClock.value(milliseconds: 1_000)
            #expect(entry.clock == base)
            #expect(snapshot.state.clock == base)

            let batch = try store.takeSyncChanges(limit: 10)
            #expect(batch.map(\.mid) == [1])
            // Every field the record holds, at the creation's clock, with its current value.
            #expect(batch.first?.fields.map(\.storedId) == [fields["title"], fields["done"], fields["priority"], fields["note"]].compactMap { $0 }.sorted())
            #expect(batch.first?.fields.allSatisfy { $0.clock == base } == true)
            #expect(batch.first?.fields.first { $0.name == "note" }?.json == "\"n\"")
            #expect(batch.first?.fields.first { $0.name == "priority" }?.json == "2")
            task.priority = 3
            try tasks.put(&task)
            snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.map(\.mid) == [1, 2], "a taken entry is never merged into")
            #expect(snapshot.outbox.last?.entry.fields.map(\.id) == [fields["priority"]!])
            #expect(snapshot.outbox.last?.entry.isCreation == false)
            #expect(snapshot.state.sendFloor == 1)
            try store.acknowledgeSyncChanges(through: 1)
            #expect(try SyncProbe.snapshot(store).outbox.map(\.mid) == [2])
            #expect(throws: CofferError.misuse(.acknowledgedUntakenSyncChange(mid: 2, sendFloor: 1))) {
                try store.acknowledgeSyncChanges(through: 2)
            }
            // A delete after an untaken update replaces it; one after an untaken creation
            // drops the entry.
            try tasks.remove(task.id)
            snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.map(\.mid) == [2])
            #expect(snapshot.outbox.first?.entry.operation == .delete)
            let brief = try tasks.put(Synced.Task(title: "brief"))
            try tasks.remove(brief)
            #expect(try SyncProbe.snapshot(store).outbox.map(\.mid) == [2])
            #expect(try store.pendingSyncCount() == 1)
        }
    }

    /// An object whose sync id is not derived (here an explicit id at 2^62) gets a creation
    /// that lists its fields, and later changes merge into it field by field, each at the
    /// clock of its latest change.
    @Test func aListedCreationMergesFieldsWithTheirClocks() throws {
        try withStore { store in
            let clock = ManualClock(1_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            let fields = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            var task = Synced.Task(id: 1 << 62, title: "a")
            try tasks.put(&task)
            task.priority = 2
            try tasks.put(&task)
            task.note = "n"
            try tasks.put(&task)
            try tasks.put(&task)   // nothing changed: no entry, no tick
            let snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.count == 1)
            let entry = try #require(snapshot.outbox.first?.entry)
            #expect(entry.isCreation && !entry.isWhole)
            let base = HybridClock.value(milliseconds: 1_000)
            #expect(entry.fields.map(\.id) == [fields["title"], fields["done"], fields["priority"], fields["note"]].compactMap { $0 }.sorted())
            let clocks = Dictionary(uniqueKeysWithValues: entry.fields.map { ($0.id, $0.clock) })
            #expect(clocks[fields["title"]!] == base)
            #expect(clocks[fields["priority"]!] == base + 1)
            #expect(clocks[fields["note"]!] == base + 2)
            #expect(entry.clock == base + 2)
            #expect(snapshot.state.clock == base + 2)
            let batch = try store.takeSyncChanges(limit: 10)
            #expect(batch.first?.fields.first { $0.name == "note" }?.clock == base + 2)
        }
    }

    @Test func aBatchCarriesCurrentValuesAndLinksAsSyncIds() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let folders = store.box(for: Synced.Folder.self)
            var folder = Synced.Folder(name: "Inbox")
            try folders.put(&folder)
            var task = Synced.Task(title: "linked", priority: 7)
            task.folder = ToOne(folder)
            try tasks.put(&task)
            let batch = try store.takeSyncChanges(limit: 10)
            #expect(batch.map(\.entity) == ["Folder", "Task"])
            let change = try #require(batch.last)
            let folderId = try #require(try folders.syncId(of: folder.id))
            #expect(change.syncId == (try tasks.syncId(of: task.id)))
            #expect(change.operation == .upsert && change.isCreation && change.objectExists)
            let values = Dictionary(uniqueKeysWithValues: change.fields.map { ($0.name, $0.json) })
            #expect(values["title"] == "\"linked\"")
            #expect(values["priority"] == "7")
            #expect(values["folder"] == "\"\(folderId.uuidString.lowercased())\"")
            #expect(values["note"] == nil, "a nil optional is not a changed field of a creation")
            // The object changed after its entry was written: the pusher sends what is stored now.
            try store.write {
                task.title = "newer"
                try tasks.put(&task)
                try tasks.remove(task.id)
            }
            let again = try store.takeSyncChanges(limit: 10)
            #expect(again.map(\.mid) == [1, 2, 3], "unacknowledged entries come again")
            #expect(again[2].operation == .delete)
            // Removing the link target rewrites the owner: a synced change of its link field.
            var other = Synced.Task(title: "other")
            other.folder = ToOne(folder)
            try tasks.put(&other)
            try store.acknowledgeSyncChanges(through: 3)
            _ = try store.takeSyncChanges(limit: 10)
            try folders.remove(folder.id)
            let last = try store.takeSyncChanges(limit: 10).suffix(2)
            #expect(last.map(\.operation) == [.delete, .upsert])
            #expect(last.last?.fields.map(\.name) == ["folder"])
            #expect(last.last?.fields.first?.json == nil)
        }
    }

    @Test func aFailedOrRolledBackWriteLeavesNoTrace() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            try tasks.put(Synced.Task(title: "kept"))
            let before = try SyncProbe.snapshot(store)
            #expect(throws: Boom.self) {
                try store.write {
                    try tasks.put(Synced.Task(title: "rolled back"))
                    try tasks.remove(1)
                    throw Boom()
                }
            }
            let after = try SyncProbe.snapshot(store)
            #expect(after.outbox.map(\.mid) == before.outbox.map(\.mid))
            #expect(after.outbox.map(\.entry) == before.outbox.map(\.entry))
            #expect(after.state == before.state, "no clock advance, no mid handed out")
            #expect(try tasks.count() == 1)
            #expect(try tasks.syncId(of: 1) != nil)
            #expect(try tasks.syncId(of: 2) == nil)
        }
    }

    @Test func aSyncFailureAfterTheRecordWasWrittenRefusesTheCommit() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            var task = Synced.Task(title: "a")
            try tasks.put(&task)
            let syncId = try #require(try tasks.syncId(of: task.id))
            // The object's sync id names an entry that is not there.
            let entity = try SyncProbe.entityId(Synced.Task.self, in: store)
            try SyncProbe.overwrite(SyncIdTables.names(entity: entity).syncIds, key: IdKeyBytes.of(task.id),
                                    value: syncId.syncBytes + Transaction.midKey(99), in: store)
            task.priority = 1
            #expect(throws: CofferError.self) {
                try store.write {
                    do { try tasks.put(&task) } catch {}   // swallowed by the caller
                }
            }
            #expect(try tasks.get(task.id)?.priority == 0, "the record write did not commit without its entry")
        }
    }

    @Test func damagedBytesAreReportedNeverTrapped() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            try tasks.put(Synced.Task(title: "a"))
            for bytes: [UInt8] in [[], [9], [1, 0, 0], [1, 7] + [UInt8](repeating: 0, count: 31), [1, 0, 0] + [UInt8](repeating: 0, count: 28) + [0, 5],
                                  // whole, but a delete; whole without the creation flag; whole listing a field; an unknown flag
                                  [1, 1, 3] + [UInt8](repeating: 0, count: 30), [1, 0, 2] + [UInt8](repeating: 0, count: 30),
                                  [1, 0, 3] + [UInt8](repeating: 0, count: 28) + [0, 1] + [UInt8](repeating: 0, count: 10),
                                  [1, 0, 5] + [UInt8](repeating: 0, count: 30)] {
                try SyncProbe.overwrite(SyncIdTables.outboxName, key: Transaction.midKey(1), value: bytes, in: store)
                do {
                    _ = try store.takeSyncChanges(limit: 1)
                    Issue.record("damaged entry \(bytes) was read")
                } catch CofferError.damagedStore(.sync, _) {}
            }
            try withStore { other in
                try other.box(for: Synced.Task.self).put(Synced.Task(title: "b"))
                try other.write {
                    guard let catalog = other.catalogDatabase, let transaction = Transaction.current(for: other) else { return }
                    try ([1, 2, 3] as [UInt8]).withUnsafeBytes { try Catalog.putRaw(key: SyncState.catalogKey, value: $0, dbi: catalog, in: transaction) }
                }
                #expect(throws: CofferError.damagedStore(part: .sync, reason: "the sync state has 3 bytes, not 32")) {
                    try other.box(for: Synced.Task.self).put(Synced.Task(title: "c"))
                }
                #expect(try other.box(for: Synced.Task.self).count() == 1)
            }
            let entity = try SyncProbe.entityId(Synced.Task.self, in: store)
            try SyncProbe.overwrite(SyncIdTables.names(entity: entity).syncIds, key: Array(IdKeyBytes.of(1)), value: [1, 2], in: store)
            #expect(throws: CofferError.damagedStore(part: .sync, reason: "the sync id of 1 has 2 bytes, not 24")) {
                try store.box(for: Synced.Task.self).syncId(of: 1)
            }
        }
    }

    @Test func entriesAreTakenOnlyInTheirOwnTransaction() throws {
        try withStore { store in
            try store.box(for: Synced.Task.self).put(Synced.Task(title: "a"))
            for inRead in [false, true] {
                do {
                    if inRead { _ = try store.read { try store.takeSyncChanges(limit: 10) } } else { _ = try store.write { try store.takeSyncChanges(limit: 10) } }
                    Issue.record("entries taken inside a transaction")
                } catch CofferError.misuse(.syncBatchInsideTransaction(let path)) {
                    #expect(path == store.path)
                }
            }
            #expect(try store.takeSyncChanges(limit: 10).count == 1)
        }
    }

    @Test func aLostCounterNeverReusesAStoredMid() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            try tasks.put(Synced.Task(title: "a"))
            let entries = try store.takeSyncChanges(limit: 10)
            #expect(entries.count == 1)
            // The sync state went back to zero (its counter with it) while the outbox keeps mid 1.
            try store.write {
                guard let catalog = store.catalogDatabase, let transaction = Transaction.current(for: store) else { return }
                try SyncState().encoded().withUnsafeBytes { try Catalog.putRaw(key: SyncState.catalogKey, value: $0, dbi: catalog, in: transaction) }
            }
            #expect(throws: CofferError.damagedStore(part: .sync, reason: "the outbox already holds mid 1: the sync state's counter is behind its entries")) {
                try tasks.put(Synced.Task(title: "b"))
            }
            #expect(try tasks.count() == 1)
        }
    }

    @Test func retiredAndUnknownFieldsAreCarriedAndReported() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            var task = Synced.Task(title: "a", note: "kept")
            try tasks.put(&task)
            // Another build without `note` registers: the property is retired, its value carried.
            let narrow = store.box(for: Synced.TaskWithoutNote.self)
            var seen = try #require(try narrow.get(task.id))
            seen.priority = 5
            try narrow.put(&seen)
            let batch = try store.takeSyncChanges(limit: 10)
            let note = try #require(batch.first?.fields.first { $0.name == "note" })
            #expect(note.isRetired && note.json == "\"kept\"")
            // An entry naming a field id the catalog does not list keeps it and reports it.
            try store.performWrite { transaction in
                let entityId = try store.writableBinding(for: Synced.Task.self, in: transaction).entityId
                let syncId = try #require(try tasks.syncId(of: task.id))
                _ = try [UInt16(900)].withUnsafeBufferPointer { fields in
                    try transaction.enqueue(.upsert, isCreation: false, entityId: entityId, syncId: syncId, newestMid: 0, fields: fields)
                }
            }
            let unknown = try #require(try store.takeSyncChanges(limit: 10).last)
            #expect(unknown.unknownFieldIds == [900])
            #expect(unknown.fields.isEmpty)
        }
    }
}

/// The 8 key bytes of an id, as the tables store it.
enum IdKeyBytes {
    static func of(_ id: Id) -> [UInt8] { withUnsafeBytes(of: id.bigEndian) { Array($0) } }
}

extension SyncOutboxTests {
    @Test func verifyChecksTheIdentityTablesAndTheOutbox() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            for title in ["a", "b", "c"] { try tasks.put(Synced.Task(title: title)) }
            try tasks.remove(2)
            _ = try store.takeSyncChanges(limit: 1)
            try tasks.put(Synced.Task(id: 1, title: "a2"))
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
            let entity = try SyncProbe.entityId(Synced.Task.self, in: store)
            try SyncProbe.overwrite(SyncIdTables.names(entity: entity).syncIds, key: IdKeyBytes.of(3), value: UUID().syncBytes, in: store)
            let first = try #require(try tasks.syncId(of: 1))
            try SyncProbe.overwrite(SyncIdTables.names(entity: entity).syncIds, key: IdKeyBytes.of(1), value: first.syncBytes + Transaction.midKey(77), in: store)
            try SyncProbe.overwrite(SyncIdTables.outboxName, key: Transaction.midKey(78), value: [1], in: store)
            let problems = try store.verify().problems
            #expect(problems.contains { $0.contains("does not map back") || $0.contains("reverse entries") }, "\(problems)")
            #expect(problems.contains { $0.contains("names the outbox entry 77, which is not stored") }, "\(problems)")
            #expect(problems.contains { $0.contains("the outbox entry 78") }, "\(problems)")
        }
    }
}

extension SyncOutboxTests {
    @Test func aWriteRerunAfterMapGrowthRecordsWhatAFirstRunWould() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { store in
            let tasks = store.box(for: Synced.Task.self)
            try tasks.put(Synced.Task(title: "first"))
            let before = try store.mapUsage().mapSize
            var runs = 0
            // One transaction larger than the map: LMDB runs out, the map grows, the body runs again.
            try store.write {
                runs += 1
                for index in 0..<3_000 { try tasks.put(Synced.Task(title: "t\(index)", note: String(repeating: "n", count: 300))) }
            }
            let after = try store.mapUsage().mapSize
            #expect(runs > 1 && after > before)
            let snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.map(\.mid) == Array(1...3_001))
            #expect(snapshot.state.lastMid == 3_001)
            #expect(Set(snapshot.outbox.dropFirst().map(\.entry.clock)).count == 1, "one tick for the transaction")
            #expect(Set(snapshot.outbox.map(\.entry.syncId)).count == 3_001)
            #expect(snapshot.pending.count == 3_001)
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
        }
    }
}
