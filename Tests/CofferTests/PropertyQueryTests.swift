import Coffer
import Foundation
import Testing

@Suite struct PropertyQueryTests {
    @Test func aggregatesAndDistinct() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            let ages = [25, 30, 30, 40, 40]
            try people.put(ages.map { Person(firstName: "P\($0)", lastName: $0 == 30 ? "Ab" : "ab", age: $0) })
            let all = try people.query().build()
            let age = all.property(Person.age)
            #expect(try age.min() == 25)
            #expect(try age.max() == 40)
            #expect(try age.sum() == 165)
            #expect(try age.average() == 33)
            #expect(try age.count() == 5)
            #expect(try age.find() == ages)
            #expect(try age.distinct().find() == [25, 30, 40])
            #expect(try age.distinct().count() == 3)
            #expect(throws: CofferError.nonUniqueResult(entity: "Person", count: 3)) { try age.distinct().findUnique() }
            #expect(try all.property(Person.lastName).distinct().find() == ["ab", "Ab"])
            #expect(try all.property(Person.lastName).distinct(caseSensitive: false).find() == ["ab"])
            // Conditions apply; empty results give nil.
            let old = try people.query { Person.age >= 40 }.build().property(Person.age)
            #expect(try old.distinct().findUnique() == 40)
            let none = try people.query { Person.age > 100 }.build().property(Person.age)
            #expect(try none.min() == nil && none.max() == nil && none.average() == nil)
            #expect(try none.sum() == 0 && none.count() == 0 && none.find().isEmpty)
            #expect(try none.findUnique() == nil)
            // Optional properties skip nils.
            #expect(try all.property(Person.email).count() == 0)
        }
    }

    @Test func floatingPointSums() throws {
        try withStore { (store: Store) throws in
            let pods = store.box(for: CocoaPod.self)
            try pods.put([CocoaPod(name: "A", rating: 1.5), CocoaPod(name: "B", rating: 2.5)])
            let rating = try pods.query().build().property(CocoaPod.rating)
            #expect(try rating.sum() == 4.0)
            #expect(try rating.average() == 2.0)
        }
    }
}
