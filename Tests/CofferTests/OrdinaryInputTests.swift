@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct OrdinaryInputTests {
    @Test func pagingWithHugeLimitsNeverTraps() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put((0..<5).map { Note(title: "n\($0)", rank: $0) })
            let query = try notes.query().build()
            #expect(try query.find(offset: 1, limit: .max).count == 4)
            #expect(try query.find(offset: .max, limit: .max).isEmpty)
            let sorted = try notes.query().ordered(by: Note.rank).build()
            #expect(try sorted.find(offset: 2, limit: .max).map(\.rank) == [2, 3, 4])
            #expect(try notes.query { Note.rank >= 0 }.build().find(offset: .max - 1, limit: .max).isEmpty)
        }
    }

    @Test func moduloOfTheSmallestIntegerNeverTraps() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var value = Everything()
            value.int64 = .min
            value.int = .min
            try box.put(value)
            #expect(try box.query { Everything.int64.modulo(-1) == 0 }.build().count() == 1)
            #expect(try box.query { Everything.int.modulo(Int.min) == 0 }.build().count() == 1)
            #expect(try box.query { Everything.int.modulo(3) == -2 }.build().count() == 1)   // Int.min % 3 == -2
        }
    }

    @Test func longStringsOfNulBytesAreLegalIndexedValues() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Indexed.Note.self)
            let nuls = String(repeating: "\u{0}", count: 450)
            let id = try notes.put(Indexed.Note(title: nuls, rank: 1))
            try notes.put(Indexed.Note(title: nuls + "x", rank: 2))
            #expect(try notes.query { Indexed.Note.title == nuls }.build().findIds() == [id])
            #expect(try notes.query { Indexed.Note.title.startsWith(nuls) }.build().count() == 2)
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
        }
    }

    @Test func canonicallyEquivalentStringsAreEqual() throws {
        try withStore { (store: Store) throws in
            let precomposed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
            #expect(precomposed == decomposed)   // Swift's rule
            let indexed = store.box(for: IndexedPerson.self)
            let plain = store.box(for: PlainPerson.self)
            let date = Date(timeIntervalSinceReferenceDate: 0)
            try indexed.put(IndexedPerson(id: 0, name: precomposed, age: 1, score: 0, nick: nil, tags: [], born: date, level: nil))
            try plain.put(PlainPerson(id: 0, name: precomposed, age: 1, score: 0, nick: nil, tags: [], born: date, level: nil))
            #expect(try indexed.query { IndexedPerson.name == decomposed }.build().count() == 1)
            #expect(try plain.query { PlainPerson.name == decomposed }.build().count() == 1)
            #expect(try indexed.query { IndexedPerson.name.startsWith("Cafe\u{301}") }.build().count() == 1)
            #expect(try plain.query { PlainPerson.name.isIn([decomposed]) }.build().count() == 1)
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(email: "\(precomposed)@example.com"))
            #expect(throws: CofferError.self) { try contacts.put(Contact(email: "\(decomposed)@example.com")) }
        }
    }
}
