import Coffer
import Foundation

// coffer-demo [store-directory]
// Defines two entities (see Models.swift), stores, updates, reads and removes objects, and
// prints what it does. The store directory defaults to ./coffer-demo.coffer.

let directory = CommandLine.arguments.dropFirst().first ?? "coffer-demo.coffer"

/// The synchronous tour: stores, updates, reads and removes; returns the open store.
func run() throws -> Store {
    let store = try Store(directory: directory)
    print("Coffer demo: writing to \(store.path)")

    let authors = store.box(for: Author.self)
    let books = store.box(for: Book.self)

    // Start from empty boxes; ids keep ascending across runs because they are never reused.
    try store.write {
        try authors.removeAll()
        try books.removeAll()
    }

    let (ada, ursula) = try storeAuthors(authors)
    var shelf = try storeBooks(books, by: ada, and: ursula)
    try listAndSearch(books)
    try updateAndRefuseADuplicate(books, shelf: &shelf)
    try rollBackAndReadASnapshot(store, authors: authors, books: books)

    try books.remove(shelf[0].id)
    print("\nRemoved #\(shelf[0].id); \(try books.count()) books left; contains(#\(shelf[0].id)) = \(try books.contains(shelf[0].id))")

    return store
}

/// Puts two authors, queries an embedded leaf, and upserts by name.
func storeAuthors(_ authors: Box<Author>) throws -> (Author, Author) {
    var ada = Author(name: "Ada Lovelace", born: 1815, country: "United Kingdom",
                     birthplace: Place(city: "London", country: "United Kingdom"))
    var ursula = Author(name: "Ursula K. Le Guin", born: 1929, birthplace: Place(city: "Berkeley", country: "United States"))
    try authors.put(&ada)
    try authors.put(&ursula)
    print("\nStored 2 authors: ids \(ada.id) and \(ursula.id)")
    // An embedded struct's leaves are queried (and indexed) by their path.
    let londoners = try authors.query { Author.birthplace.city == "London" }.build().find().map(\.name)
    print("Born in London (Author.birthplace.city, indexed): \(londoners)")

    // Upsert by an external key (an indexed property): the match is updated, keeping its id.
    var imported = Author(name: "Ursula K. Le Guin", born: 1929, country: "United States",
                          birthplace: Place(city: "Berkeley", country: "United States"))
    try authors.upsert(&imported, by: Author.name)
    print("Upserted \(imported.name) by name: updated id \(imported.id), country \(imported.country ?? "-")")
    return (ada, ursula)
}

/// Puts three books in one transaction and queries a dictionary property; returns them
/// with their ids.
func storeBooks(_ books: Box<Book>, by ada: Author, and ursula: Author) throws -> [Book] {
    let day: TimeInterval = 86_400
    var shelf = [
        Book(title: "Notes on the Analytical Engine", authorName: ada.name, genre: .science, pages: 66,
             rating: 4.8, published: Date(timeIntervalSince1970: -3_960 * day), tags: ["computing", "classic"],
             summary: "Notes on a calculating machine that could compose music and weave algebraic patterns",
             details: ["format": "facsimile", "language": "en"]),
        Book(title: "A Wizard of Earthsea", authorName: ursula.name, genre: .fiction, pages: 183,
             rating: 4.6, published: Date(timeIntervalSince1970: -480 * day), tags: ["fantasy"],
             summary: "A young wizard learns that naming things gives power, and that his shadow follows him",
             details: ["format": "paperback", "language": "en"]),
        Book(title: "The Dispossessed", authorName: ursula.name, genre: .fiction, pages: 387,
             rating: 4.7, published: Date(timeIntervalSince1970: 1_600 * day),
             summary: "A physicist travels between two worlds, one of them an anarchist moon; the machines of both",
             details: ["format": "paperback"]),
    ]
    // One transaction for the whole batch: all books are stored, or none.
    try books.put(&shelf)
    print("Stored \(shelf.count) books in one transaction: ids \(shelf.map(\.id))")

    // A dictionary property is queried by key (a missing key is nil).
    let paperbacks = try books.query { Book.details["format"] == "paperback" }.build().find().map(\.title)
    let noLanguage = try books.query { Book.details["language"].isNil() }.build().find().map(\.title)
    print("Paperbacks (Book.details[\"format\"]): \(paperbacks); without a language: \(noLanguage)")
    return shelf
}

