import Coffer
import Foundation

// Richer property types as a new user would use them: Cloudant's `pet` sub-documents, Layer's
// nested conversation metadata, a converter-backed property and an indexed string array.
// Usage: RichTypes [store-directory]

let directory = CommandLine.arguments.dropFirst().first
    ?? NSTemporaryDirectory() + "rich-types-\(ProcessInfo.processInfo.processIdentifier).coffer"
var failures = 0

@MainActor func check(_ condition: Bool, _ what: String) {
    print("  \(condition ? "ok  " : "FAIL") \(what)")
    if !condition { failures += 1 }
}

@MainActor func scenarios() throws {
    let store = try Store(directory: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }

    print("Cloudant: documents with a pet sub-document")
    let owners = store.box(for: Owner.self)
    var people = [
        Owner(name: "mike", pet: Pet(species: "cat", name: "Tom", age: 3), tags: ["doctor", "books"]),
        Owner(name: "fred", pet: Pet(species: "dog", name: "Rex"), tags: ["docent"]),
        Owner(name: "john", pet: nil, tags: ["stamps", "books"]),
    ]
    try owners.put(&people)
    func names(_ query: Query<Owner>) throws -> [String] { try query.find().map(\.name) }
    check(try names(owners.query { Owner.pet.species == "cat" }.build()) == ["mike"], "typed path pet.species")
    check(try names(owners.query(selector: #"{"pet.species": "dog"}"#).build()) == ["fred"], "selector pet.species")
    check(try names(owners.query(selector: #"{"pet": {"$exists": false}}"#).build()) == ["john"], "no pet")
    check(try names(owners.query { Owner.pet.age.isNil() }.build()) == ["fred", "john"], "a leaf under an optional value")
    check(try owners.query { Owner.pet.species == "cat" }.build().describe().contains("index on pet.species"), "the leaf's index is used")
    let books = try owners.query { Owner.tags.containsElement("books") }.build()
    check(try names(books) == ["mike", "john"], "indexed string array: containsElement")
    check(books.describe().contains("index on tags"), "the element index is used")

    print("Layer: conversation metadata")
    let conversations = store.box(for: Conversation.self)
    var chats = [
        Conversation(title: "Ops", metadata: ["backgroundColor": "red", "first": ["second": ["third": "NestedResult"]]]),
        Conversation(title: "Ops", metadata: ["backgroundColor": "green"]),
        Conversation(title: "Dev", metadata: ["backgroundColor": "blue", "first": ["second": ["third": "Other"]]]),
    ]
    try conversations.put(&chats)
    func titles(_ query: Query<Conversation>) throws -> [Id] { try query.findIds() }
    check(try titles(conversations.query { Conversation.metadata["first"]["second"]["third"] == "NestedResult" }.build()) == [chats[0].id],
          "nested path equality")
    check(try titles(conversations.query { Conversation.metadata["backgroundColor"].isIn(["red", "blue"]) }.build()) == [chats[0].id, chats[2].id],
          "IN on a key")
    check(try titles(conversations.query { Conversation.title == "Ops" && Conversation.metadata["backgroundColor"] == "green" }.build()) == [chats[1].id],
          "a compound predicate with the title")
    check(try titles(conversations.query(selector: #"{"metadata.first.second.third": "NestedResult"}"#).build()) == [chats[0].id],
          "the same path as a selector")
    check(try conversations.get(chats[0].id)?.metadata["first"]?["second"]?["third"] == "NestedResult", "metadata round trip")

    print("A converter and the built-in URL and Decimal")
    let themes = store.box(for: Theme.self)
    var palette = [
        Theme(accent: Color(hex: "#FF0000"), price: Decimal(string: "9.99")!, homepage: URL(string: "https://example.com/red")),
        Theme(accent: Color(hex: "#0000FF"), price: Decimal(string: "12.50")!),
        Theme(accent: Color(hex: "#FF0000"), price: Decimal(string: "100")!),
    ]
    try themes.put(&palette)
    check(try themes.query { Theme.accent == Color(hex: "#FF0000") }.build().findIds() == [palette[0].id, palette[2].id], "query by converted value")
    check(try themes.query { Theme.price > Decimal(10) }.build().findIds() == [palette[1].id, palette[2].id], "Decimal compares as a number")
    check(try themes.get(palette[0].id)?.homepage == URL(string: "https://example.com/red"), "URL round trip")

    try store.close()
}

do {
    try scenarios()
} catch {
    print("FAIL: \(error)")
    failures += 1
}
if failures > 0 {
    print("\(failures) scenario(s) failed")
    exit(1)
}
print("All richer-type scenarios passed.")
