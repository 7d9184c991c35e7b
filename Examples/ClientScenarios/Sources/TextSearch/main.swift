import Coffer
import Foundation

// The Cloudant Query guide's text searches and SmartStore-style match queries, checked.
// Usage: TextSearch [store-directory]

let directory = CommandLine.arguments.dropFirst().first
    ?? NSTemporaryDirectory() + "text-search-\(ProcessInfo.processInfo.processIdentifier).coffer"
var failures = 0

@MainActor func check(_ condition: Bool, _ what: String) {
    print("  \(condition ? "ok  " : "FAIL") \(what)")
    if !condition { failures += 1 }
}

@MainActor func scenarios() throws {
    let store = try Store(directory: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let people = store.box(for: Person.self)
    var mike = Person(name: "Mike", age: 12, description: "Mike is a doctor in training who reads books about medicine", tagline: "Café regular")
    var fred = Person(name: "Fred", age: 43, description: "Fred is a doctor and collects old books", tagline: nil)
    var john = Person(name: "John", age: 19, description: "John writes documentation for a living", tagline: "Docs all day")
    try people.put(&mike)
    try people.put(&fred)
    try people.put(&john)

    func names(_ condition: QueryCondition<Person>) throws -> [String] {
        try people.query { condition }.ordered(by: Person.name).build().find().map(\.name)
    }

    print("Cloudant's guide searches")
    check(try names(Person.description.matches("doctor books")) == ["Fred", "Mike"], "doctor books: both words")
    check(try names(Person.description.matches("\"is a doctor\"")) == ["Fred", "Mike"], "\"is a doctor\": the phrase")
    check(try names(Person.description.matches("doc*")) == ["Fred", "John", "Mike"], "doc*: doctor and documentation")
    check(try names(Person.description.matches("doctor") && Person.age < 20) == ["Mike"], "doctor combined with age < 20")
    check(try names(.matchesText("cafe")) == ["Mike"], "$text over every full-text property, diacritics folded")

    print("SmartStore-style match queries on a porter index")
    check(try names(Person.description.matches("book")) == ["Fred", "Mike"], "book finds books")
    check(try names(Person.description.matches("reading")) == ["Mike"], "reading finds reads")
    check(try names(Person.description.matches("collect -medicine")) == ["Fred"], "collect without medicine")
    let ranked = try people.query { Person.description.matches("doctor OR books") }.build().findRanked()
    check(ranked.count == 2 && ranked[0].1 >= ranked[1].1, "findRanked orders by BM25: \(ranked.map { "\($0.0.name) \(String(format: "%.3f", $0.1))" })")

    print("The index follows updates and removals")
    fred.description = "Fred retired and now grows tomatoes"
    try people.put(&fred)
    check(try names(Person.description.matches("doctor")) == ["Mike"], "after Fred's update only Mike is a doctor")
    check(try names(Person.description.matches("tomato")) == ["Fred"], "and Fred grows tomatoes")
    try people.remove(mike.id)
    check(try names(Person.description.matches("doctor")).isEmpty, "after Mike's removal nobody is a doctor")

    print("Malformed searches are errors, not crashes")
    for search in ["\"unclosed", "doctor OR", "-doctor", ""] {
        do {
            _ = try people.query { Person.description.matches(search) }.build()
            check(false, "'\(search)' should be refused")
        } catch let CofferError.invalidSearch(text, reason) {
            check(text == search, "'\(search)': \(reason)")
        }
    }
    try store.close()
}

do {
    try scenarios()
} catch {
    print("error: \(error)")
    exit(1)
}
print(failures == 0 ? "All text-search scenarios passed." : "\(failures) expectation(s) failed.")
exit(failures == 0 ? 0 : 1)
