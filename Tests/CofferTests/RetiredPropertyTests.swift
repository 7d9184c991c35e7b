@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct RetiredPropertyTests {
    @Test func propertyMissingFromOneBuildKeepsItsValuesForTheNext() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            let id = try notes.put(Note(title: "a", body: "b", rank: 7))
            // A build without `rank` (Later.Note) updates the object and adds one.
            let later = store.box(for: Later.Note.self)
            var loaded = try #require(try later.get(id))
            loaded.pinned = true
            try later.put(&loaded)
            try later.put(Later.Note(heading: "new"))
            // The build with `rank` finds the value again, under the same property id.
            #expect(try notes.get(id)?.rank == 7)
            #expect(try notes.query { Note.rank == 7 }.build().findIds() == [id])
            let info = try store.info().entities.first { $0.name == "Note" }
            #expect(info?.properties.filter { $0.name == "rank" }.count == 1)
            var again = try #require(try notes.get(id))
            again.rank = 8
            try notes.put(&again)
            #expect(try later.get(id)?.pinned == true)   // and `pinned` survived `Note`'s update
        }
    }

    @Test func retiredIndexStaysMaintained() throws {
        try withStore { (store: Store) throws in
            let indexed = store.box(for: Indexed.Note.self)
            let first = try indexed.put(Indexed.Note(title: "a", rank: 1))
            try indexed.put(Indexed.Note(title: "b", rank: 2))
            // Later.Note declares neither the unique `rank` nor the index on `title`
            // (it has `heading`, renamed from `title`, without an index).
            let later = store.box(for: Later.Note.self)
            try later.remove(first)
            try later.put(Later.Note(heading: "c"))
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            #expect(try indexed.query { Indexed.Note.rank == 1 }.build().count() == 0)
            try indexed.put(Indexed.Note(title: "d", rank: 1))   // the freed unique value
        }
    }

    @Test func damagedCatalogEntryIsReportedNotTrappedOn() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "x"))
            try store.performWrite { transaction in
                let catalog = try #require(store.catalogDatabase)
                var entity = try #require(try Catalog.load(CatalogEntity.self, key: Catalog.entityKey("Note"), dbi: catalog, in: transaction))
                entity.properties[1].id = entity.properties[0].id          // a duplicate id
                entity.properties.append(CatalogProperty(id: 900, name: "far", type: .int, optional: true, swiftType: "Int?", flags: 0))
                let data = try JSONEncoder().encode(entity)
                try data.withUnsafeBytes { try Catalog.putRaw(key: Catalog.entityKey("Note"), value: $0, dbi: catalog, in: transaction) }
            }
            #expect { try store.dump(entity: "Note") { _ in } } throws: { Damage.isDamaged($0, .catalog) }
            let reopened = try withStoreReopened(store) { try $0.box(for: Note.self).count() }
            #expect(reopened == nil)
        }
    }

    /// Closes `store`, reopens its directory and runs `body`; nil when `body` throws
    /// `damagedStore(.catalog, ...)` (the expected answer for a damaged catalog).
    func withStoreReopened<T>(_ store: Store, _ body: (Store) throws -> T) throws -> T? {
        let path = store.path
        try store.close()
        let reopened = try Store(directory: path)
        defer { try? reopened.close() }
        do { return try body(reopened) } catch let error where Damage.isDamaged(error, .catalog) { return nil }
    }
}
