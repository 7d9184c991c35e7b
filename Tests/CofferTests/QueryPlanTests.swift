import Coffer
import Foundation
import Testing

/// Which source the planner picks, asserted through `describe()`.
@Suite struct QueryPlanTests {
    @Test func plansUseIndexesAndTheIdTable() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: IndexedPerson.self)
            try box.put(IndexedPerson(id: 0, name: "Sam", age: 3, score: 1, nick: nil, tags: [], born: Date(), level: nil))
            func plan(_ condition: QueryCondition<IndexedPerson>) throws -> String {
                try box.query { condition }.build().describe()
            }
            #expect(try plan(IndexedPerson.id == 1).hasPrefix("IndexedPerson: look up id 1 in the table"))
            #expect(try plan(IndexedPerson.id.isIn([1, 2])).hasPrefix("IndexedPerson: look up 2 ids"))
            #expect(try plan(IndexedPerson.id > 5).hasPrefix("IndexedPerson: range of ids 5...18446744073709551615"))
            #expect(try plan(IndexedPerson.name == "Sam").hasPrefix("IndexedPerson: index on name (1 span) for name == \"Sam\""))
            #expect(try plan(IndexedPerson.age.isIn([1, 2, 3])).hasPrefix("IndexedPerson: index on age (3 spans)"))
            #expect(try plan(IndexedPerson.age.isBetween(1, and: 5)).hasPrefix("IndexedPerson: index on age (1 span) for age in [1, 5]"))
            #expect(try plan(IndexedPerson.nick.isNil()).hasPrefix("IndexedPerson: index on nick"))
            #expect(try plan(IndexedPerson.name.like("Sa%", caseSensitive: true)).hasPrefix("IndexedPerson: index on name"))
            // Equality beats a range when both are indexed.
            #expect(try plan(IndexedPerson.age > 1 && IndexedPerson.name == "Sam").hasPrefix("IndexedPerson: index on name"))
            // Case-insensitive strings, or-trees, negations and unindexed properties scan.
            #expect(try plan(IndexedPerson.name.isEqual(to: "sam", caseSensitive: false)).hasPrefix("IndexedPerson: full scan"))
            #expect(try plan(IndexedPerson.name.like("sa%")).hasPrefix("IndexedPerson: full scan"))
            #expect(try plan(IndexedPerson.age == 1 || IndexedPerson.age == 2).hasPrefix("IndexedPerson: full scan"))
            #expect(try plan(!(IndexedPerson.age == 1)).hasPrefix("IndexedPerson: full scan"))
            #expect(try plan(IndexedPerson.tags.containsElement("x")).hasPrefix("IndexedPerson: full scan"))
            let ordered = try box.query().ordered(by: IndexedPerson.age).build().describe()
            #expect(ordered == "IndexedPerson: index on age walked in order (no sort); no condition; order by age")
            let sortedByName = try box.query().ordered(by: IndexedPerson.name, flags: [.descending]).build().describe()
            #expect(sortedByName == "IndexedPerson: full scan of the table; no condition; order by name descending")
        }
    }
}