/// Lists every book, then searches the full-text summary.
func listAndSearch(_ books: Box<Book>) throws {
    print("\nAll books, in id order:")
    for book in try books.all() {
        print("  #\(book.id) \(book.title) — \(book.authorName), \(book.genre.rawValue), \(book.pages) pages, rating \(book.rating), tags \(book.tags)")
    }

    // Full-text search on the @FullText(.porter) summary: stemmed ("machines" finds
    // "machine"), phrases, prefixes, OR and NOT, ranked by BM25.
    print("\nFull-text search:")
    for search in ["machine", "\"young wizard\"", "wizard OR anarch*", "machine -music"] {
        let found = try books.query { Book.summary.matches(search) }.build().find().map(\.title)
        print("  \(search): \(found)")
    }
    let ranked = try books.query { Book.summary.matches("machine OR world") }.build().findRanked()
    for (book, score) in ranked {
        print("  ranked for 'machine OR world': \(String(format: "%.3f", score)) \(book.title)")
    }
}

/// Updates a book in place, then shows a unique value refused.
func updateAndRefuseADuplicate(_ books: Box<Book>, shelf: inout [Book]) throws {
    // Update: change a field and put the object back under its id.
    shelf[1].rating = 4.9
    try books.put(&shelf[1])
    if let updated = try books.get(shelf[1].id) {
        print("\nUpdated #\(updated.id): rating is now \(updated.rating); added \(updated.added), changed \(updated.changed)")
    }

    // A unique value cannot be stored twice; the failed put changes nothing.
    var copy = shelf[2]
    copy.id = 0
    do {
        try books.put(&copy)
    } catch let error as CofferError {
        print("Refused a duplicate: \(error)")
    }
}

/// A write that throws changes nothing; a read sees one snapshot.
func rollBackAndReadASnapshot(_ store: Store, authors: Box<Author>, books: Box<Book>) throws {
    struct ChangedMyMind: Error {}
    do {
        try store.write {
            try books.removeAll()
            throw ChangedMyMind()
        }
    } catch is ChangedMyMind {
        print("A write that threw was rolled back: still \(try books.count()) books")
    }

    // One consistent snapshot for several reads.
    let (authorCount, bookCount) = try store.read { (try authors.count(), try books.count()) }
    print("Snapshot: \(authorCount) authors, \(bookCount) books")
}

/// How much of the map the demo used; closes the store.
func finish(_ store: Store) throws {
    let (mapSize, used) = try store.mapUsage()
    print("\nStore at \(store.path): \(used / 1024) KiB used of a \(mapSize >> 20) MiB map (it grows by itself)")
    print("Inspect it again later: the data stays in \(store.path)")
    try store.close()
}

/// Live queries: a controller driving a "top rated" list, and results that follow writes.
func liveQueries(books: Box<Book>) async throws {
    print("\nLive queries:")
    let topRated = try books.query().ordered(by: Book.rating, flags: .descending).build()
    let controller = try QueryController(topRated, window: 2, updatable: [Book.rating, Book.title])
    print("  top 2 by rating: \(controller.objects.map(\.title))")
    var changes = controller.changes().makeAsyncIterator()
    var liveCount = try books.query { Book.genre == Genre.fiction }.build().results().makeAsyncIterator()
    print("  fiction now: \(try await liveCount.next()?.map(\.title) ?? [])")

    var gem = Book(title: "The Left Hand of Darkness", authorName: "Ursula K. Le Guin", genre: .fiction, pages: 304,
                   rating: 4.95, published: Date(timeIntervalSince1970: 0))
    try books.put(&gem)
    if let change = try await changes.next() {
        print("  put '\(gem.title)' (4.95): inserted at \(change.inserted), deleted rows \(change.deleted) -> \(change.objects.map(\.title))")
    }
    print("  fiction after the commit: \(try await liveCount.next()?.map(\.title) ?? [])")

    gem.rating = 4.0
    try books.put(&gem)
    if let change = try await changes.next() {
        print("  rated down to 4.0: deleted rows \(change.deleted), inserted rows \(change.inserted) -> \(change.objects.map(\.title))")
    }
    guard var top = controller.object(at: 0) else { return }
    top.pages += 1   // not an updatable property: the list is not told
    try books.put(&top)
    top.title += " (annotated)"
    try books.put(&top)
    if let change = try await changes.next() {
        print("  retitled the top book: updated rows \(change.updated), moves \(change.moved.count) -> \(change.objects.map(\.title))")
    }
}

do {
    let store = try run()
    try await liveQueries(books: store.box(for: Book.self))
    try finish(store)
} catch {
    FileHandle.standardError.write(Data("coffer-demo failed: \(error)\n".utf8))
    exit(1)
}
