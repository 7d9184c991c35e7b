import Coffer
import Foundation
import Testing

@Suite struct QueryRegressionTests {
    /// Regression: an empty in-list on an indexed property crashed the index path.
    @Test func emptyInListOnAnIndexMatchesNothing() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: IndexedPerson.self)
            try box.put(IndexedPerson(id: 0, name: "A", age: 1, score: 0, nick: nil, tags: [], born: Date(), level: nil))
            #expect(try box.query { IndexedPerson.age.isIn([]) }.build().count() == 0)
            #expect(try box.query { IndexedPerson.age.isNotIn([]) }.build().count() == 1)
        }
    }

    /// Regression: a prefix span covers several values, so its ids must be sorted.
    @Test func prefixLookupsReturnIdOrder() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: IndexedPerson.self)
            for name in ["Sb", "Sa", "Sb", "Sa"] {
                try box.put(IndexedPerson(id: 0, name: name, age: 1, score: 0, nick: nil, tags: [], born: Date(), level: nil))
            }
            #expect(try box.query { IndexedPerson.name.startsWith("S") }.build().findIds() == [1, 2, 3, 4])
        }
    }
}
