import Coffer
import Foundation
import Testing

@Suite struct ProjectionTests {
    @Test func selectReturnsTuplesInQueryOrder() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            try people.put([Person(firstName: "Ada", lastName: "L", age: 36, email: "a@x"),
                            Person(firstName: "Bob", lastName: "M", age: 20),
                            Person(firstName: "Cy", lastName: "N", age: 50, birthday: Date(timeIntervalSinceReferenceDate: 5))])
            let byAge = try people.query { Person.age > 25 }.ordered(by: Person.age, flags: .descending).build()
            let rows = try byAge.select(Person.firstName, Person.age).find()
            #expect(rows.map(\.0) == ["Cy", "Ada"])
            #expect(rows.map(\.1) == [50, 36])
            let first = try #require(try byAge.select(Person.id, Person.email, Person.birthday).findFirst())
            #expect(first.0 == 3 && first.1 == nil && first.2 == Date(timeIntervalSinceReferenceDate: 5))
            let single = try people.query().build().select(Person.lastName).find()
            #expect(single == ["L", "M", "N"])
            #expect(try people.query { Person.age > 99 }.build().select(Person.age).findFirst() == nil)
        }
    }
}
