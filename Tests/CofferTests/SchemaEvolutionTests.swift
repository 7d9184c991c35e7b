import Coffer
import Foundation
import Testing

@Suite struct SchemaEvolutionTests {
    @Test func recordsWrittenByAnOlderDeclarationStillDecode() throws {
        try withStore { (store: Store) throws in
            let old = store.box(for: Note.self)
            try old.put([Note(title: "first", body: "b1", rank: 3), Note(title: "second", rank: 4)])

            let new = store.box(for: Later.Note.self)
            let loaded = try new.all()
            #expect(loaded.map(\.heading) == ["first", "second"])
            #expect(loaded.map(\.body) == ["b1", ""])
            #expect(loaded.allSatisfy { !$0.pinned && $0.rating == nil })

            var updated = loaded[0]
            updated.pinned = true
            updated.rating = 4.5
            try new.put(&updated)
            #expect(try new.get(updated.id)?.pinned == true)
            // New ids continue the old sequence.
            #expect(try new.put(Later.Note(heading: "third")) == 3)
        }
    }

    @Test func incompatibleTypeChangeIsRefusedAndChangesNothing() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "keep me"))
            let bad = store.box(for: Incompatible.Note.self)
            #expect(throws: CofferError.schemaMismatch(entity: "Incompatible.Note", property: "title", stored: "String", declared: "Int")) {
                try bad.put(Incompatible.Note(title: 1))
            }
            #expect(throws: CofferError.self) { try bad.count() }
            #expect(try store.box(for: Note.self).all().map(\.title) == ["keep me"])
        }
    }
}
