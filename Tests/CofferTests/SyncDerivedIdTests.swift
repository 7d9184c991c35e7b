@_spi(CofferSync) @testable import Coffer
import CLMDB
import Foundation
import Testing

/// Sync ids derived from local ids (no identity entries for this replica's new objects):
/// every way a derived id could name two objects, or change, is tried here.
@Suite struct SyncDerivedIdTests {
    private struct Rollback: Error {}

    /// The number of entries in both identity tables of `Synced.Task`.
    static func identityEntries(_ store: Store) throws -> Int {
        try store.performWrite { transaction in
            let entity = try store.writableBinding(for: Synced.Task.self, in: transaction).entityId
            let names = SyncIdTables.names(entity: entity)
            var count = 0
            for name in [names.syncIds, names.localIds] {
                let (database, _) = try transaction.openDatabase(name, create: false, name)
                var stat = MDB_stat()
                try transaction.check(mdb_stat(transaction.txn, database, &stat), name)
                count += stat.ms_entries
            }
            return count
        }
    }

    /// The sync id the store instance's epoch derives for the local id `id` of `Synced.Task`.
    static func derivedId(_ store: Store, for id: Id) throws -> UUID {
        try store.performWrite { transaction in
            let entity = try store.writableBinding(for: Synced.Task.self, in: transaction).entityId
            return try transaction.derivationEpoch().syncId(of: id, entityId: entity)
        }
    }

    @Test func theDerivationIsABijectionLaidOutAsAUUIDv7() {
        let epoch = SyncIdDerivation.random(milliseconds: 1_700_000_000_000)
        var seen = Set<UUID>()
        for id in [Id(1), 2, 3, 1 << 40, Transaction.explicitIdCeiling - 1, .max] + (100..<2_100).map(Id.init) {
            let syncId = epoch.syncId(of: id, entityId: 7)
            #expect(syncId.uuid.6 >> 4 == 7 && syncId.uuid.8 >> 6 == 0b10)
            #expect(SyncIdDerivation.prefix(of: syncId) == epoch.prefix)
            #expect(epoch.id(of: syncId, entityId: 7) == id)
            #expect(epoch.syncId(of: id, entityId: 8) != syncId, "each entity has its own ids")
            #expect(seen.insert(syncId).inserted)
        }
        let other = SyncIdDerivation.random(milliseconds: 1_700_000_000_000)
        #expect(other.syncId(of: 1, entityId: 7) != epoch.syncId(of: 1, entityId: 7))
        #expect(epoch.id(of: UUID(), entityId: 7) == nil)
    }

