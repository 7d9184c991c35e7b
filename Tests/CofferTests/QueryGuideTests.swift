import Coffer
import Foundation
import Testing

@Suite struct QueryGuideTests {
    func people(_ store: Store) throws -> Box<Person> {
        let box = store.box(for: Person.self)
        try box.put([
            Person(firstName: "Sam", lastName: "Smith", age: 25),
            Person(firstName: "Sara", lastName: "jones", age: 30),
            Person(firstName: "steve", lastName: "Brown", age: 30),
            Person(firstName: "Susan", lastName: "Åberg", age: 40, email: "s@x"),
            Person(firstName: "Tom", lastName: "Smith", age: 40),
            Person(firstName: "Sue", lastName: "Zed", age: 12),
        ])
        return box
    }

    @Test func conditionsFromTheGuide() throws {
        try withStore { (store: Store) throws in
            let people = try people(store)
            let query = try people.query { Person.firstName.startsWith("S") && Person.age > 18 }.build()
            #expect(try query.find().map(\.firstName) == ["Sam", "Sara", "Susan"])
            #expect(query.describe().hasPrefix("Person: index on firstName"))
            #expect(query.describe().contains("check on each record: firstName startsWith \"S\" && age > 18"))
            #expect(try people.query { Person.age ∉ (10..<18) }.build().count() == 5)
            #expect(try people.query { Person.age ∈ [30, 12] }.build().count() == 3)
            // && binds tighter than ||.
            let mixed = try people.query { Person.age == 12 || Person.age == 40 && Person.lastName == "Smith" }.build()
            #expect(try mixed.find().map(\.firstName) == ["Tom", "Sue"])
            let grouped = try people.query { (Person.age == 12 || Person.age == 40) && Person.lastName == "Smith" }.build()
            #expect(try grouped.find().map(\.firstName) == ["Tom"])
            #expect(try people.query { Person.email.isNil() }.build().count() == 5)
            #expect(try people.query { Person.lastName.like("sm_th") }.build().count() == 2)
            #expect(try people.query { Person.lastName.like("sm_th", caseSensitive: true) }.build().count() == 0)
            #expect(try people.query { Person.lastName.isEqual(to: "JONES", caseSensitive: false) }.build().count() == 1)
            #expect(try people.query { Person.lastName.startsWith("å", caseSensitive: false) }.build().count() == 1)
            #expect(try people.query { Person.age.modulo(5) == 0 }.build().count() == 5)
        }
    }

    @Test func cocoaPodsRatingAndFloatEquality() throws {
        try withStore { (store: Store) throws in
            let pods = store.box(for: CocoaPod.self)
            try pods.put([CocoaPod(name: "A", rating: 4.7), CocoaPod(name: "B", rating: 4.5), CocoaPod(name: "C", rating: 3.9)])
            #expect(try pods.query { CocoaPod.rating > 4.5 }.build().find().map(\.name) == ["A"])
            #expect(try pods.query { CocoaPod.rating == 4.5 }.build().find().map(\.name) == ["B"])
            #expect(try pods.query { CocoaPod.rating.isEqual(to: 4.6, tolerance: 0.11) }.build().find().map(\.name) == ["A", "B"])
        }
    }

    @Test func orderingDescendingAndCaseSensitive() throws {
        try withStore { (store: Store) throws in
            let people = try people(store)
            let insensitive = try people.query().ordered(by: Person.lastName).build().find().map(\.lastName)
            #expect(insensitive == ["Brown", "jones", "Smith", "Smith", "Zed", "Åberg"])
            let sensitive = try people.query().ordered(by: Person.lastName, flags: [.descending, .caseSensitive]).build().find().map(\.lastName)
            #expect(sensitive == ["Åberg", "jones", "Zed", "Smith", "Smith", "Brown"])
            let twoLevels = try people.query().ordered(by: Person.age, flags: .descending).ordered(by: Person.firstName).build()
            #expect(try twoLevels.find().map(\.firstName) == ["Susan", "Tom", "Sara", "steve", "Sam", "Sue"])
            #expect(try twoLevels.findFirst()?.firstName == "Susan")
            #expect(try people.query { Person.age > 100 }.build().findFirst() == nil)
        }
    }

    @Test func runningAQuery() throws {
        try withStore { (store: Store) throws in
            let people = try people(store)
            let thirty = try people.query { Person.age == 30 }.build()
            #expect(try thirty.findIds() == [2, 3])
            #expect {
                try thirty.findUnique()
            } throws: { error in
                (error as? CofferError) == .nonUniqueResult(entity: "Person", count: 2)
            }
            #expect(try people.query { Person.age == 25 }.build().findUnique()?.firstName == "Sam")
            #expect(try people.query { Person.age == 99 }.build().findUnique() == nil)
            #expect(try thirty.remove() == 2)
            #expect(try people.count() == 4)
            #expect(try people.query { Person.firstName == "Sara" }.build().count() == 0)
            #expect(throws: CofferError.self) { try thirty.find(offset: -1, limit: 2) }
            let everyone = try people.query().build()
            #expect(try everyone.count() == 4)
            #expect(everyone.describe() == "Person: full scan of the table; no condition; in id order")
        }
    }
}
