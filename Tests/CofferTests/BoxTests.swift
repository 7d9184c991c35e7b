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
