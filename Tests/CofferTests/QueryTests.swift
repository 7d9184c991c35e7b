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

@Suite struct ParameterTests {
    @Test func parametersFromTheGuide() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            try people.put([Person(firstName: "A", lastName: "Smith", age: 18), Person(firstName: "B", lastName: "Jones", age: 21),
                            Person(firstName: "C", lastName: "Brown", age: 12)])
            var q = try people.query { Person.age == 21 }.build()
            let original = q
            try q.setParameter(Person.age, to: 18)
            #expect(try q.find().map(\.firstName) == ["A"])
            #expect(try original.find().map(\.firstName) == ["B"])   // copies are independent

            var r = try people.query { Person.age.isBetween(0, and: 99) }.build()
            try r.setParameters(Person.age, to: 10, and: 18)
            #expect(try r.find().map(\.firstName) == ["A", "C"])

            var t = try people.query { Person.lastName.isIn(["Smith"]) }.build()
            try t.setParameters(Person.lastName, to: ["Jones", "Brown"])
            #expect(try t.find().map(\.firstName) == ["B", "C"])

            var s = try people.query { "minAge" .= Person.age > 10 }.build()
            try s.setParameter("minAge", to: 20)
            #expect(try s.find().map(\.firstName) == ["B"])
            #expect(throws: CofferError.parameterTypeMismatch(entity: "Person", parameter: "minAge", expected: "a value of Int", actual: "String \"thirty\"")) {
                try s.setParameter("minAge", to: "thirty")
            }
        }
    }

    @Test func parameterErrors() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            var q = try people.query { Person.age == 21 && Person.lastName.startsWith("S") }.build()
            #expect(throws: CofferError.parameterNotFound(entity: "Person", parameter: "Person.firstName")) {
                try q.setParameter(Person.firstName, to: "x")
            }
            #expect(throws: CofferError.parameterNotFound(entity: "Person", parameter: "nope")) {
                try q.setParameter("nope", to: 1)
            }
            #expect(throws: CofferError.parameterTypeMismatch(entity: "Person", parameter: "Person.age",
                                                             expected: "one value (setParameter)", actual: "two values (setParameters(_:to:and:))")) {
                try q.setParameters(Person.age, to: 1, and: 2)
            }
            #expect(throws: CofferError.parameterTypeMismatch(entity: "Person", parameter: "Person.age",
                                                             expected: "one value (setParameter)", actual: "a list (setParameters(_:to: [...]))")) {
                try q.setParameters(Person.age, to: [1, 2])
            }
            var twice = try people.query { Person.age > 1 && Person.age < 5 }.build()
            #expect(throws: CofferError.self) { try twice.setParameter(Person.age, to: 3) }
            #expect(throws: CofferError.self) { try people.query { "a" .= (Person.age > 1 && Person.age < 5) }.build() }
            #expect(throws: CofferError.self) { try people.query { "a" .= Person.age > 1 && "a" .= Person.age < 5 }.build() }
            #expect(throws: CofferError.self) { try people.query { Person.age.modulo(0) == 1 }.build() }
        }
    }
}

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

@Suite struct LongInListTests {
    /// Lists longer than 8 non-negative integers take the hashed path; the answers equal a
    /// plain filter, for ids, integers, doubles and negated lists.
    @Test func longListsAgreeWithAPlainFilter() throws {
        try withStore { (store: Store) throws in
            var random = SplitMix64(state: 17)
            let people = store.box(for: PlainPerson.self)
            var all: [PlainPerson] = (0..<300).map { _ in
                PlainPerson(name: "p", age: Int.random(in: -20..<200, using: &random), score: Double(Int.random(in: 0..<50, using: &random)),
                            nick: nil, tags: [], born: Date(timeIntervalSince1970: 0), level: nil)
            }
            try people.put(&all)
            for _ in 0..<20 {
                let ages = (0..<Int.random(in: 9...60, using: &random)).map { _ in Int.random(in: -5..<200, using: &random) }
                let nonNegative = ages.map { abs($0) }
                let ids = (0..<40).map { _ in Id.random(in: 1...320, using: &random) }
                let scores = (0..<12).map { _ in Double(Int.random(in: 0..<50, using: &random)) }
                func found(_ condition: QueryCondition<PlainPerson>) throws -> [Id] { try people.query { condition }.build().findIds() }
                #expect(try found(PlainPerson.age.isIn(ages)) == all.filter { ages.contains($0.age) }.map(\.id))
                #expect(try found(PlainPerson.age.isIn(nonNegative)) == all.filter { nonNegative.contains($0.age) }.map(\.id))
                #expect(try found(!PlainPerson.age.isIn(nonNegative)) == all.filter { !nonNegative.contains($0.age) }.map(\.id))
                #expect(try found(PlainPerson.id.isIn(ids)) == all.filter { ids.contains($0.id) }.map(\.id))
                #expect(try found(PlainPerson.score.isIn(scores)) == all.filter { scores.contains($0.score) }.map(\.id))
            }
        }
    }
}
