@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct BoxTests {
    @Test func putAssignsAscendingIdsAndUpdatesInPlace() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var a = Note(title: "a")
            var b = Note(title: "b")
            try notes.put(&a)
            try notes.put(&b)
            #expect(a.id == 1 && b.id == 2)
            a.title = "a2"
            #expect(try notes.put(&a) == 1)
            #expect(try notes.count() == 2)
            #expect(try notes.get(1)?.title == "a2")
            #expect(try notes.get(99) == nil)
        }
    }

    @Test func idsAreNeverReusedAfterRemoval() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            let first = try notes.put(Note(title: "x"))
            let second = try notes.put(Note(title: "y"))
            #expect(try notes.remove(second))
            #expect(try notes.put(Note(title: "z")) == second + 1)
            #expect(try notes.removeAll() == 2)
            #expect(try notes.put(Note(title: "w")) == second + 2)
            #expect(first == 1)
        }
    }

    @Test func explicitIdThatDoesNotExistIsStoredUnderThatId() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var note = Note(title: "explicit")
            note.id = 500
            #expect(try notes.put(&note) == 500)
            #expect(try notes.get(500)?.title == "explicit")
            // Later ids are handed out above it.
            #expect(try notes.put(Note(title: "next")) == 501)
            var low = Note(title: "low")
            low.id = 10
            try notes.put(&low)
            #expect(try notes.all().map(\.id) == [10, 500, 501])
        }
    }

    @Test func batchOperations() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var batch = (0..<100).map { Note(title: "n\($0)", rank: $0) }
            try notes.put(&batch)
            #expect(batch.map(\.id) == Array(1...100))
            #expect(try notes.get([3, 1, 1000, 2]).map(\.title) == ["n2", "n0", "n1"])
            #expect(try notes.contains(100))
            #expect(try notes.contains(101) == false)
            #expect(try notes.remove([1, 2, 3, 1000]) == 3)
            #expect(try notes.remove(batch[10]))
            #expect(try notes.remove(batch[10]) == false)
            #expect(try notes.count() == 96)
            #expect(try notes.all().map(\.rank) == Array(3...99).filter { $0 != 10 })
            let ids = try notes.put([Note(title: "p"), Note(title: "q")])
            #expect(ids == [101, 102])
        }
    }

    @Test func emptyBoxAnswersWithoutAnyWrite() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            #expect(try notes.count() == 0)
            #expect(try notes.all().isEmpty)
            #expect(try notes.get(1) == nil)
            #expect(try notes.removeAll() == 0)
        }
    }
}

