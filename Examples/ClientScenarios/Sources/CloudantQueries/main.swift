import Coffer
import Foundation

// Cloudant Query's guide, as selectors on Coffer: every scenario checked, and every bad
// selector refused with invalidSelector and nothing changed.
// Usage: CloudantQueries [store-directory]

let directory = CommandLine.arguments.dropFirst().first
    ?? NSTemporaryDirectory() + "cloudant-queries-\(ProcessInfo.processInfo.processIdentifier).coffer"
var failures = 0

@MainActor func check(_ condition: Bool, _ what: String) {
    print("  \(condition ? "ok  " : "FAIL") \(what)")
    if !condition { failures += 1 }
}

@MainActor func scenarios() throws {
    let store = try Store(directory: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let people = store.box(for: Person.self)
    var guide = [
        Person(name: "mike", age: 12, pets: ["cat", "dog"], town: "Bristol", comment: "Mike is a doctor and likes books"),
        Person(name: "mike", age: 34, pets: [], town: nil, comment: "The other Mike reads doctor books"),
        Person(name: "fred", age: 43, pets: ["cat"], town: "Bath", comment: "Fred is a docent"),
        Person(name: "john", age: 8, pets: ["dog", "fish", "snake"], town: "Bristol", comment: "John collects stamps"),
    ]
    try people.put(&guide)

    func who(_ selector: String, sort: [(String, SortDirection)] = [], skip: Int = 0, limit: Int? = nil) throws -> [String] {
        try people.query(selector: selector, sort: sort, skip: skip, limit: limit).build().find().map { "\($0.name)\($0.age)" }
    }

    print("The guide's selectors")
    check(try who(#"{"name": "mike"}"#) == ["mike12", "mike34"], "equality (implicit $eq)")
    check(try who(#"{"age": {"$gt": 12}}"#) == ["mike34", "fred43"], "$gt")
    check(try who(#"{"name": "mike", "age": {"$lt": 20}}"#) == ["mike12"], "implicit $and")
    check(try who(#"{"age": {"$gt": 7, "$lt": 14}}"#) == ["mike12", "john8"], "two operators on one field")
    check(try who(#"{"$or": [{"name": "fred"}, {"$and": [{"age": {"$lt": 10}}, {"town": "Bristol"}]}]}"#) == ["fred43", "john8"], "$or and $and nested")
    check(try who(#"{"age": {"$not": {"$gt": 12}}}"#) == ["mike12", "john8"], "$not")
    check(try who(#"{"$nor": [{"name": "mike"}, {"age": 8}]}"#) == ["fred43"], "$nor")
    check(try who(#"{"age": {"$mod": [4.5, 0]}}"#) == ["mike12", "john8"], "$mod with decimals (truncated to [4, 0])")
    check(try who(#"{"name": {"$in": ["fred", "john"]}}"#) == ["fred43", "john8"], "$in")
    check(try who(#"{"name": {"$nin": ["mike"]}}"#) == ["fred43", "john8"], "$nin")
    check(try who(#"{"pets": "cat"}"#) == ["mike12", "fred43"], "a value matches an array that holds it")
    check(try who(#"{"pets": {"$not": {"$eq": "cat"}}}"#) == ["mike34", "john8"], "$not excludes arrays holding the value")
    check(try who(#"{"pets": {"$size": 3}}"#) == ["john8"], "$size")
    check(try who(#"{"town": {"$exists": false}}"#) == ["mike34"], "$exists")
    check(try who(#"{"$text": {"$search": "doctor books"}}"#) == ["mike12", "mike34"], "$text")
    check(try who(#"{"age": {"$gt": 0}}"#, sort: [("age", .descending)], skip: 1, limit: 2) == ["mike34", "mike12"], "sort + skip + limit")

    print("Dotted paths through links")
    let customers = store.box(for: Customer.self)
    let orders = store.box(for: Order.self)
    let joe = try customers.put(Customer(name: "Joe"))
    let ann = try customers.put(Customer(name: "Ann"))
    try orders.put([Order(total: 10, customer: ToOne(id: joe)), Order(total: 25, customer: ToOne(id: ann)), Order(total: 40, customer: ToOne(id: joe))])
    let joes = try orders.query(selector: #"{"customer.name": "Joe", "total": {"$gt": 20}}"#).build().find()
    check(joes.map(\.total) == [40], "customer.name with a condition on the order")

    print("Bad selectors are refused, nothing changes")
    let before = try people.count()
    for bad in [#"{"name": "#, #"{"nmae": "mike"}"#, #"{"age": {"$foo": 1}}"#, #"{"age": "twelve"}"#,
                #"{"age": {"$mod": [0, 1]}}"#, #"{"$or": {"name": "mike"}}"#] {
        do {
            _ = try people.query(selector: bad).build().find()
            check(false, "\(bad) should be refused")
        } catch CofferError.invalidSelector(let entity, let path, let reason) {
            check(true, "\(bad): \(entity) selector at \(path.isEmpty ? "the top" : path): \(reason)")
        }
    }
    // As in Cloudant, a count no array has matches nothing (and its $not everything).
    check(try people.query(selector: #"{"pets": {"$size": -1}}"#).build().count() == 0, "$size -1 matches nothing")
    check(try people.query(selector: #"{"pets": {"$not": {"$size": -1}}}"#).build().count() == before, "its $not matches everything")
    check(try people.count() == before, "nothing changed")
    try store.close()
}

try scenarios()
if failures > 0 {
    print("\(failures) scenario(s) failed")
    exit(1)
}
print("All Cloudant query scenarios passed.")
