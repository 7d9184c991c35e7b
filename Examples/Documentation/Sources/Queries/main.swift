// The Queries article's examples, run against a few people.
import Coffer
import DocSupport
import Foundation

struct Person: Entity {
    var id: Id = 0
    @Index var firstName: String
    @Unique var email: String?
    var age: Int
    var tags: [String] = []
    @Name("family_name") var lastName: String = ""
}

try enterWorkplace("Queries")
let store = try Store(directory: "people.coffer")
let people = store.box(for: Person.self)
var sample = [
    Person(firstName: "Sam", email: "sam@example.com", age: 30, tags: ["a"], lastName: "Smith"),
    Person(firstName: "Ann", age: 25, lastName: "Jones"),
    Person(firstName: "Bo", email: "bo@example.com", age: 40, tags: ["b"], lastName: "Smyth"),
    Person(firstName: "Cy", age: 14, lastName: "Lee"),
]
try people.put(&sample)

let query = try people.query { Person.firstName.startsWith("S") && Person.age > 18 }
    .ordered(by: Person.lastName)                         // case-insensitive by default
    .ordered(by: Person.age, flags: [.descending])        // secondary order
    .build()
let everyone = try query.find()
let page = try query.find(offset: 20, limit: 10)
let first = try query.findFirst()   // Person?
let only = try query.findUnique()   // Person?; throws nonUniqueResult when several match
let ids = try query.findIds()
let count = try query.count()
print(query.describe())             // "Person: index on firstName (1 span) for firstName startsWith "S"; check on each record: ..."

let notTeens = try people.query { Person.age ∉ (10..<18) }.build()
let smiths = try people.query { Person.lastName.like("sm_th%") }.build()          // % and _, case-insensitive
let unknown = try people.query { Person.email.isNil() || Person.tags.count == 0 }.build()
let fours = try people.query { Person.age.modulo(5) == 4 }.build()

var q = try people.query { Person.age == 21 }.build()
try q.setParameter(Person.age, to: 18)          // changes this copy only
var s = try people.query { "minAge" .= Person.age > 10 }.build()
try s.setParameter("minAge", to: 30)            // "thirty" would throw parameterTypeMismatch

let ages = try people.query().build().property(Person.age)
let youngest = try ages.min(), oldest = try ages.max(), total = try ages.sum(), mean = try ages.average()
let distinctAges = try ages.distinct().find()   // [25, 30, 30, 40, 40] -> [25, 30, 40]
let removed = try query.remove()                // removes every match, returns how many

check(everyone.map(\.firstName) == ["Sam"] && page.isEmpty && first?.firstName == "Sam" && only?.firstName == "Sam", "the S query")
check(ids.count == 1 && count == 1 && removed == 1, "ids, count and remove")
check(try notTeens.count() == 2 && (try smiths.count()) == 1 && (try unknown.count()) == 2 && (try fours.count()) == 1, "conditions")
check(try q.count() == 0 && (try s.count()) == 1, "parameters")
check(youngest == 14 && oldest == 40 && total == 109 && distinctAges == [30, 25, 40, 14], "property queries")

/// Errors, Damage and Recovery: catching the cases that matter to the caller.
func save(_ person: inout Person) throws {
    do {
        try store.write { try people.put(&person) }
    } catch CofferError.uniqueViolation(_, let property, let value) {
        print("\(property) \(value) is taken")
    } catch CofferError.storage(.lmdb(.mapFull), _) {
        print("the store reached its maxSize")
    } catch CofferError.damagedStore(.index(let entity, let property), _) {
        print("the index on \(entity).\(property) needs rebuilding")
    }
}
var taken = Person(firstName: "Bea", email: "bo@example.com", age: 50)
try save(&taken)
check(taken.id == 0, "a unique violation stores nothing")
_ = mean
try store.close()
try leaveWorkplace()
