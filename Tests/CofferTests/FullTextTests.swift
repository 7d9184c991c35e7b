@testable import Coffer
import CLMDB
import Foundation
import Testing

/// A plain Swift reading of the search syntax's meaning, on token arrays: the oracle.
/// Search words tokenized once per search, not once per object.
final class TermCache {
    private var terms: [String: [String]] = [:]
    func terms(_ text: String, _ tokenizer: TextTokenizer) -> [String] {
        let key = tokenizer.rawValue + "|" + text
        if let known = terms[key] { return known }
        let found = tokenizer.terms(in: text)
        terms[key] = found
        return found
    }
}

@Suite struct FullTextTests {
    static let guide = [
        (title: "Matilda", body: "A little girl who loves books and reading, and whose teacher is a doctor of kindness", year: 1988),
        (title: "The Doctor's Dilemma", body: "A play about a doctor who must choose between two patients", year: 1906),
        (title: "Doctor Sleep", body: "The boy from the hotel grows up; a book of horror", year: 2013),
        (title: "Cooking", body: "Recipes for docile cooks and busy doctors", year: 2001),
        (title: nil, body: "Nothing about medicine here", year: 2020),
    ]

    @Test func cloudantGuideSearches() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let ids = try articles.put(Self.guide.map { Article(title: $0.title, body: $0.body, year: $0.year) })
            func search(_ condition: QueryCondition<Article>) throws -> [Id] { try articles.query { condition }.build().findIds() }
            #expect(try search(Article.body.matches("doctor books")) == [ids[0]], "both words, stemmed: books -> book")
            #expect(try search(Article.body.matches("book")) == [ids[0], ids[2]], "porter: book finds books")
            #expect(try search(Article.body.matches("\"is a doctor\"")) == [ids[0]])
            #expect(try search(Article.body.matches("doc*")) == [ids[0], ids[1], ids[3]], "doc* : doctor, docile, doctors")
            #expect(try search(Article.body.matches("doctor") && Article.year < 2000) == [ids[0], ids[1]])
            #expect(try search(Article.body.matches("doctor -play")) == [ids[0], ids[3]])
            #expect(try search(Article.body.matches("(horror OR medicine) NOT hotel")) == [ids[4]])
            #expect(try search(Article.title.matches("doctor")) == [ids[1], ids[2]], "simple: Doctor's -> doctor, s")
            #expect(try search(.matchesText("doctor")) == [ids[0], ids[1], ids[2], ids[3]], "all full-text properties")
            #expect(try search(!Article.body.matches("doctor")) == [ids[2], ids[4]])
            #expect(try search(Article.body.matches("doctor") || Article.year > 2015) == [ids[0], ids[1], ids[3], ids[4]])
            let ordered = try articles.query { Article.body.matches("doctor") }.ordered(by: Article.year).build()
            #expect(try ordered.find().map(\.year) == [1906, 1988, 2001])
            #expect(try ordered.find(offset: 1, limit: 1).map(\.year) == [1988])
            let years: [Int] = try articles.query { Article.body.matches("doctor") }.build().select(Article.year).find()
            #expect(years == [1988, 1906, 2001])
            #expect(ordered.describe().contains("full-text match on body for doctor"))

