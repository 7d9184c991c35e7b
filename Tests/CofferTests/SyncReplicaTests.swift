@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// The replica's client id: kept across reopening, new for a copy of the store (a copied
/// directory, a backup), renewed on demand; and the last mutation id.
@Suite struct SyncReplicaTests {
    @Test func theClientIdIsKeptAcrossReopening() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let first = try store.syncClientId()
        #expect(try store.syncClientId() == first)
        try store.close()
        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        #expect(try store.syncClientId() == first)
        try store.close()
        // A read-only store reads the id it has.
        store = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        #expect(try store.syncClientId() == first)
        try store.close()
    }

    @Test func aCopiedDirectoryTakesANewClientId() throws {
        let directory = TemporaryDirectory()
        let copy = TemporaryDirectory()
        defer { directory.cleanUp(); copy.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        try store.box(for: Synced.Task.self).put(Synced.Task(title: "before the copy"))
        let original = try store.syncClientId()
        try store.close()
        try FileManager.default.createDirectory(atPath: NSTemporaryDirectory() + "coffer-tests", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory.path, toPath: copy.path)

        let copied = try Store(directory: copy.path, options: StoreOptions(durability: .noSync))
        let copyId = try copied.syncClientId()
        #expect(copyId != original)
        #expect(try copied.syncClientId() == copyId, "the copy keeps its new id")
        #expect(try copied.syncLastMutationId() == 1, "the copy keeps the outbox counter")
        try copied.close()

        let reopened = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        #expect(try reopened.syncClientId() == original, "the original keeps its id")
        try reopened.close()
    }

    @Test func aBackupTakesANewClientId() throws {
        let backup = TemporaryDirectory()
        defer { backup.cleanUp() }
        try withStore { store in
            let original = try store.syncClientId()
            try store.backup(to: backup.path)
            let restored = try Store(directory: backup.path, options: StoreOptions(durability: .noSync))
            defer { try? restored.close() }
            let restoredId = try restored.syncClientId()
            #expect(restoredId != original)
            #expect(try restored.syncClientId() == restoredId)
            #expect(try store.syncClientId() == original)
        }
    }

    @Test func aReadOnlyCopyCannotTakeAnId() throws {
        let directory = TemporaryDirectory()
        let copy = TemporaryDirectory()
        defer { directory.cleanUp(); copy.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        _ = try store.syncClientId()
        try store.close()
        try FileManager.default.createDirectory(atPath: NSTemporaryDirectory() + "coffer-tests", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory.path, toPath: copy.path)
        let readOnly = try Store(directory: copy.path, options: StoreOptions(readOnly: true))
        defer { try? readOnly.close() }
        #expect { _ = try readOnly.syncClientId() } throws: { error in
            guard case CofferError.readOnly = error else { return false }
            return true
        }
    }

    @Test func renewingTakesANewIdForGood() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let first = try store.syncClientId()
        let renewed = try store.renewSyncClientId()
        #expect(renewed != first)
        #expect(try store.syncClientId() == renewed)
        try store.close()
        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        #expect(try store.syncClientId() == renewed)
        try store.close()
    }

    @Test func aDamagedIdentityIsADamagedStore() throws {
        try withStore { store in
            _ = try store.syncClientId()
            try store.performWrite { transaction in
                let catalog = try #require(store.catalogDatabase)
                try [1, 2, 3].withUnsafeBytes { try Catalog.putRaw(key: ReplicaIdentity.catalogKey, value: $0, dbi: catalog, in: transaction) }
            }
            #expect { _ = try store.syncClientId() } throws: { error in
                guard case CofferError.damagedStore(.sync, let reason) = error else { return false }
                return reason.contains("replica identity")
            }
        }
    }

    @Test func theLastMutationIdCountsRecordedChanges() throws {
        try withStore { store in
            #expect(try store.syncLastMutationId() == 0)
            let tasks = store.box(for: Synced.Task.self)
            var task = Synced.Task(title: "a")
            try tasks.put(&task)
            #expect(try store.syncLastMutationId() == 1)
            _ = try store.takeSyncChanges(limit: 10)
            task.done = true
            try tasks.put(&task)
            #expect(try store.syncLastMutationId() == 2)
            try store.acknowledgeSyncChanges(through: 1)
            #expect(try store.syncLastMutationId() == 2, "acknowledging keeps the counter")
        }
    }
}
