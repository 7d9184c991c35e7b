@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Pending links against local edits of their field: an edit at or above the pulled
/// (clock, origin) that parked the link drops it, so the arriving target does not
/// overwrite the edit on this replica only.
@Suite struct SyncPendingLinkTests {
    let stream = PageBuilder.stream

    /// A task pulled with a link to a folder that is not here yet, at `clock`.
    func pullTaskWaitingForFolder(_ store: Store, clock: UInt64) throws -> (task: Id, folder: UUID) {
        let (task, folder) = (UUID(), UUID())
        var builder = PageBuilder()
        builder.upsert(task, clock: clock, origin: UUID(), fields: [("title", "\"pulled\""), ("folder", "\"\(folder.uuidString)\"")])
        _ = try store.applyPulledPage(builder.page(cursor: "1"), entity: "Task", stream: stream)
        let id = try #require(try store.box(for: Synced.Task.self).id(forSyncId: task))
        #expect(try store.performWrite { try $0.allPendingLinks() }.count == 1)
        return (id, folder)
    }

    func pullFolder(_ folder: UUID, _ store: Store) throws {
        var builder = PageBuilder()
        builder.upsert(folder, clock: 20, origin: nil, fields: [("name", "\"arrived\"")])
        _ = try store.applyPulledPage(builder.page(cursor: "2"), entity: "Folder", stream: stream)
    }

    /// A store with tasks and folders registered and a manual clock at 5,000,000 ms.
    func withTaskStore(_ body: (Store, ManualClock, Box<Synced.Task>, Box<Synced.Folder>) throws -> Void) throws {
        try withStore { store in
            try register(Synced.Task.self, Synced.Folder.self, in: store)
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            try body(store, clock, store.box(for: Synced.Task.self), store.box(for: Synced.Folder.self))
        }
    }

    /// Links the task to a new local folder, then unlinks it: the field's last local value
    /// is no link.
    func linkToALocalFolderAndBack(_ taskId: Id, tasks: Box<Synced.Task>, folders: Box<Synced.Folder>) throws {
        var local = Synced.Folder(name: "local")
        try folders.put(&local)
        var task = try #require(try tasks.get(taskId))
        task.folder.targetId = local.id
        try tasks.put(&task)
        task.folder.targetId = nil
        try tasks.put(&task)
    }

    @Test func aLocalEditOfTheFieldDropsTheLinkWaitingInIt() throws {
        try withTaskStore { store, _, tasks, folders in
            let (taskId, folder) = try pullTaskWaitingForFolder(store, clock: 10)
            try linkToALocalFolderAndBack(taskId, tasks: tasks, folders: folders)
            #expect(try store.performWrite { try $0.allPendingLinks() }.isEmpty)
            let pending = try store.pendingSyncCount()

            try pullFolder(folder, store)
            #expect(try tasks.get(taskId)?.folder.targetId == nil, "the local edit stands")
            #expect(try store.pendingSyncCount() == pending)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func aLocalEditBelowTheParkedClockLeavesTheLink() throws {
        try withTaskStore { store, clock, tasks, folders in
            // Parked by a write an hour ahead: the received clock is clamped five minutes
            // ahead, so the local edit below orders before it (the server keeps the link).
            let (taskId, folder) = try pullTaskWaitingForFolder(store, clock: (clock.now + 3_600_000) << 16)
            try linkToALocalFolderAndBack(taskId, tasks: tasks, folders: folders)
            #expect(try store.performWrite { try $0.allPendingLinks() }.count == 1)

            try pullFolder(folder, store)
            let arrived = try #require(try folders.id(forSyncId: folder))
            #expect(try tasks.get(taskId)?.folder.targetId == arrived)
        }
    }

    @Test func anEditOfAnotherFieldLeavesTheLink() throws {
        try withTaskStore { store, _, tasks, _ in
            let (taskId, folder) = try pullTaskWaitingForFolder(store, clock: 10)
            var task = try #require(try tasks.get(taskId))
            task.priority = 3
            try tasks.put(&task)
            try pullFolder(folder, store)
            let arrived = try #require(try store.box(for: Synced.Folder.self).id(forSyncId: folder))
            #expect(try tasks.get(taskId)?.folder.targetId == arrived)
            #expect(try tasks.get(taskId)?.priority == 3)
        }
    }
}
