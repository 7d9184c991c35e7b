// README's tour and Getting Started's first app. The program runs in a fresh temporary
// directory, so the store paths of the documentation ("books.coffer") are relative to it.
import Foundation

// A fresh directory for the store; removed at the end.
let workplace = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-doc-App-\(getpid())")
try FileManager.default.createDirectory(at: workplace, withIntermediateDirectories: true)
guard FileManager.default.changeCurrentDirectoryPath(workplace.path) else { print("cannot enter \(workplace.path)"); exit(1) }

import Coffer

struct Book: Entity {
    var id: Id = 0                       // 0 until stored; then assigned by the store
    @Index var author: String            // indexed: equality, ranges and prefixes read the index
    var title: String
    var pages: Int
    var read = false                     // a default lets older records decode
}

let store = try Store(directory: "books.coffer")   // created if missing
let books = store.box(for: Book.self)

var dune = Book(author: "Frank Herbert", title: "Dune", pages: 412)
try books.put(&dune)                               // inserts and sets dune.id
dune.read = true
try books.put(&dune)                               // updates

let herbert = try books.query { Book.author == "Frank Herbert" && Book.pages > 300 }
    .ordered(by: Book.title)
    .build()
for book in try herbert.find() { print(book.title, book.pages) }

check(try dune.id != 0 && books.get(dune.id)?.read == true, "the put assigned an id and the update was stored")
check(try herbert.find().map(\.title) == ["Dune"], "the query finds Dune")

try books.put(Book(author: "Ursula K. Le Guin", title: "The Dispossessed", pages: 387))

let thick = try books.query(selector: #"{"pages": {"$gt": 400}}"#).build().find()
let rows = try store.query(sql: "SELECT author, COUNT(*), AVG(pages) FROM Book GROUP BY author")
for row in rows { print(row.values) }

check(thick.map(\.title) == ["Dune"], "the selector finds the thick book")
check(rows.count == 2, "one row per author")

let unread = LiveResults(try books.query { Book.read == false }.ordered(by: Book.title).build())
// In a view's body: List(unread.objects, id: \.id) { Text($0.title) }

check(unread.objects.map(\.title) == ["The Dispossessed"], "the live results hold the unread book at once")
try store.close()
try FileManager.default.removeItem(at: workplace)
print("App: all checks passed")

/// Exits with status 1 when `condition` is false or throws, naming what failed.
func check(_ condition: @autoclosure () throws -> Bool, _ what: String) {
    let holds: Bool
    do { holds = try condition() } catch { holds = false; print("\(error)") }
    guard holds else {
        FileHandle.standardError.write(Data("App: check failed: \(what)\n".utf8))
        try? FileManager.default.removeItem(at: workplace)   // failing anyway
        exit(1)
    }
}
