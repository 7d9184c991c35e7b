@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

@Suite struct SyncIdentityTests {
    @Test func aSyncedObjectGetsAUUIDv7AtItsFirstPutAndKeepsIt() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            var task = Synced.Task(title: "Write")
            let id = try tasks.put(&task)
            let syncId = try #require(try tasks.syncId(of: id))
            #expect(syncId.uuid.6 >> 4 == 7, "a version-7 UUID")
            #expect(syncId.uuid.8 >> 6 == 0b10, "the RFC 9562 variant")
            #expect(try tasks.id(forSyncId: syncId) == id)
            task.done = true
            try tasks.put(&task)
            #expect(try tasks.syncId(of: id) == syncId)
            #expect(try tasks.syncId(of: id + 100) == nil)
            #expect(try tasks.id(forSyncId: UUID()) == nil)
            // Ids made later sort after earlier ones (the time prefix).
            let later = try #require(try tasks.syncId(of: try tasks.put(Synced.Task(title: "Later"))))
            #expect(later.uuidString != syncId.uuidString)
        }
    }

    @Test func removingWritesTheDeleteThenDropsBothMappings() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let id = try tasks.put(Synced.Task(title: "Gone"))
            let syncId = try #require(try tasks.syncId(of: id))
            _ = try store.takeSyncChanges(limit: 10)   // the creation is on its way
            try tasks.remove(id)
            #expect(try tasks.syncId(of: id) == nil)
            #expect(try tasks.id(forSyncId: syncId) == nil)
            let outbox = try SyncProbe.snapshot(store).outbox
            #expect(outbox.map(\.entry.operation) == [.upsert, .delete])
            #expect(outbox.last?.entry.syncId == syncId)
            #expect(try SyncProbe.snapshot(store).pending.isEmpty)
        }
    }

    @Test func nonSyncedEntitiesGetNoDatabasesAndNoEntries() throws {
        try withStore { store in
            let plain = store.box(for: Synced.Plain.self)
            let id = try plain.put(Synced.Plain(title: "local"))
            try plain.put(Synced.Plain(id: id, title: "still local"))
            try plain.remove(id)
            _ = try plain.removeAll()
            for name in [SyncIdTables.outboxName, SyncIdTables.legacyPendingName] {
                #expect(try !SyncProbe.databaseExists(name, in: store))
            }
            let entity = try SyncProbe.entityId(Synced.Plain.self, in: store)
            #expect(try !SyncProbe.databaseExists(SyncIdTables.names(entity: entity).syncIds, in: store))
            #expect(try store.pendingSyncCount() == 0)
            #expect(try store.syncClockValue() == 0)
            #expect(try plain.syncId(of: 1) == nil)
            #expect(try store.takeSyncChanges(limit: 10).isEmpty)
            #expect(Synced.Plain._cofferSchema.isSynced == false)
            #expect(Synced.Task._cofferSchema.isSynced)
        }
    }

    @Test func remoteChangesWriteNoOutboxEntryButReachIndexesAndObservers() async throws {
        try await withStore { (store: Store) async throws in
            let tasks = store.box(for: Synced.Task.self)
            var iterator = tasks.changes().makeAsyncIterator()
            let arriving = UUID()
            var task = Synced.Task(title: "From the server")
            try store.applyRemoteChanges { _ = try tasks.put(&task, syncId: arriving) }
            #expect(await iterator.next() == ObjectChanges(inserted: [task.id], updated: [], removed: []))
            #expect(try tasks.id(forSyncId: arriving) == task.id)
            #expect(try tasks.query { Synced.Task.title == "From the server" }.build().findIds() == [task.id])
            #expect(try store.pendingSyncCount() == 0)
            // The same sync id again is an update of the same object.
            var again = Synced.Task(title: "Renamed on the server")
            try store.applyRemoteChanges { _ = try tasks.put(&again, syncId: arriving) }
            #expect(again.id == task.id)
            #expect(await iterator.next() == ObjectChanges(inserted: [], updated: [task.id], removed: []))
            #expect(try tasks.query { Synced.Task.title == "Renamed on the server" }.build().findIds() == [task.id])
            let removed = try store.applyRemoteChanges { try tasks.remove(syncId: arriving) }
            #expect(removed)
            #expect(await iterator.next() == ObjectChanges(inserted: [], updated: [], removed: [task.id]))
            #expect(try tasks.id(forSyncId: arriving) == nil)
            #expect(try store.pendingSyncCount() == 0)
            #expect(try store.syncClockValue() == 0, "remote writes do not tick the clock")
            // A local write after it is recorded again.
            try tasks.put(Synced.Task(title: "Local"))
            #expect(try store.pendingSyncCount() == 1)
        }
    }

    @Test func putBySyncIdOnANonSyncedEntityIsAMisuse() throws {
        try withStore { store in
            var plain = Synced.Plain(title: "x")
            #expect(throws: CofferError.misuse(.notSynced(entity: "Synced.Plain"))) {
                try store.box(for: Synced.Plain.self).put(&plain, syncId: UUID())
            }
            #expect(plain.id == 0)
        }
    }

    @Test func anEntityThatBecomesSyncedGivesItsStoredObjectsIdsAndCreations() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        // Written by a build without @Sync: the same stored entity, declared plainly.
        do {
            let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
            defer { try? store.close() }
            for title in ["a", "b"] { try store.box(for: Unsynced.Task.self).put(Unsynced.Task(title: title)) }
        }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        let tasks = store.box(for: Synced.Task.self)
        // Sync starts with the first write of a build that declares it.
        #expect(try SyncProbe.snapshot(store).outbox.isEmpty)
        try tasks.put(Synced.Task(title: "c"))
        let all = try tasks.all()
        #expect(all.count == 3)
        for task in all { #expect(try tasks.syncId(of: task.id) != nil) }
        let outbox = try SyncProbe.snapshot(store).outbox
        #expect(outbox.count == 3)
        #expect(outbox.allSatisfy { $0.entry.isCreation && $0.entry.operation == .upsert })
        // Sync stays on for the build that does not declare it.
        try store.box(for: Unsynced.Task.self).put(Unsynced.Task(title: "d"))
        #expect(try SyncProbe.snapshot(store).outbox.count == 4)
    }
}

/// `Synced.Task` as a build without `@Sync` declares it.
enum Unsynced {
    @StoredAs("Task")
    struct Task: Entity {
        var id: Id = 0
        @Index var title: String
        var done = false
        var priority = 0
        var note: String?
        var folder: ToOne<Synced.Folder> = nil
    }
}

extension SyncIdentityTests {
    @Test func removeAllWritesADeleteForEveryKnownObject() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let ids = try tasks.put([Synced.Task(title: "a"), Synced.Task(title: "b"), Synced.Task(title: "c")])
            let syncIds = try ids.map { try #require(try tasks.syncId(of: $0)) }
            _ = try store.takeSyncChanges(limit: 2)   // a and b are on their way; c is not
            #expect(try tasks.removeAll() == 3)
            let outbox = try SyncProbe.snapshot(store).outbox
            // c's creation was never taken: dropped with its delete; a and b get deletes.
            #expect(outbox.map(\.entry.operation) == [.upsert, .upsert, .delete, .delete])
            #expect(Set(outbox.suffix(2).map(\.entry.syncId)) == Set(syncIds.prefix(2)))
            for syncId in syncIds { #expect(try tasks.id(forSyncId: syncId) == nil) }
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
        }
    }
}
