@_spi(CofferSync) @testable import Coffer
import CLMDB
import Foundation
import Testing

/// How stores with derived sync ids meet other builds and other writers: the catalog format
/// that keeps earlier builds out, stores written without the derived-id tables, and pulled
/// ids that look derived.
@Suite struct SyncDerivedIdFormatTests {
    static func catalogFormat(_ store: Store) throws -> Int? {
        try store.performWrite { transaction in
            let catalog = try #require(store.catalogDatabase)
            return try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction)?.formatVersion
        }
    }

    static func setCatalogFormat(_ version: Int, _ store: Store) throws {
        try store.performWrite { transaction in
            let catalog = try #require(store.catalogDatabase)
            var meta = try #require(try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction))
            meta.formatVersion = version
            try Catalog.store(meta, key: Catalog.metaKey, dbi: catalog, in: transaction)
        }
    }

    @Test func aStoreWithDerivedIdsIsMarkedSoEarlierBuildsRefuseIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        try store.box(for: Synced.Plain.self).put(Synced.Plain(title: "plain"))
        #expect(try Self.catalogFormat(store) == Catalog.baseFormatVersion, "a store without derived ids keeps the base format")
        let id = try store.box(for: Synced.Task.self).put(Synced.Task(title: "derived"))
        let syncId = try #require(try store.box(for: Synced.Task.self).syncId(of: id))
        #expect(try Self.catalogFormat(store) == Catalog.derivedIdsFormatVersion)
        // A store an earlier build of this format wrote (derived ids, base catalog format):
        // upgraded in place when it opens.
        try Self.setCatalogFormat(Catalog.baseFormatVersion, store)
        try store.close()
        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        #expect(try Self.catalogFormat(store) == Catalog.derivedIdsFormatVersion)
        #expect(try store.box(for: Synced.Task.self).id(forSyncId: syncId) == id)
        #expect(try store.verify().isIntact)
        // A newer format than this build reads: refused.
        try Self.setCatalogFormat(Catalog.formatVersion + 1, store)
        let path = store.path
        try store.close()
        #expect(throws: CofferError.formatTooNew(path: path, version: Catalog.formatVersion + 1, supported: Catalog.formatVersion)) {
            _ = try Store(directory: path)
        }
    }

    @Test func aSyncedStoreWithoutDerivedIdTablesReadsAsOneWithoutDerivedIds() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        var tasks = store.box(for: Synced.Task.self)
        // An object with an identity entry (pulled), then the derived-id tables gone, as a
        // format conversion or a catalog-binding writer leaves a format-3 store.
        var pulled = Synced.Task(title: "pulled")
        let pulledSyncId = UUID()
        let pulledId = try store.applyRemoteChanges { try tasks.put(&pulled, syncId: pulledSyncId) }
        try store.performWrite { transaction in
            for name in [Transaction.syncRunsName, Transaction.syncEpochsName] where try transaction.databaseExists(name) {
                let (database, _) = try transaction.openDatabase(name, create: false, name)
                try transaction.check(mdb_drop(transaction.txn, database, 1), name)
            }
        }
        try store.close()
        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        tasks = store.box(for: Synced.Task.self)
        let foreign = SyncIdDerivation.random(milliseconds: 1_700_000_000_000).syncId(of: 5, entityId: 1)
        #expect(try tasks.id(forSyncId: foreign) == nil)
        #expect(try tasks.id(forSyncId: pulledSyncId) == pulledId)
        #expect(try tasks.syncId(of: pulledId) == pulledSyncId)
        #expect(try tasks.syncId(of: pulledId + 100) == nil)
        let report = try store.verify()
        #expect(report.isIntact, "\(report)")
    }

    @Test func aFarLookalikeOfAPulledIdNeitherExhaustsTheIdsNorIsEverDerived() throws {
        try withStore { store in
            let tasks = store.box(for: Synced.Task.self)
            _ = try tasks.put(Synced.Task(title: "local"))
            let far: Id = 1 << 50
            let lookalike = try SyncDerivedIdTests.derivedId(store, for: far)
            var pulled = Synced.Task(title: "pulled")
            let pulledId = try store.applyRemoteChanges { try tasks.put(&pulled, syncId: lookalike) }
            let next = try tasks.put(Synced.Task(title: "next"))
            #expect(next < 100, "the sequence did not jump toward the lookalike's local id")
            try tasks.put(Synced.Task(id: far, title: "explicit far"))
            #expect(try tasks.syncId(of: far) != lookalike)
            #expect(try tasks.id(forSyncId: lookalike) == pulledId)
            #expect(try tasks.id(forSyncId: try #require(try tasks.syncId(of: next))) == next)
            #expect(try tasks.id(forSyncId: try #require(try tasks.syncId(of: far))) == far)
            #expect(try store.verify().isIntact)
        }
    }
}
