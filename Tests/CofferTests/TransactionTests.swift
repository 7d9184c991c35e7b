@testable import Coffer
import CLMDB
import Foundation
import Testing

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
