@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct IndexEvolutionTests {
    @Test func addedIndexIsBuiltAndDroppedIndexDeleted() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        do {
            let store = try Store(directory: directory.path)
            try store.box(for: Note.self).put([Note(title: "x", rank: 1), Note(title: "y", rank: 2), Note(title: "x", rank: 3)])
            try store.close()
        }
        do {
            let store = try Store(directory: directory.path)
            let indexed = store.box(for: Indexed.Note.self)
            #expect(try indexed.count() == 3)   // a read builds nothing: reads never write
            #expect(try indexed.query { Indexed.Note.title == "x" }.build().findIds() == [1, 3])
            try indexed.put(Indexed.Note(title: "z", rank: 4))   // the first write builds the index
            #expect(try IndexProbe.ids(store, Indexed.Note.title, like: Indexed.Note(title: "x")) == [1, 3])
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            try store.close()
        }
        do {
            // Back to the unindexed declaration: the indexes another build declared stay and
            // are maintained (a build that declares them would otherwise rebuild them).
            let store = try Store(directory: directory.path)
            let notes = store.box(for: Note.self)
            #expect(try notes.count() == 4)
            try notes.put(Note(title: "w", rank: 5))
            #expect(throws: CofferError.self) { try notes.put(Note(title: "v", rank: 5)) }   // still unique
            #expect(try IndexProbe.isConsistent(store, Note.self))
            #expect(try IndexProbe.ids(store, Indexed.Note.title, like: Indexed.Note(title: "w")) == [5])
            // Dropping them takes them out of the catalog: queries scan, no key is kept.
            #expect(throws: CofferError.self) { try store.box(for: Indexed.Note.self).dropIndex(on: Indexed.Note.title) }
            try notes.dropIndex(on: Note.title)
            try notes.dropIndex(on: Note.rank)
            try notes.dropIndex(on: Note.rank)   // nothing left to drop
            let v = try notes.put(Note(title: "v", rank: 5))
            #expect(try notes.query { Note.title == "v" }.build().findIds() == [v])
            let note = try #require(try store.info().entities.first { $0.name == "Note" })
            #expect(note.properties.allSatisfy { !$0.isIndexed && !$0.isUnique })
            try store.performRead { transaction in
                for name in store.databases.keys where name.hasPrefix("index.") {
                    var stat = MDB_stat()
                    mdb_stat(transaction.txn, try #require(store.databases[name]), &stat)
                    #expect(stat.ms_entries == 0, "\(name) is emptied")
                }
            }
            try store.close()
        }
    }

    @Test func uniqueIndexOverDuplicatesIsRefusedAndChangesNothing() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put([Note(title: "a", rank: 1), Note(title: "b", rank: 1)])
            #expect(try store.box(for: Indexed.Note.self).count() == 2)   // reading needs no index
            #expect {
                try store.box(for: Indexed.Note.self).put(Indexed.Note(title: "c", rank: 2))
            } throws: { error in
                guard case CofferError.uniqueViolation(let entity, let property, _) = error else { return false }
                return entity == "Indexed.Note" && property == "rank"
            }
            #expect(try store.box(for: Note.self).all().map(\.title) == ["a", "b"])
        }
    }
}
