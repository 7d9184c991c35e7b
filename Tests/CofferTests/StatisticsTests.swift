@testable import Coffer
import Foundation
import Testing

/// `statistics()` (what `coffer stat` prints) and `backup(to:)` (what `coffer compact` does).
@Suite struct StatisticsTests {
    @Test func statisticsDescribeTablesIndexesAndTheFreeList() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            let ids = try people.put((0..<2_000).map { Person(firstName: "P\($0)", lastName: "L", age: $0 % 90) })
            try people.remove(Array(ids.prefix(1_500)))
            let statistics = try store.statistics()
            #expect(statistics.pageSize > 0 && statistics.pagesUsed > 0 && statistics.maximumReaders > 0)
            #expect(statistics.freePages > 0, "removing most objects frees pages")
            let names = statistics.databases.map(\.name)
            #expect(names.contains(Catalog.databaseName))
            let table = try #require(statistics.databases.first { $0.entries == 500 && $0.depth >= 1 })
            #expect(table.leafPages > 0)
        }
    }

    @Test func aCompactedCopyHoldsTheSameObjectsInFewerPages() throws {
        let target = TemporaryDirectory()
        defer { target.cleanUp() }
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            let ids = try people.put((0..<3_000).map { Person(firstName: "P\($0)", lastName: String(repeating: "x", count: 200), age: $0) })
            try people.remove(Array(ids.prefix(2_500)))
            let kept = try people.all()
            try store.backup(to: target.path + "/copy")
            #expect(throws: CofferError.self) { try store.backup(to: target.path + "/copy") }
            let copy = try Store(directory: target.path + "/copy")
            defer { try? copy.close() }
            #expect(try copy.box(for: Person.self).all().map { "\($0.id) \($0.firstName) \($0.age)" } == kept.map { "\($0.id) \($0.firstName) \($0.age)" })
            #expect(try copy.box(for: Person.self).query { Person.firstName == "P2999" }.build().count() == 1, "indexes copied")
            #expect(try copy.verify().isIntact)
            #expect(try copy.statistics().pagesUsed < store.statistics().pagesUsed)
            #expect(try copy.statistics().freePages <= 2)
        }
    }
}
