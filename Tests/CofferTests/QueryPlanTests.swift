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
            // A lower and an upper bound of one property are one range of its index, not the
            // better of two open ranges (each of which may hold most of the table); in either
            // order, strict or not, and for ids too. Equality still wins.
            #expect(try plan(IndexedPerson.age >= 30 && IndexedPerson.age <= 34).hasPrefix("IndexedPerson: index on age (1 span) for age in [30, 34]"))
            #expect(try plan(IndexedPerson.age < 34 && IndexedPerson.score > 0 && IndexedPerson.age > 30).hasPrefix("IndexedPerson: index on age (1 span) for age in (30, 34)"))
            #expect(try plan(IndexedPerson.id >= 5 && IndexedPerson.id < 9).hasPrefix("IndexedPerson: range of ids 5...9"))
            #expect(try plan(IndexedPerson.age >= 30 && IndexedPerson.age <= 34 && IndexedPerson.name == "Sam").hasPrefix("IndexedPerson: index on name"))
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

    /// Two bounds of one indexed property, strict or not, in either order (reversed: an
    /// empty result), give exactly what a filter over every object gives: the bounded
    /// range is a superset that the whole condition then checks, or, for two inclusive
    /// bounds in order on integers, exactly the matching objects.
    @Test func boundedRangesMatchAFilter() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: IndexedPerson.self)
            var random = SplitMix64(state: 5)
            var people = (0..<400).map { index in
                IndexedPerson(id: 0, name: "p\(index)", age: Int(random.next() % 60), score: Double(random.next() % 100) / 4,
                              nick: nil, tags: [], born: Date(timeIntervalSince1970: 0), level: nil)
            }
            try box.put(&people)
            for _ in 0..<300 {
                var (low, high) = (Int(random.next() % 64) - 2, Int(random.next() % 64) - 2)
                if random.next() % 8 == 0 { high = low }
                let (strictLow, strictHigh) = (random.next() % 2 == 0, random.next() % 2 == 0)
                let lower: QueryCondition<IndexedPerson> = strictLow ? IndexedPerson.age > low : IndexedPerson.age >= low
                let upper: QueryCondition<IndexedPerson> = strictHigh ? IndexedPerson.age < high : IndexedPerson.age <= high
                let condition = random.next() % 2 == 0 ? lower && upper : upper && lower
                let found = try box.query { condition }.build().find().map(\.id)
                let expected = people.filter { person in
                    (strictLow ? person.age > low : person.age >= low) && (strictHigh ? person.age < high : person.age <= high)
                }.map(\.id)
                #expect(found == expected, "age \(strictLow ? ">" : ">=") \(low) and \(strictHigh ? "<" : "<=") \(high)")
            }
        }
    }
}
