@testable import Coffer
import CLMDB
import Foundation
import Testing

/// What a full-text index holds (postings, lengths, statistics), whatever its blocks.
func textIndexContents(_ store: Store, property: String) throws -> TextIndexContents {
    try store.read {
        try store.performRead { transaction in
            guard let binding = try store.binding(for: Article.self, in: transaction),
                  let index = binding.textIndexes.first(where: { $0.propertyName == property }) else { return TextIndexContents() }
            return try transaction.textIndexContents(index)
        }
    }
}

/// What the index of `texts` must hold: built from the texts alone.
func expectedTextIndex(_ texts: [Id: String], tokenizer: TextTokenizer) -> TextIndexContents {
    var contents = TextIndexContents()
    for (id, text) in texts.sorted(by: { $0.key < $1.key }) {
        contents.add(id, TextIndexBinding.postings(of: tokenizer.terms(in: text)))
    }
    return contents
}

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

func plainMatch(_ search: TextSearch, title: [String], body: [String], cache: TermCache) -> Bool {
    func containsPhrase(_ tokens: [String], _ phrase: [String], lastIsPrefix: Bool) -> Bool {
        guard !phrase.isEmpty, tokens.count >= phrase.count else { return false }
        return (0...(tokens.count - phrase.count)).contains { start in
            phrase.indices.allSatisfy { offset in
                let token = tokens[start + offset]
                return lastIsPrefix && offset == phrase.count - 1 ? token.hasPrefix(phrase[offset]) : token == phrase[offset]
            }
        }
    }
    switch search {
    case .word(let word, let prefix):
        let t = cache.terms(word, .simple)
        let b = cache.terms(word, prefix ? .simple : .porter)
        return containsPhrase(title, t, lastIsPrefix: prefix) || containsPhrase(body, b, lastIsPrefix: prefix)
    case .phrase(let text):
        return containsPhrase(title, cache.terms(text, .simple), lastIsPrefix: false)
            || containsPhrase(body, cache.terms(text, .porter), lastIsPrefix: false)
    case .field(let name, let inner):
        return plainMatch(inner, title: name == "title" ? title : [], body: name == "body" ? body : [], cache: cache)
    case .near(let operands, let distances):
        // Each property on its own, with its tokenizer (prefixes simple).
        func occurrences(_ term: TextSearch, _ tokens: [String], _ tokenizer: TextTokenizer, _ name: String) -> [(start: Int, length: Int)] {
            switch term {
            case .field(let field, let inner): return field == name ? occurrences(inner, tokens, tokenizer, name) : []
            case .word(let word, let prefix):
                let terms = cache.terms(word, prefix ? .simple : tokenizer)
                return plainPhraseStarts(tokens, terms, lastIsPrefix: prefix).map { ($0, terms.count) }
            case .phrase(let text):
                let terms = cache.terms(text, tokenizer)
                return plainPhraseStarts(tokens, terms, lastIsPrefix: false).map { ($0, terms.count) }
            default: return []
            }
        }
        return plainNear(operands.map { occurrences($0, title, .simple, "title") }, distances: distances)
            || plainNear(operands.map { occurrences($0, body, .porter, "body") }, distances: distances)
    case .and(let parts):
        return parts.allSatisfy { plainMatch($0, title: title, body: body, cache: cache) }
    case .or(let parts):
        return parts.contains { plainMatch($0, title: title, body: body, cache: cache) }
    case .not(let inner):
        return !plainMatch(inner, title: title, body: body, cache: cache)
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

/// The block layout of postings: terms held by thousands of objects span many blocks, and
/// changes in the middle of a term's blocks, in any order and in any transaction, leave the
/// same logical index as building it from the records.
@Suite struct PostingBlockTests {
    /// The number of blocks of `term` in the body index.
    func blockCount(_ store: Store, term: String) throws -> Int {
        try store.read {
            try store.performRead { transaction in
                guard let binding = try store.binding(for: Article.self, in: transaction),
                      let index = binding.textIndexes.first(where: { $0.propertyName == "body" }) else { return 0 }
                var count = 0
                try transaction.forEachTextBlock(index) { found, _, _ in if found == term { count += 1 } }
                return count
            }
        }
    }

    @Test func changesInsideManyBlocksMatchARebuild() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            var random = SplitMix64(state: 7)
            let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
            func text() -> String {
                (0..<Int.random(in: 0...6, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            }
            var model: [Id: String] = [:]
            // Bulk insert in one transaction, then more in small ones.
            var first = (0..<2_500).map { _ in Article(title: nil, body: "alpha " + text()) }
            try articles.put(&first)
            for article in first { model[article.id] = article.body }
            for _ in 0..<20 {
                var batch = (0..<10).map { _ in Article(title: nil, body: text()) }
                try articles.put(&batch)
                for article in batch { model[article.id] = article.body }
            }
            #expect(try blockCount(store, term: "alpha") > 3, "a common term spans several blocks")
            // Random updates and removals across the id range, several per transaction, some
            // of the same object twice in one transaction.
            for round in 0..<40 {
                try store.write {
                    for _ in 0..<Int.random(in: 1...30, using: &random) {
                        guard let id = model.keys.randomElement(using: &random) else { break }
                        if Int.random(in: 0..<4, using: &random) == 0 {
                            try articles.remove(id)
                            model[id] = nil
                        } else {
                            let body = text()
                            try articles.put(Article(id: id, title: nil, body: body))
                            model[id] = body
                        }
                    }
                    // Reads inside the write see its own changes.
                    let expected = model.filter { TextTokenizer.porter.terms(in: $0.value).contains("beta") }.keys.sorted()
                    #expect(try articles.query { Article.body.matches("beta") }.build().findIds() == expected)
                }
                if round % 10 == 9 {
                    #expect(try textIndexContents(store, property: "body") == expectedTextIndex(model, tokenizer: .porter))
                    #expect(try store.verify().isIntact)
                }
            }
            for word in words {
                let expected = model.filter { TextTokenizer.porter.terms(in: $0.value).contains(TextTokenizer.porter.terms(in: word)[0]) }.keys.sorted()
                #expect(try articles.query { Article.body.matches(word) }.build().findIds() == expected, "\(word)")
            }
            let phrase = model.filter { $0.value.contains("alpha beta") || $0.value.hasPrefix("alpha beta") }.keys.sorted()
            #expect(try articles.query { Article.body.matches("\"alpha beta\"") }.build().findIds() == phrase)
        }
    }

    @Test func aRolledBackWriteLeavesTheIndexAsItWas() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let kept = try articles.put(Article(title: nil, body: "reading books"))
            let before = try textIndexContents(store, property: "body")
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try store.write {
                    try articles.put((0..<50).map { _ in Article(title: nil, body: "letters and books") })
                    try articles.put(Article(id: kept, title: nil, body: "nothing"))
                    throw Abort()
                }
            }
            #expect(try textIndexContents(store, property: "body") == before)
            #expect(try articles.query { Article.body.matches("book") }.build().findIds() == [kept])
        }
    }

    /// Regression: `removeAll()` cleared the index database but kept the transaction's
    /// pending postings, which the commit then wrote back.
    @Test func removeAllInTheWriteThatPutDropsThePendingPostings() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            try store.write {
                try articles.put((0..<20).map { _ in Article(title: "x", body: "reading books") })
                try articles.removeAll()
                try articles.put(Article(title: nil, body: "letters"))
            }
            #expect(try articles.query { Article.body.matches("book") }.build().findIds().isEmpty)
            #expect(try articles.query { Article.body.matches("letter") }.build().count() == 1)
            #expect(try store.verify().isIntact)
        }
    }

    /// A flush that fails inside a write (a damaged block), caught by the caller, does not
    /// let the write commit objects whose postings were dropped: the commit's flush fails
    /// again and the write rolls back.
    @Test func aCaughtFlushFailureDoesNotCommitAnIndexWithoutThePostings() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let first = try articles.put(Article(title: nil, body: "reading books"))
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Article.self, in: transaction)
                let index = try #require(binding.textIndexes.first { $0.propertyName == "body" })
                try Damage.put(transaction, index.database, key: PostingBlock.key("book", first), value: [0xFF])
            }
            #expect(throws: CofferError.self) {
                try store.write {
                    try articles.put(Article(title: nil, body: "letters and books"))
                    // The search flushes the pending postings and meets the damaged block.
                    do { _ = try articles.query { Article.body.matches("book") }.build().findIds() } catch {}
                }
            }
            #expect(try articles.count() == 1, "the write rolled back")
        }
    }

    /// An index naming an object that is not stored is damage: reading the objects throws.
    @Test func aPostingWithoutARecordIsReportedAsDamage() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let id = try articles.put(Article(title: nil, body: "reading books"))
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Article.self, in: transaction)
                var key = IdKey(id)
                try key.withVal { keyVal in try transaction.check(mdb_del(transaction.txn, binding.table, &keyVal, nil), "test") }
            }
            #expect(throws: CofferError.self) { try articles.query { Article.body.matches("book") }.build().find() }
            #expect(try !store.verify().isIntact)
        }
    }

    /// A store whose full-text index has the earlier layout (one key per term and object,
    /// in `text.E.P`) gets the index built again on its first write, and the old one deleted.
    @Test func anIndexOfTheEarlierLayoutIsBuiltAgain() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var id: Id = 0
        do {
            let store = try Store(directory: directory.path)
            id = try store.box(for: Article.self).put(Article(title: "t", body: "reading books"))
            try store.performWrite { transaction in
                let binding = try #require(try store.binding(for: Article.self, in: transaction))
                for index in binding.textIndexes {
                    try transaction.check(mdb_drop(transaction.txn, index.database, 1), "test")
                    var legacy: MDB_dbi = 0
                    let name = "text.\(binding.entityId).\(index.storedId)"
                    try transaction.check(mdb_dbi_open(transaction.txn, name, UInt32(MDB_CREATE), &legacy), "test")
                    try Damage.put(transaction, legacy, key: Array("book".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, UInt8(id)], value: [0])
                }
            }
            try store.close()
        }
        let store = try Store(directory: directory.path)
        let articles = store.box(for: Article.self)
        try articles.put(Article(title: "u", body: "letters"))
        #expect(try articles.query { Article.body.matches("book") }.build().findIds() == [id])
        #expect(try store.verify().isIntact)
        let names = try store.read { try store.performRead { transaction in
            try transaction.withCursor(1, "test") { cursor in
                var names: [String] = []
                var current = try cursor.first()
                while let entry = current {
                    names.append(String(decoding: entry.key, as: UTF8.self))
                    current = try cursor.next()
                }
                return names
            }
        } }
        #expect(!names.contains { $0.hasPrefix("text.") }, "\(names)")
        try store.close()
    }

    /// Any bytes as a block: the reader returns entries or reports damage, never traps, and
    /// what it returns keeps the invariants.
    @Test func randomBlocksNeverTrap() {
        var random = SplitMix64(state: 11)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in
                Int.random(in: 0..<3, using: &random) == 0 ? UInt8.random(in: 0x80...0xFF, using: &random) : UInt8.random(in: 0...4, using: &random)
            }
            let firstId = Int.random(in: 0..<4, using: &random) == 0 ? Id.max - UInt64.random(in: 0...3, using: &random) : UInt64.random(in: 0...100, using: &random)
            bytes.withUnsafeBytes { raw in
                // The search path's decoder accepts exactly the blocks the reader reads whole,
                // with the same ids.
                var readIds: [Id]? = []
                if var whole = try? PostingBlock.Reader(raw, firstId: firstId) {
                    while true {
                        do {
                            guard let entry = try whole.next() else { break }
                            readIds?.append(entry.id)
                        } catch {
                            readIds = nil
                            break
                        }
                    }
                } else {
                    readIds = nil
                }
                for detail in [PostingList.Detail.ids, .counts, .positions] {
                    var list = PostingList()
                    let decoded = PostingBlock.decode(raw, firstId: firstId, detail: detail, into: &list)
                    // Positions are checked further (each fits 32 bits): fewer blocks decode.
                    if detail == .positions { if decoded { #expect(readIds != nil) } } else { #expect(decoded == (readIds != nil)) }
                    if decoded, let readIds { #expect(list.ids == readIds) }
                }
                guard var reader = try? PostingBlock.Reader(raw, firstId: firstId) else { return }
                var previous: Id?
                while true {
                    guard let entry = try? reader.next() else { break }
                    if let previous { #expect(entry.id > previous) } else { #expect(entry.id == firstId) }
                    #expect(!entry.positions.isEmpty && entry.positions.upperBound <= raw.count)
                    previous = entry.id
                }
            }
        }
    }

    @Test func writerAndReaderRoundTrip() throws {
        var random = SplitMix64(state: 12)
        var entries: [(Id, [UInt32])] = []
        var id: Id = UInt64.random(in: 0...1_000, using: &random)
        for _ in 0..<3_000 {
            var position: UInt32 = 0
            let positions = (0..<Int.random(in: 1...5, using: &random)).map { _ in
                position += UInt32.random(in: 0...(1 << 20), using: &random)
                return position
            }
            entries.append((id, positions.sorted()))
            id += UInt64.random(in: 1...(1 << 40), using: &random)
        }
        var writer = PostingBlock.Writer()
        for (id, positions) in entries {
            var bytes: [UInt8] = []
            PostingBlock.encodePositions(positions, to: &bytes)
            bytes.withUnsafeBytes { writer.append(id, positions: $0) }
        }
        let blocks = writer.finish()
        #expect(blocks.count > 1)
        var decoded: [(Id, [UInt32])] = []
        for block in blocks {
            #expect(block.bytes.count <= PostingBlock.targetSize)
            try block.bytes.withUnsafeBytes { raw in
                var reader = try PostingBlock.Reader(raw, firstId: block.firstId)
                while let entry = try reader.next() {
                    var positions: [UInt32] = []
                    #expect(PostingBlock.decodePositions(UnsafeRawBufferPointer(rebasing: raw[entry.positions]), into: &positions))
                    decoded.append((entry.id, positions))
                }
            }
        }
        #expect(decoded.map(\.0) == entries.map(\.0))
        #expect(decoded.map(\.1) == entries.map(\.1))
    }

    @Test func setOperationsMatchSets() {
        var random = SplitMix64(state: 13)
        for _ in 0..<300 {
            let a = Set((0..<Int.random(in: 0...200, using: &random)).map { _ in UInt64.random(in: 0...400, using: &random) }).sorted()
            let b = Set((0..<Int.random(in: 0...(Bool.random(using: &random) ? 5 : 200), using: &random)).map { _ in UInt64.random(in: 0...400, using: &random) }).sorted()
            #expect(PostingList.intersection(a, b) == Set(a).intersection(b).sorted())
            #expect(PostingList.union(a, b) == Set(a).union(b).sorted())
            #expect(PostingList.subtracting(a, b) == Set(a).subtracting(b).sorted())
        }
    }
}
