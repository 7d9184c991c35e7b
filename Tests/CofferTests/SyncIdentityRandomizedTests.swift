@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Random local puts (new, explicit and reused ids), removes, pulls (foreign ids, ids that
/// look derived, this replica's own ids coming back), pusher batches, rolled-back
/// transactions, `removeAll` and reopenings (new epochs), against a plain model of which
/// object each sync id names: `syncId(of:)` and `id(forSyncId:)` must agree with it after
/// every step, and no sync id may ever name a second object.
@Suite struct SyncIdentityRandomizedTests {
    private struct Rollback: Error {}

    struct Model {
        /// The stored objects and their sync ids.
        var objects: [Id: UUID] = [:]
        /// Every sync id an object ever had (a removed object's id never names another).
        var everAssigned: Set<UUID> = []
        var highestId: Id = 0
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func identityLookupsMatchTheModel(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var random = SplitMix64(state: seed)
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        var tasks = store.box(for: Synced.Task.self)
        var model = Model()

        func assign(_ id: Id, _ syncId: UUID, _ step: Int) {
            #expect(!model.everAssigned.contains(syncId), "step \(step): \(syncId) named another object before")
            model.everAssigned.insert(syncId)
            model.objects[id] = syncId
            model.highestId = max(model.highestId, id)
        }

        for step in 0..<400 {
            let existing = model.objects.keys.sorted()
            switch random.next() % 13 {
            case 0, 1, 2:
                let id = try tasks.put(Synced.Task(title: "new \(step)"))
                assign(id, try #require(try tasks.syncId(of: id)), step)
            case 3:
                // An explicit id: often one a removed object had, sometimes a fresh one.
                let id = Id(random.next() % (model.highestId + 5)) + 1
                guard model.objects[id] == nil else { continue }
                try tasks.put(Synced.Task(id: id, title: "explicit \(step)"))
                assign(id, try #require(try tasks.syncId(of: id)), step)
            case 4, 5:
                guard let id = existing.randomElement(using: &random) else { continue }
                try tasks.put(Synced.Task(id: id, title: "changed \(step)", priority: Int(step)))
            case 6:
                guard let id = existing.randomElement(using: &random) else { continue }
                try tasks.remove(id)
                model.objects[id] = nil
            case 7:
                // A pulled object: a foreign id, or one this epoch would derive for a local
                // id not handed out yet.
                let syncId = random.next() % 3 == 0
                    ? try SyncDerivedIdTests.derivedId(store, for: model.highestId + 1 + Id(random.next() % 4))
                    : SyncIdGenerator.make(milliseconds: 1_700_000_000_000 + random.next() % 1_000)
                guard !model.everAssigned.contains(syncId) else { continue }
                var task = Synced.Task(title: "pulled \(step)")
                let id = try store.applyRemoteChanges { try tasks.put(&task, syncId: syncId) }
                #expect(model.objects[id] == nil)
                assign(id, syncId, step)
            case 8:
                // A pulled change of a stored object (ours or pulled) names it by its sync id.
                guard let id = existing.randomElement(using: &random), let syncId = model.objects[id] else { continue }
                var task = Synced.Task(title: "pulled change \(step)")
                #expect(try store.applyRemoteChanges { try tasks.put(&task, syncId: syncId) } == id)
            case 9:
                guard let id = existing.randomElement(using: &random), let syncId = model.objects[id] else { continue }
                #expect(try store.applyRemoteChanges { try tasks.remove(syncId: syncId) })
                model.objects[id] = nil
            case 10:
                let changes = try store.takeSyncChanges(limit: Int(random.next() % 20) + 1)
                if let last = changes.last, random.next() % 2 == 0 { try store.acknowledgeSyncChanges(through: last.mid) }
            case 11:
                #expect(throws: Rollback.self) {
                    try store.write {
                        let id = try tasks.put(Synced.Task(title: "rolled back \(step)"))
                        if let other = existing.first { try tasks.remove(other) }
                        _ = id
                        throw Rollback()
                    }
                }
            default:
                if random.next() % 6 == 0 {
                    _ = try tasks.removeAll()
                    model.objects = [:]
                } else {
                    try store.close()
                    store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
                    tasks = store.box(for: Synced.Task.self)
                }
            }
            for (id, syncId) in model.objects {
                #expect(try tasks.syncId(of: id) == syncId, "step \(step): the sync id of \(id)")
                #expect(try tasks.id(forSyncId: syncId) == id, "step \(step): the object of \(syncId)")
            }
            if step % 25 == 0 {
                let named = Set(model.objects.values)
                for syncId in model.everAssigned.subtracting(named) {
                    #expect(try tasks.id(forSyncId: syncId) == nil, "step \(step): the removed \(syncId)")
                }
            }
        }
        #expect(try store.verify().isIntact)
        try store.close()
    }
}