@Suite struct TransactionTests {
    @Test func throwingWriteLeavesNothing() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put(Note(title: "kept"))
            #expect(throws: Boom.self) {
                try store.write {
                    try notes.put(Note(title: "lost"))
                    try notes.remove(1)
                    throw Boom()
                }
            }
            #expect(try notes.all().map(\.title) == ["kept"])
            // The rolled-back id is never handed out again, so a value still holding it
            // cannot alias another object.
            #expect(try notes.put(Note(title: "next")) == 3)
        }
    }

    @Test func outerRollbackRemovesABatch() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var batch = [Note(title: "a"), Note(title: "b")]
            #expect(throws: Boom.self) {
                try store.write {
                    try notes.put(&batch)
                    throw Boom()
                }
            }
            // Inside an outer transaction the ids were assigned; the outer write rolled back.
            #expect(try notes.count() == 0)
        }
    }

    @Test func nestedWritesJoinTheOuterTransaction() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try store.write {
                try notes.put(Note(title: "outer"))
                try store.write { try notes.put(Note(title: "inner")) }
                // Reads inside a write see its uncommitted changes.
                #expect(try store.read { try notes.count() } == 2)
            }
            #expect(try notes.count() == 2)
        }
    }

    /// Every box call finds its own store's innermost transaction on the thread's stack of
    /// open transactions, whatever other stores' transactions sit above it.
    @Test func boxesOfTwoStoresOnOneThreadJoinTheirOwnTransactions() throws {
        try withStore { (first: Store) throws in
            try withStore { (second: Store) throws in
                let a = first.box(for: Note.self), b = second.box(for: Note.self)
                #expect(throws: Boom.self) {
                    try first.write {
                        try a.put(Note(title: "a1"))
                        try second.write {
                            try b.put(Note(title: "b1"))
                            try a.put(Note(title: "a2"))   // joins the first store's (outer) write
                            #expect(try a.count() == 2)
                            #expect(try b.count() == 1)
                        }
                        #expect(try b.count() == 1)
                        throw Boom()
                    }
                }
                // The first store's rollback took both of its puts; the second store's write
                // had committed.
                #expect(try a.count() == 0)
                #expect(try b.get(1)?.title == "b1")
            }
        }
    }

    @Test func writingInsideReadIsRefused() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put(Note(title: "x"))
            #expect {
                try store.read { try notes.put(Note(title: "y")) }
            } throws: { error in
                error as? CofferError == .misuse(.writeInsideRead(path: store.path))
            }
            #expect(try notes.count() == 1)
        }
    }

    @Test func readSeesOneSnapshotWhileAWriterCommits() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put(Note(title: "before"))
            try store.read {
                let first = try notes.count()
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    _ = try? notes.put(Note(title: "during"))
                    done.signal()
                }
                done.wait()
                #expect(try notes.count() == first)
                #expect(try notes.get(2) == nil)
            }
            #expect(try notes.count() == 2)
        }
    }

    @Test func parallelReadersAndAWriterSeeConsistentSnapshots() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            // Invariant kept by every write: the ranks of all notes sum to zero.
            try notes.put([Note(title: "a", rank: 5), Note(title: "b", rank: -5)])
            let violations = Counter()
            let group = DispatchGroup()
            for reader in 0..<4 {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<300 {
                        do {
                            let all = try store.read { try notes.all() }
                            if all.reduce(0, { $0 + $1.rank }) != 0 { violations.add() }
                        } catch { violations.add() }
                    }
                    _ = reader
                }
            }
            DispatchQueue.global().async(group: group) {
                for step in 1...300 {
                    try? store.write {
                        try notes.put(Note(title: "p\(step)", rank: step))
                        try notes.put(Note(title: "m\(step)", rank: -step))
                    }
                }
            }
            group.wait()
            #expect(violations.value == 0)
            #expect(try notes.count() == 602)
        }
    }

    @Test func asyncReadsAndWritesFromManyTasks() async throws {
        try await withStore { (store: Store) async throws in
            let notes = store.box(for: Note.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<20 {
                    group.addTask {
                        try await store.write {
                            for item in 0..<10 { try notes.put(Note(title: "t\(task)-\(item)")) }
                        }
                        let count = try await store.read { try notes.count() }
                        #expect(count >= 10)
                    }
                }
                try await group.waitForAll()
            }
            let total = try await store.read { try notes.count() }
            #expect(total == 200)
            let ids = try await store.read { try notes.all().map(\.id) }
            #expect(ids == Array(1...200))
        }
    }

    @Test func mapGrowsInsideOneLargeTransaction() throws {
        // A 1 MiB map cannot hold 40 MB: the write must grow it (and rerun) by itself.
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var batch = (0..<40).map { _ in
                var value = Everything()
                value.data = Data(repeating: 7, count: 1 << 20)
                return value
            }
            try box.put(&batch)
            #expect(batch.map(\.id) == Array(1...40))
            #expect(try box.count() == 40)
            #expect(try box.get(40)?.data.count == 1 << 20)
            #expect(try store.mapUsage().mapSize > 40 << 20)
        }
    }

    @Test func maxSizeStopsGrowthWithAClearErrorAndKeepsCommittedData() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, maxSize: 4 << 20, durability: .noSync)) { (store: Store) throws in
            let box = store.box(for: Everything.self)
            try box.put(Everything())
            var big = Everything()
            big.data = Data(repeating: 1, count: 8 << 20)
            #expect {
                try box.put(&big)
            } throws: { error in
                guard case CofferError.storage(.lmdb(.mapFull), let message) = error else { return false }
                return message.contains("maxSize")
            }
            #expect(big.id == 0)
            #expect(try box.count() == 1)
        }
    }
}

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

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
