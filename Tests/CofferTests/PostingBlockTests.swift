@testable import Coffer
import CLMDB
import Foundation
import Testing

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
