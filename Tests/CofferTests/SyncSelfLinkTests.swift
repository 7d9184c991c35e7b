@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Removes of a synced entity whose objects link to objects of the same entity: clearing the
/// links of objects that are removed in the same call must queue no change for them.
@Suite struct SyncSelfLinkTests {
    /// A root, two children of it and a grandchild; returns their ids in that order.
    static func tree(_ categories: Box<Synced.Category>) throws -> [Id] {
        let root = try categories.put(Synced.Category(name: "root"))
        let left = try categories.put(Synced.Category(name: "left", parent: ToOne(id: root)))
        let right = try categories.put(Synced.Category(name: "right", parent: ToOne(id: root)))
        let leaf = try categories.put(Synced.Category(name: "leaf", parent: ToOne(id: left)))
        return [root, left, right, leaf]
    }

    @Test func removeAllBeforeTheCreationsWereTakenLeavesNothingToSend() throws {
        try withStore { store in
            let categories = store.box(for: Synced.Category.self)
            let ids = try Self.tree(categories)
            let syncIds = try ids.map { try #require(try categories.syncId(of: $0)) }
            #expect(try categories.removeAll() == 4)
            let snapshot = try SyncProbe.snapshot(store)
            #expect(snapshot.outbox.isEmpty, "every creation was cancelled: \(snapshot.outbox.map(\.entry))")
            #expect(snapshot.pending.isEmpty)
            #expect(try store.pendingSyncCount() == 0)
            for syncId in syncIds { #expect(try categories.id(forSyncId: syncId) == nil) }
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
        }
    }

    @Test func removeAllAfterTheCreationsWereTakenQueuesOnlyDeletes() throws {
        try withStore { store in
            let categories = store.box(for: Synced.Category.self)
            let ids = try Self.tree(categories)
            let syncIds = try ids.map { try #require(try categories.syncId(of: $0)) }
            _ = try store.takeSyncChanges(limit: 2)   // root and left are on their way; right and leaf are not
            #expect(try categories.removeAll() == 4)
            let snapshot = try SyncProbe.snapshot(store)
            let queued = snapshot.outbox.map(\.entry)
            #expect(queued.map(\.operation) == [.upsert, .upsert, .delete, .delete], "\(queued)")
            #expect(Set(queued.suffix(2).map(\.syncId)) == Set(syncIds.prefix(2)))
            #expect(snapshot.pending.isEmpty, "no identity entry names a removed object")
            for syncId in syncIds { #expect(try categories.id(forSyncId: syncId) == nil) }
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
        }
    }

    @Test func removingOneObjectClearsTheLinksOfTheOthersAsChanges() throws {
        try withStore { store in
            let categories = store.box(for: Synced.Category.self)
            let ids = try Self.tree(categories)
            let syncIds = try ids.map { try #require(try categories.syncId(of: $0)) }
            _ = try store.takeSyncChanges(limit: 10)
            try categories.remove(ids[0])   // left and right lose their parent
            var queued = try SyncProbe.snapshot(store).outbox.map(\.entry).suffix(3)
            #expect(queued.map(\.operation) == [.delete, .upsert, .upsert], "\(queued)")
            #expect(queued.map(\.syncId) == [syncIds[0], syncIds[1], syncIds[2]])
            #expect(try categories.get(ids[1])?.parent.targetId == nil)
            // Removed together with the object it links to: one delete each, no patch left.
            try store.write {
                try categories.remove(ids[1])
                try categories.remove(ids[3])
            }
            queued = try SyncProbe.snapshot(store).outbox.map(\.entry).suffix(3)
            #expect(Set(queued.filter { $0.operation == .delete }.map(\.syncId)).isSuperset(of: [syncIds[1], syncIds[3]]))
            #expect(try SyncProbe.snapshot(store).outbox.map(\.entry).filter { $0.syncId == syncIds[3] }.map(\.operation) == [.upsert, .delete])
            #expect(try SyncProbe.snapshot(store).pending.keys.sorted { $0.uuidString < $1.uuidString } == [syncIds[2]])
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
        }
    }
}
