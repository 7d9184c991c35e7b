// Getting Started's tour: every call of a box in one place, run in a temporary directory.
import DocSupport

try enterWorkplace("Tour")

import Coffer
import Foundation

enum Mood: String, Sendable { case happy, grumpy }

struct Person: Entity {
    var id: Id = 0                  // Id = UInt64; 0 means "not stored yet"
    @Index var firstName: String    // kept in an index, maintained by every put and remove
    @Unique var email: String?      // a duplicate throws uniqueViolation; nil never collides
    @CreatedAt var created: Date = .distantPast   // set on insert, kept afterwards
    @UpdatedAt var modified: Date = .distantPast  // set by every put
    var age: Int
    var birthday: Date?             // optionals are nullable properties
    var tags: [String] = []         // a default lets records written before this property decode
    var mood: Mood = .happy         // RawRepresentable enums are stored as their raw value
    @Name("family_name") var lastName: String = ""   // stored under another name
    @Transient var scratch = 0      // not stored; needs a default
}

let store = try Store(directory: "data/app.coffer")   // created if missing
let people = store.box(for: Person.self)              // Box<Person>

var ada = Person(firstName: "Ada", age: 36)
try people.put(&ada)                // inserts, assigns ada.id
ada.age = 37
try people.put(&ada)                // updates
let id = try people.put(Person(firstName: "Grace", age: 45))   // returns the id
var batch = [Person(firstName: "A", age: 1), Person(firstName: "B", age: 2)]
try people.put(&batch)              // one transaction, ids assigned

let grace = try people.get(id)                       // Person?
let found = try people.get([1, 2, 99])               // the ones that exist, in the order asked
let everyone = try people.all()                      // [Person]; count() and contains(id) too
try people.forEach { person in print(person.firstName) }   // one at a time, no array
try people.modifyEach { person in person.age += 1 }         // change every object in place
try people.modify(id) { person in person.age += 1 }        // one object; notFound if missing

var imported = Person(firstName: "Ada", email: "ada@example.com", age: 36)
try people.upsert(&imported, by: Person.email)   // SmartStore-style: one match -> update it,
                                                 // none -> insert, several -> ambiguousUpsert
try store.write {                   // one transaction: all or nothing
    try people.put(&ada)
    try people.remove(id)
}
let n = try store.read { try people.count() }        // one consistent snapshot
// From async code, `try await store.read { }` and `store.write { }` run off the caller's thread.
let c = try people.put(Person(firstName: "C", age: 3))
try people.remove(ada.id); try people.remove([1, 2]); try people.removeAll()
try store.close()

check(grace?.firstName == "Grace" && found.map(\.firstName) == ["Ada", "Grace"], "get by id and by ids")
check(everyone.count == 4 && n == 4 && c > imported.id, "four people, an upserted one, one removed")
try leaveWorkplace()