    @Test func aNewObjectWritesNoIdentityEntryAndKeepsItsIdAcrossOpens() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        var tasks = store.box(for: Synced.Task.self)
        let first = try tasks.put(Synced.Task(title: "a"))
        let second = try tasks.put(Synced.Task(title: "b"))
        let firstSyncId = try #require(try tasks.syncId(of: first))
        #expect(try Self.identityEntries(store) == 0)
        #expect(try tasks.id(forSyncId: firstSyncId) == first)
        try tasks.put(Synced.Task(id: first, title: "a2"))   // merged into the untaken creation
        #expect(try Self.identityEntries(store) == 0)
        _ = try store.takeSyncChanges(limit: 10)
        try tasks.put(Synced.Task(id: first, title: "a3"))   // a new entry, named by a syncIds entry
        #expect(try Self.identityEntries(store) == 1)
        try store.close()

        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        tasks = store.box(for: Synced.Task.self)
        #expect(try tasks.syncId(of: first) == firstSyncId)
        #expect(try tasks.id(forSyncId: firstSyncId) == first)
        let secondSyncId = try #require(try tasks.syncId(of: second))
        let third = try tasks.put(Synced.Task(title: "c"))
        let thirdSyncId = try #require(try tasks.syncId(of: third))
        // Another open is another epoch: another prefix.
        #expect(SyncIdDerivation.prefix(of: thirdSyncId) != SyncIdDerivation.prefix(of: secondSyncId))
        #expect(try tasks.id(forSyncId: thirdSyncId) == third)
        #expect(try tasks.id(forSyncId: secondSyncId) == second)
        #expect(try store.verify().isIntact)
    }

    @Test func anIdReusedAfterARemoveGetsAFreshSyncId() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let id = try tasks.put(Synced.Task(title: "first life"))
            let old = try #require(try tasks.syncId(of: id))
            _ = try store.takeSyncChanges(limit: 10)        // pushed: the server knows `old`
            try tasks.remove(id)
            try tasks.put(Synced.Task(id: id, title: "second life"))
            let new = try #require(try tasks.syncId(of: id))
            #expect(new != old)
            #expect(try tasks.id(forSyncId: old) == nil)
            #expect(try tasks.id(forSyncId: new) == id)
            let outbox = try SyncProbe.snapshot(store).outbox.map(\.entry)
            #expect(outbox.map(\.syncId) == [old, old, new])
            #expect(outbox.map(\.operation) == [.upsert, .delete, .upsert])
            // Unpushed, removed and put again in one transaction: also a new id.
            let other = try tasks.put(Synced.Task(title: "short"))
            let otherOld = try #require(try tasks.syncId(of: other))
            try store.write {
                try tasks.remove(other)
                try tasks.put(Synced.Task(id: other, title: "again"))
            }
            #expect(try tasks.syncId(of: other) != otherOld)
            #expect(try tasks.id(forSyncId: otherOld) == nil)
            // An explicit id above every handed-out one is fresh: derived.
            try tasks.put(Synced.Task(id: 1_000, title: "far"))
            #expect(try tasks.id(forSyncId: try #require(try tasks.syncId(of: 1_000))) == 1_000)
            #expect(try store.verify().isIntact)
        }
    }

    @Test func aRolledBackInsertLeavesNoIdAndItsIdIsNeverDerivedAgain() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            var rolledBack: (Id, UUID)?
            #expect(throws: Rollback.self) {
                try store.write {
                    let id = try tasks.put(Synced.Task(title: "never"))
                    rolledBack = (id, try #require(try tasks.syncId(of: id)))
                    throw Rollback()
                }
            }
            let (id, syncId) = try #require(rolledBack)
            #expect(try tasks.syncId(of: id) == nil)
            #expect(try tasks.id(forSyncId: syncId) == nil)
            let next = try tasks.put(Synced.Task(title: "kept"))
            #expect(next != id)
            try tasks.put(Synced.Task(id: id, title: "explicit"))   // not fresh: a random id
            #expect(try tasks.syncId(of: id) != syncId)
            #expect(try tasks.id(forSyncId: syncId) == nil)
            #expect(try store.pendingSyncCount() == 2)
            #expect(try store.verify().isIntact)
        }
    }

    @Test func removeAllNeverLetsAnIdBeDerivedTwice() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            let ids = try (0..<5).map { try tasks.put(Synced.Task(title: "t\($0)")) }
            let before = try ids.map { try #require(try tasks.syncId(of: $0)) }
            _ = try store.takeSyncChanges(limit: 10)
            #expect(try tasks.removeAll() == 5)
            let deletes = try SyncProbe.snapshot(store).outbox.map(\.entry).filter { $0.operation == .delete }
            #expect(Set(deletes.map(\.syncId)) == Set(before))
            for syncId in before { #expect(try tasks.id(forSyncId: syncId) == nil) }
            let again = try (0..<5).map { try tasks.put(Synced.Task(title: "u\($0)")) }
            let after = try again.map { try #require(try tasks.syncId(of: $0)) }
            #expect(Set(after).isDisjoint(with: before))
            for id in ids { try tasks.put(Synced.Task(id: id, title: "reused")) }
            let reused = try ids.map { try #require(try tasks.syncId(of: $0)) }
            #expect(Set(reused).isDisjoint(with: before))
            #expect(try store.verify().isIntact)
        }
    }

    @Test func aCopiedStoreDerivesOtherIdsThanItsOriginal() throws {
        let directory = TemporaryDirectory(), copy = TemporaryDirectory()
        defer { directory.cleanUp(); copy.cleanUp() }
        let original = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? original.close() }
        let tasks = original.box(for: Synced.Task.self)
        let shared = try tasks.put(Synced.Task(title: "before the copy"))
        let sharedSyncId = try #require(try tasks.syncId(of: shared))
        try original.backup(to: copy.path)
        let twin = try Store(directory: copy.path, options: StoreOptions(durability: .noSync))
        defer { try? twin.close() }
        let twinTasks = twin.box(for: Synced.Task.self)
        #expect(try twinTasks.syncId(of: shared) == sharedSyncId)
        let mine = try tasks.put(Synced.Task(title: "original's"))
        let theirs = try twinTasks.put(Synced.Task(title: "copy's"))
        #expect(mine == theirs, "the same local id on both")
        #expect(try tasks.syncId(of: mine) != twinTasks.syncId(of: theirs))
        #expect(try twin.verify().isIntact)
    }

    /// A copy (or a restored backup) may hold a whole creation its original pushed already,
    /// perhaps with later changes at later clocks: a change made in the copy gets an entry of
    /// its own at the copy's clock, never folded into that creation's older clock. The same
    /// for a store reopened (another instance: it cannot tell).
    @Test func aChangeInACopyOfAnUntakenWholeCreationGetsItsOwnEntryAndClock() throws {
        let directory = TemporaryDirectory(), copy = TemporaryDirectory()
        defer { directory.cleanUp(); copy.cleanUp() }
        let original = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? original.close() }
        ManualClock(1_000).install(in: original)
        var task = Synced.Task(title: "created")
        try original.box(for: Synced.Task.self).put(&task)
        try original.backup(to: copy.path)
        for path in [copy.path, directory.path] {
            if path == directory.path { try original.close() }
            let store = try Store(directory: path, options: StoreOptions(durability: .noSync))
            defer { try? store.close() }
            ManualClock(5_000).install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            var edited = try #require(try tasks.get(task.id))
            edited.title = "edited later"
            try tasks.put(&edited)
            let changes = try store.takeSyncChanges(limit: 10)
            #expect(changes.count == 2, "the creation, then the change: \(changes.map(\.mid))")
            let title = try #require(changes.last?.fields.first { $0.name == "title" })
            #expect(title.clock >= HybridClock.value(milliseconds: 5_000))
            #expect(title.json == "\"edited later\"")
            #expect(changes.first?.isCreation == true && changes.last?.isCreation == false)
            #expect(try store.verify().isIntact)
        }
    }

    @Test func aPulledIdThatLooksDerivedKeepsItsLocalIdFromBeingDerived() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            _ = try tasks.put(Synced.Task(title: "local"))
            // A foreign id that this instance's epoch would derive for the local id 50.
            let lookalike = try Self.derivedId(store, for: 50)
            var pulled = Synced.Task(title: "pulled")
            let pulledId = try store.applyRemoteChanges { try tasks.put(&pulled, syncId: lookalike) }
            #expect(pulledId != 50)
            #expect(try tasks.id(forSyncId: lookalike) == pulledId)
            try tasks.put(Synced.Task(id: 50, title: "explicit 50"))
            #expect(try tasks.syncId(of: 50) != lookalike)
            #expect(try tasks.id(forSyncId: lookalike) == pulledId)
            #expect(try tasks.syncId(of: pulledId) == lookalike)
            #expect(try tasks.id(forSyncId: try #require(try tasks.syncId(of: 50))) == 50)
            // Our own derived id coming back from the server names our object.
            let mine = try tasks.put(Synced.Task(title: "mine"))
            let mineSyncId = try #require(try tasks.syncId(of: mine))
            var update = Synced.Task(title: "changed elsewhere")
            #expect(try store.applyRemoteChanges { try tasks.put(&update, syncId: mineSyncId) } == mine)
            #expect(try tasks.get(mine)?.title == "changed elsewhere")
            #expect(try store.verify().isIntact)
        }
    }

    @Test func aStoreWithIdentityEntriesOnlyOpensAndSyncsOn() throws {
        // A store as builds before derived ids wrote it: every object has both identity
        // entries, the state is of format 2 and there are no runs or epochs.
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        var tasks = store.box(for: Synced.Task.self)
        var known: [Id: UUID] = [:]
        try store.applyRemoteChanges {
            for index in 0..<4 {
                var task = Synced.Task(title: "old \(index)")
                let syncId = SyncIdGenerator.make(milliseconds: 1_700_000_000_000 + UInt64(index))
                known[try tasks.put(&task, syncId: syncId)] = syncId
            }
        }
        try store.performWrite { transaction in
            try transaction.prepareSyncState()
            var bytes = transaction.sync.state.encoded()
            bytes[7] = 2
            let catalog = try #require(store.catalogDatabase)
            try bytes.withUnsafeBytes { try Catalog.putRaw(key: SyncState.catalogKey, value: $0, dbi: catalog, in: transaction) }
            for name in [Transaction.syncRunsName, Transaction.syncEpochsName] {
                let (database, _) = try transaction.openDatabase(name, create: false, name)
                try transaction.check(mdb_drop(transaction.txn, database, 1), name)
            }
        }
        try store.close()
        store = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        tasks = store.box(for: Synced.Task.self)
        for (id, syncId) in known {
            #expect(try tasks.syncId(of: id) == syncId)
            #expect(try tasks.id(forSyncId: syncId) == id)
        }
        try store.close()

        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        tasks = store.box(for: Synced.Task.self)
        let (oldId, oldSyncId) = try #require(known.min { $0.key < $1.key })
        try tasks.put(Synced.Task(id: oldId, title: "changed"))
        try tasks.put(Synced.Task(id: oldId, title: "changed twice"))   // coalesces
        let new = try tasks.put(Synced.Task(title: "new"))
        #expect(try tasks.syncId(of: oldId) == oldSyncId)
        #expect(try tasks.id(forSyncId: try #require(try tasks.syncId(of: new))) == new)
        let outbox = try SyncProbe.snapshot(store).outbox.map(\.entry)
        #expect(outbox.map(\.syncId) == [oldSyncId, try #require(try tasks.syncId(of: new))])
        #expect(try SyncProbe.snapshot(store).state.lastMid == 2)
        try tasks.remove(oldId)
        #expect(try tasks.id(forSyncId: oldSyncId) == nil)
        #expect(try store.verify().isIntact)
    }
}
