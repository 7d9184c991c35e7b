@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct StoreLifecycleTests {
    @Test func objectsSurviveCloseAndReopen() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        do {
            let store = try Store(directory: directory.path)
            try store.box(for: Note.self).put([Note(title: "one"), Note(title: "two")])
            try store.close()
        }
        let store = try Store(directory: directory.path)
        defer { try? store.close() }
        let notes = store.box(for: Note.self)
        #expect(try notes.all().map(\.title) == ["one", "two"])
        #expect(try notes.put(Note(title: "three")) == 3)
    }

    @Test func readOnlyStoreRefusesWrites() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        do {
            let store = try Store(directory: directory.path)
            try store.box(for: Note.self).put(Note(title: "one"))
            try store.close()
        }
        let store = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        let notes = store.box(for: Note.self)
        #expect(try notes.get(1)?.title == "one")
        #expect(try store.box(for: Everything.self).count() == 0)
        #expect(throws: CofferError.readOnly(path: store.path, operation: "write")) {
            try notes.put(Note(title: "two"))
        }
    }

    @Test func closedStoreThrowsInsteadOfCrashing() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path)
        let notes = store.box(for: Note.self)
        try notes.put(Note(title: "x"))
        try store.close()
        try store.close()
        #expect(throws: CofferError.storeClosed(path: store.path)) { try notes.count() }
        #expect(throws: CofferError.storeClosed(path: store.path)) { try notes.put(Note(title: "y")) }
    }

    @Test func unopenableDirectoriesGiveClearErrors() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let file = directory.path + "/plain-file"
        _ = FileManager.default.createFile(atPath: file, contents: Data("hello".utf8))
        #expect(throws: CofferError.self) { try Store(directory: file) }
        #expect(throws: CofferError.self) {
            try Store(directory: directory.path + "/missing", options: StoreOptions(readOnly: true))
        }
        // A damaged data file is reported, not crashed on.
        let damaged = directory.path + "/damaged"
        try FileManager.default.createDirectory(atPath: damaged, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: damaged + "/data.mdb", contents: Data(repeating: 0xAB, count: 16384))
        #expect {
            try Store(directory: damaged)
        } throws: { error in
            guard case CofferError.storage(.lmdb(.invalid), let message) = error else { return false }
            return message.contains(damaged)
        }
    }

    @Test func secondOpenOfTheSameDirectoryIsRefused() throws {
        try withStore { (store: Store) throws in
            #expect(throws: CofferError.self) { try Store(directory: store.path) }
        }
    }

    @Test func damagedRecordIsReportedWithEntityAndId() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            let id = try notes.put(Note(title: "fine"))
            // Overwrite the record with bytes claiming a field longer than the record.
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Note.self, in: transaction)
                var key = IdKey(id)
                var garbage: [UInt8] = [1, 1, 0, 13, 0xFF, 0xFF, 0, 0]
                try key.withVal { keyVal in
                    try garbage.withUnsafeMutableBytes { raw in
                        var value = MDB_val(UnsafeRawBufferPointer(raw))
                        try transaction.check(mdb_put(transaction.txn, binding.table, &keyVal, &value, 0), "test")
                    }
                }
            }
            #expect {
                try notes.get(id)
            } throws: { error in
                guard case CofferError.damagedRecord(let entity, let badId, _) = error else { return false }
                return entity == "Note" && badId == id
            }
            #expect(try notes.count() == 1)
        }
    }
}
