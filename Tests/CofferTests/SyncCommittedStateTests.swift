@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// A synced write starts from the counters the store's previous synced commit left only when
/// nothing committed in between: a commit by another process (or another write of this one)
/// sends the next write back to the catalog, so no mutation id is handed out twice and the
/// clock never goes back.
@Suite(.serialized) struct SyncCommittedStateTests {
    /// The child: two synced creations and an update in the parent's store.
    @Test func syncedWriterChild() throws {
        guard let store = try ChildProcess.openStore(role: "synced-writer") else { return }
        let tasks = store.box(for: Synced.Task.self)
        var task = Synced.Task(title: "child")
        try tasks.put(&task)
        try tasks.put(Synced.Task(title: "child 2"))
        task.priority = 5
        try store.write { try tasks.put(&task) }
        try store.close()
    }

    @Test func anotherProcessesCommitIsNeverOverwrittenByRememberedCounters() throws {
        guard ChildProcess.role == nil else { return }
        let (directory, store) = try ChildProcess.parentStore()
        defer { directory.cleanUp() }
        defer { try? store.close() }
        let tasks = store.box(for: Synced.Task.self)
        try tasks.put(Synced.Task(title: "parent 1"))
        try tasks.put(Synced.Task(title: "parent 2"))
        let before = try SyncProbe.snapshot(store).state
        #expect(try ChildProcess.run(filter: "syncedWriterChild", role: "synced-writer", directory: directory.path) == 0)
        let child = try SyncProbe.snapshot(store).state
        #expect(child.lastMid == before.lastMid + 2 && child.clock > before.clock)
        // The parent's next synced write continues after the child's counters.
        try tasks.put(Synced.Task(title: "parent 3"))
        let after = try SyncProbe.snapshot(store)
        #expect(after.state.lastMid == child.lastMid + 1)
        #expect(after.state.clock > child.clock)
        #expect(after.outbox.map(\.mid) == Array(1...after.state.lastMid))
        #expect(Set(after.outbox.map(\.entry.syncId)).count == 5)
        #expect(try store.verify().isIntact)
    }

    /// Within one process: a write that took a batch (raising the send floor), a non-synced
    /// write and a rolled-back synced write between synced writes all leave the counters the
    /// next write uses equal to the catalog's.
    @Test func theRememberedCountersAreTheCatalogs() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let plain = store.box(for: Synced.Plain.self)
            func expectRememberedEqualsStored() throws { try Self.expectRememberedEqualsStored(store) }
            var task = Synced.Task(title: "a")
            try tasks.put(&task)
            try expectRememberedEqualsStored()
            _ = try store.takeSyncChanges(limit: 10)
            try expectRememberedEqualsStored()
            try plain.put(Synced.Plain(title: "p"))
            try expectRememberedEqualsStored()
            struct Boom: Error {}
            do {
                try store.write {
                    try tasks.put(Synced.Task(title: "rolled back"))
                    throw Boom()
                }
            } catch is Boom {}
            try expectRememberedEqualsStored()
            task.priority = 9
            try tasks.put(&task)
            try tasks.put(Synced.Task(title: "b"))
            try expectRememberedEqualsStored()
            let snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.map(\.mid) == [1, 2, 3])
        }
    }

    /// The counters a write transaction starting now would take from memory, if any, are
    /// the catalog's.
    static func expectRememberedEqualsStored(_ store: Store) throws {
        let stored = try SyncProbe.snapshot(store).state
        try store.performWrite { transaction in
            if let remembered = store.committedSyncState.state(forWriteTransaction: transaction.snapshotId) {
                #expect(remembered == stored)
            }
        }
    }
}
