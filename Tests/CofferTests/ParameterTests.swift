import Coffer
import Foundation
import Testing

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
