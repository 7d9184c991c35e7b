@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct DroppedIndexTests {
    /// Regression: `mdb_drop(…, 1)` closes the handle even when its transaction aborts; a
    /// binding that kept it failed with EINVAL afterwards.
    @Test func indexDroppedInARolledBackWriteLeavesUsableBindings() throws {
        try withStore { (store: Store) throws in
            let indexed = store.box(for: Indexed.Note.self)
            try indexed.put(Indexed.Note(title: "a", rank: 1))
            #expect(throws: Boom.self) {
                try store.write {
                    try store.box(for: Note.self).put(Note(title: "b"))   // registers Note: drops the indexes
                    throw Boom()
                }
            }
            try indexed.put(Indexed.Note(title: "c", rank: 2))
            #expect(try indexed.query { Indexed.Note.title == "c" }.build().count() == 1)
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            #expect(try store.verify().isIntact)
        }
    }
}