            let ranked = try articles.query { Article.body.matches("doctor") }.build().findRanked()
            #expect(ranked.count == 3)
            #expect(ranked.map(\.1) == ranked.map(\.1).sorted(by: >))
            #expect(ranked.first?.0.id == ids[3], "the shortest body with the term ranks first")
            #expect(try articles.query { Article.body.matches("doctor") }.build().findRanked(offset: 1, limit: 1).map(\.0.id) == [ranked[1].0.id])
            #expect(throws: CofferError.self) { try articles.query { Article.year > 1 }.build().findRanked() }
        }
    }

    @Test func indexFollowsUpdatesAndRemovals() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            var article = Article(title: "First", body: "reading books")
            try articles.put(&article)
            #expect(try articles.query { Article.body.matches("book") }.build().count() == 1)
            article.body = "writing letters"
            try articles.put(&article)
            #expect(try articles.query { Article.body.matches("book") }.build().count() == 0)
            #expect(try articles.query { Article.body.matches("letter") }.build().count() == 1)
            try articles.remove(article.id)
            #expect(try articles.query { Article.body.matches("letter") }.build().count() == 0)
            #expect(try textIndexContents(store, property: "body") == expectedTextIndex([:], tokenizer: .porter))
        }
    }

    @Test func reopenedStoreUsesItsIndexAndAReadOnlyStoreToo() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store: Store? = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let id = try store?.box(for: Article.self).put(Article(title: "t", body: "reading books"))
        try store?.close()
        store = nil
        for readOnly in [false, true] {
            let reopened = try Store(directory: directory.path, options: StoreOptions(readOnly: readOnly))
            #expect(reopened.storedDatabase(TextIndexBinding.databaseName(entity: 1, property: 2)) != nil, "opened with the tables")
            let articles = reopened.box(for: Article.self)
            #expect(try articles.query { Article.body.matches("book") }.build().findIds() == [try #require(id)])
            try reopened.read {
                try reopened.performRead { transaction in
                    let binding = try reopened.binding(for: Article.self, in: transaction)
                    #expect(binding?.textIndexes.count == 2, "answered from the index")
                }
            }
            try reopened.close()
        }
    }

    @Test func checkReportsAMissingOrWrongFullTextEntry() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let id = try articles.put(Article(title: "t", body: "reading books"))
            #expect(try store.verify().isIntact)
            try store.performWrite { transaction in
                let binding = try #require(try store.binding(for: Article.self, in: transaction))
                let index = try #require(binding.textIndexes.first { $0.propertyName == "body" })
                try PostingBlock.key("book", id).withUnsafeBytes { key in
                    var keyVal = MDB_val(key)
                    try transaction.check(mdb_del(transaction.txn, index.database, &keyVal, nil), "test")
                }
            }
            let report = try store.verify()
            #expect(!report.isIntact)
            #expect(report.problems.contains { $0.contains("body") && $0.contains("missing") })
        }
    }

    /// A damaged record cannot say which terms it had: overwriting or removing it finds its
    /// entries by id, and the index ends as the records imply.
    @Test func overwritingOrRemovingADamagedRecordRepairsTheIndex() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let ids = try articles.put([Article(title: "one", body: "reading books"), Article(title: "two", body: "doctor books")])
            for id in ids {
                try store.performWrite { transaction in
                    let binding = try store.writableBinding(for: Article.self, in: transaction)
                    try Damage.put(transaction, binding.table, key: withUnsafeBytes(of: id.bigEndian) { Array($0) }, value: [1, 0xFF, 0xFF])
                }
            }
            #expect(throws: CofferError.self) { try articles.query { Article.body.matches("book") }.build().find() }
            _ = try articles.put(Article(id: ids[0], title: "new", body: "letters"))
            try articles.remove(ids[1])
            #expect(try articles.query { Article.body.matches("book") }.build().findIds().isEmpty)
            #expect(try articles.query { Article.body.matches("letter") }.build().findIds() == [ids[0]])
            #expect(try store.verify().isIntact)
        }
    }

    /// Negations inside groups and alternatives, through queries, `$text` and ranking.
    @Test func negationsInsideGroupsThroughQueriesAndRanking() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let ids = try articles.put(["birds", "birds dogs", "birds cats dogs", "cats"].map { Article(body: $0) })
            func search(_ text: String) throws -> [Id] { try articles.query { Article.body.matches(text) }.build().findIds() }
            #expect(try search("birds (cats OR -dogs)") == [ids[0], ids[2]])
            #expect(try search("cats -(-dogs)") == [ids[2]])
            #expect(try articles.query { .matchesText("birds (cats OR -dogs)") }.build().count() == 2)
            let ranked = try articles.query { Article.body.matches("birds (cats OR -dogs)") }.build().findRanked()
            #expect(Set(ranked.map(\.0.id)) == [ids[0], ids[2]])
            #expect(ranked.first?.0.id == ids[2], "cats counts for the object holding it; the negated dogs only filter")
            let double = try articles.query { Article.body.matches("cats -(-dogs)") }.build().findRanked()
            #expect(double.map(\.0.id) == [ids[2]] && double[0].1 > 0)
            #expect(throws: CofferError.self) { try articles.query { Article.body.matches("cats OR -dogs") }.build() }
        }
    }

    @Test func malformedSearchesThrowNamingTheText() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            for search in ["", "\"open", "doctor OR", "-doctor", "(a"] {
                #expect {
                    try articles.query { Article.body.matches(search) }.build()
                } throws: { error in
                    guard case CofferError.invalidSearch(let text, _) = error else { return false }
                    return text == search
                }
            }
            #expect(throws: CofferError.self) {
                try store.box(for: Note.self).query { Note.title.matches("x") }.build()
            }
        }
    }

    /// Random texts from a small vocabulary, random puts, updates, removes and clears: after
    /// each transaction the postings equal an index built from the texts alone, and
    /// `matches` agrees with a plain Swift matcher on random searches.
    @Test(arguments: [1, 2] as [UInt64])
    func randomizedIndexAndSearch(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let vocabulary = ["book", "books", "reading", "read", "doctor", "doctors", "docile", "café", "Cafe", "zebra", "relational", "relate"]
        func text() -> String {
            (0..<Int.random(in: 0...8, using: &random)).map { _ in vocabulary.randomElement(using: &random)! }.joined(separator: " ")
        }
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            var model: [Id: Article] = [:]
            var tokens: [Id: (source: Article, title: [String], body: [String])] = [:]
            var searches = 0
            for step in 0..<250 {
                try store.write {
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0...4:
                            var article = Article(title: Bool.random(using: &random) ? text() : nil, body: text())
                            try articles.put(&article)
                            model[article.id] = article
                        case 5, 6:
                            guard var article = model.values.randomElement(using: &random) else { continue }
                            article.body = text()
                            try articles.put(&article)
                            model[article.id] = article
                        case 7, 8:
                            guard let article = model.values.randomElement(using: &random) else { continue }
                            try articles.remove(article.id)
                            model[article.id] = nil
                        default:
                            if Int.random(in: 0..<60, using: &random) == 0 {
                                try articles.removeAll()
                                model.removeAll()
                            }
                        }
                    }
                }
                // Each text tokenized once for the plain matcher.
                for (id, article) in model where tokens[id]?.source != article {
                    tokens[id] = (article, TextTokenizer.simple.terms(in: article.title ?? ""), TextTokenizer.porter.terms(in: article.body))
                }
                if step % 50 == 0 { #expect(try store.verify().isIntact, "coffer check agrees") }
                if step % 10 == 0 {
                    #expect(try textIndexContents(store, property: "body") == expectedTextIndex(model.mapValues(\.body), tokenizer: .porter))
                    #expect(try textIndexContents(store, property: "title") == expectedTextIndex(model.compactMapValues(\.title), tokenizer: .simple))
                }
                for _ in 0..<3 {
                    let word = { vocabulary.randomElement(using: &random)! }
                    let candidates = [word(), "\(word()) \(word())", "\"\(word()) \(word())\"", "\(word().prefix(3))*",
                                      "\(word()) OR \(word())", "\(word()) -\(word())", "(\(word()) OR \(word())) \(word())",
                                      "\(word()) (\(word()) OR -\(word()))", "\(word()) -(-\(word()))", "\(word()) -(\(word()) -\(word()))",
                                      "\(word()) NEAR/1 \(word())", "title:\(word()) \(word())", "body:\(word().prefix(3))* -title:\(word())"]
                    let searchText = candidates.randomElement(using: &random)!
                    let search = try TextSearch.parse(searchText)
                    let cache = TermCache()
                    let expected = tokens.filter { id, tokens in
                        model[id] != nil && plainMatch(search, title: tokens.title, body: tokens.body, cache: cache)
                    }.map(\.key).sorted()
                    #expect(try articles.query { .matchesText(searchText) }.build().findIds() == expected, "\(searchText)")
                    searches += 1
                }
            }
            print("Full-text randomized (seed \(seed)): 250 transactions, \(model.count) articles left, \(searches) searches checked against a plain matcher")
        }
    }

    @Test func schemaChangesBuildRebuildAndDeleteTheIndex() throws {
        try withStore { (store: Store) throws in
            // Stored without full-text indexes first.
            let plain = store.box(for: Unindexed.Article.self)
            let id = try plain.put(Unindexed.Article(title: "Reading", body: "books and doctors"))
            // The annotated build indexes the stored objects on its first write.
            let articles = store.box(for: Article.self)
            try articles.put(Article(title: "Other", body: "nothing"))
            #expect(try articles.query { Article.body.matches("book") }.build().findIds() == [id])
            #expect(try !textIndexContents(store, property: "body").postings.isEmpty)
            let body = try #require(try store.info().entities.first { $0.name == "Article" }?.properties.first { $0.name == "body" })
            #expect(body.fullText == .porter && body.fullTextEntries > 0)
            #expect(try store.verify().isIntact)
            // A build with another tokenizer rebuilds: "book" no longer finds "books".
            let simple = store.box(for: Resimple.Article.self)
            try simple.put(Resimple.Article(title: "x", body: "y"))
            #expect(try simple.query { Resimple.Article.body.matches("book") }.build().findIds().isEmpty)
            #expect(try simple.query { Resimple.Article.body.matches("books") }.build().findIds() == [id])
            // A build without the annotation keeps the index another build declared, and
            // maintains it; dropping it empties it and searching falls back to a scan.
            let zId = try plain.put(Unindexed.Article(title: "z", body: "zebras"))
            #expect(try simple.query { Resimple.Article.body.matches("zebras") }.build().findIds() == [zId])
            #expect(try store.verify().isIntact)
            try plain.dropIndex(on: Unindexed.Article.body)
            let dropped = try #require(try store.info().entities.first { $0.name == "Article" }?.properties.first { $0.name == "body" })
            #expect(dropped.fullText == nil)
            #expect(try textIndexContents(store, property: "body").postings.isEmpty)
            #expect(try simple.query { Resimple.Article.body.matches("zebras") }.build().findIds() == [zId])
            #expect(try store.verify().isIntact)
        }
    }
}
