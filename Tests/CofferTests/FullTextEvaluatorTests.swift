@testable import Coffer
import Foundation
import Testing

/// A plain Swift reading of NEAR on one property's tokens: occurrences (start, length) of
/// each operand, and a chain of them, each within its distance of the next (terms strictly
/// between, in either order; overlapping ones are near).
func plainNear(_ operands: [[(start: Int, length: Int)]], distances: [Int]) -> Bool {
    func near(_ a: (start: Int, length: Int), _ b: (start: Int, length: Int), _ distance: Int) -> Bool {
        let gap = b.start >= a.start + a.length ? b.start - (a.start + a.length)
            : a.start >= b.start + b.length ? a.start - (b.start + b.length) : 0
        return gap <= distance
    }
    func chain(from occurrence: (start: Int, length: Int), at k: Int) -> Bool {
        guard k < operands.count else { return true }
        return operands[k].contains { near(occurrence, $0, distances[k - 1]) && chain(from: $0, at: k + 1) }
    }
    guard let first = operands.first else { return false }
    return first.contains { chain(from: $0, at: 1) }
}

/// Where `terms` occur as a phrase in `tokens` (the last a prefix when asked): starts.
func plainPhraseStarts(_ tokens: [String], _ terms: [String], lastIsPrefix: Bool) -> [Int] {
    guard !terms.isEmpty, tokens.count >= terms.count else { return [] }
    return (0...(tokens.count - terms.count)).filter { start in
        terms.indices.allSatisfy { offset in
            let token = tokens[start + offset]
            return lastIsPrefix && offset == terms.count - 1 ? token.hasPrefix(terms[offset]) : token == terms[offset]
        }
    }
}

/// The full-text evaluator on its own, over in-memory postings: NOT as set difference at
/// any depth, NEAR, property prefixes, against a plain Swift model on random trees.
@Suite struct FullTextEvaluatorTests {
    /// Objects with properties name -> text, all `.simple`: an evaluator over their postings.
    static func evaluator(_ objects: [Id: [String: String]], properties: [String], ranking: Bool = false) -> TextSearchEvaluator {
        let sources = properties.map { name in
            var postings: [String: [Id: [UInt32]]] = [:]
            for (id, texts) in objects {
                for (position, term) in TextTokenizer.simple.terms(in: texts[name] ?? "").enumerated() {
                    postings[term, default: [:]][id, default: []].append(UInt32(position))
                }
            }
            return TextSearchEvaluator.Source(name: name, tokenizer: .simple) { term, prefix, detail in
                guard prefix else { return PostingList(postings[term] ?? [:], detail: detail) }
                return PostingList.union(postings.filter { $0.key.hasPrefix(term) }.map { PostingList($0.value, detail: detail) })
            }
        }
        return TextSearchEvaluator(sources: sources, ranking: ranking)
    }

    /// The model: whether one object (property name -> tokens) matches `search`.
    static func plainMatch(_ search: TextSearch, _ tokens: [String: [String]]) -> Bool {
        func occurrences(_ term: TextSearch, in name: String) -> [(start: Int, length: Int)] {
            switch term {
            case .field(let field, let inner): return field == name ? occurrences(inner, in: name) : []
            case .word(let word, let prefix):
                let terms = TextTokenizer.simple.terms(in: word)
                return plainPhraseStarts(tokens[name] ?? [], terms, lastIsPrefix: prefix).map { ($0, terms.count) }
            case .phrase(let text):
                let terms = TextTokenizer.simple.terms(in: text)
                return plainPhraseStarts(tokens[name] ?? [], terms, lastIsPrefix: false).map { ($0, terms.count) }
            default: return []
            }
        }
        switch search {
        case .word, .phrase, .field: return tokens.keys.contains { !occurrences(search, in: $0).isEmpty }
        case .near(let operands, let distances):
            return tokens.keys.contains { name in plainNear(operands.map { occurrences($0, in: name) }, distances: distances) }
        case .and(let parts): return parts.allSatisfy { plainMatch($0, tokens) }
        case .or(let parts): return parts.contains { plainMatch($0, tokens) }
        case .not(let inner): return !plainMatch(inner, tokens)
        }
    }

    /// The examples: a negation inside an alternative, and a double negation.
    @Test func negationInsideAGroupOrAnAlternativeIsSetDifference() throws {
        let objects: [Id: [String: String]] = [1: ["body": "birds"], 2: ["body": "birds dogs"], 3: ["body": "birds cats dogs"]]
        func ids(_ text: String) throws -> [Id] {
            var evaluator = Self.evaluator(objects, properties: ["body"])
            return try evaluator.ids(try TextSearch.parse(text))
        }
        #expect(try ids("birds (cats OR -dogs)") == [1, 3])
        #expect(try ids("cats -(-dogs)") == [3])
        var withCats = Self.evaluator(objects.merging([4: ["body": "cats"]]) { $1 }, properties: ["body"])
        #expect(try withCats.ids(try TextSearch.parse("cats -(-dogs)")) == [3], "the cats without dogs are not kept")
        #expect(try ids("birds -(-dogs)") == [2, 3])
        #expect(try ids("birds -(cats -dogs)") == [1, 2, 3], "birds minus (cats without dogs), and every cat has dogs")
        #expect(try ids("birds -(dogs -cats)") == [1, 3])
        #expect(try ids("(birds (cats OR -dogs)) OR dogs") == [1, 2, 3])
        #expect(try ids("birds NOT (dogs NOT cats)") == [1, 3])
        for unbounded in ["(cats OR -dogs)", "-(-dogs)", "-dogs -cats", "birds OR -dogs"] {
            #expect(throws: CofferError.self, "\(unbounded)") { try TextSearch.parse(unbounded) }
        }
    }

    @Test func nearAndPropertyPrefixes() throws {
        let objects: [Id: [String: String]] = [
            1: ["title": "fred", "body": "fred lives in bath"],
            2: ["title": "anna", "body": "lives with fred"],
            3: ["title": "fred smith", "body": "one two three four five six seven eight nine ten eleven twelve fred"],
        ]
        func ids(_ text: String) throws -> [Id] {
            var evaluator = Self.evaluator(objects, properties: ["title", "body"])
            return try evaluator.ids(try TextSearch.parse(text))
        }
        #expect(try ids("title:fred") == [1, 3])
        #expect(try ids("body:fred") == [1, 2, 3])
        #expect(try ids("title:fred body:lives") == [1])
        #expect(try ids("title:\"fred smith\"") == [3])
        #expect(try ids("body:liv*") == [1, 2])
        #expect(try ids("fred NEAR/0 lives") == [1], "adjacent")
        #expect(try ids("fred NEAR/1 lives") == [1, 2], "one term between, in either order")
        #expect(try ids("fred NEAR/1 bath") == [])
        #expect(try ids("fred NEAR/2 bath") == [1])
        #expect(try ids("one NEAR fred") == [], "eleven terms between: beyond NEAR's 10")
        #expect(try ids("two NEAR fred") == [3], "ten terms between")
        #expect(try ids("\"fred lives\" NEAR/1 bath") == [1], "a phrase's length counts")
        #expect(try ids("fred NEAR/0 lives NEAR/0 in") == [1])
        #expect(try ids("anna NEAR fred") == [], "NEAR holds within one property")
        #expect(try ids("title:fred NEAR smith") == [3])
        #expect(try ids("fred -title:fred") == [2])
    }

    /// Random trees of AND, OR, NOT (nested, double), phrases, prefixes, NEAR and property
    /// prefixes over random small documents: the evaluator (plain and ranking) agrees with
    /// the model, the canonical spelling parses back to the same tree, and a tree without a
    /// universe to start from is refused.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomTreesMatchAPlainModel(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let vocabulary = ["ant", "bee", "cat", "cow", "dog", "eel"]
        let properties = ["title", "body"]
        func word() -> String { vocabulary.randomElement(using: &random)! }
        func term() -> TextSearch {
            let base: TextSearch
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1, 2: base = .word(word(), prefix: false)
            case 3: base = .word(String(word().prefix(Int.random(in: 1...2, using: &random))), prefix: true)
            default: base = .phrase((0..<Int.random(in: 1...3, using: &random)).map { _ in word() }.joined(separator: " "))
            }
            return Int.random(in: 0..<4, using: &random) == 0 ? .field(properties.randomElement(using: &random)!, base) : base
        }
        func tree(_ depth: Int) -> TextSearch {
            let choice = depth == 0 ? Int.random(in: 0..<5, using: &random) : Int.random(in: 0..<11, using: &random)
            switch choice {
            case 0...3: return term()
            case 4:
                let count = Int.random(in: 2...3, using: &random)
                return .near((0..<count).map { _ in term() }, distances: (1..<count).map { _ in Int.random(in: 0...3, using: &random) })
            case 5, 6: return .and((0..<Int.random(in: 2...3, using: &random)).map { _ in tree(depth - 1) })
            case 7, 8: return .or((0..<Int.random(in: 2...3, using: &random)).map { _ in tree(depth - 1) })
            default: return .not(tree(depth - 1))
            }
        }
        var checked = 0, refused = 0
        for _ in 0..<40 {
            var objects: [Id: [String: String]] = [:]
            for id in 1...Id(Int.random(in: 1...12, using: &random)) {
                objects[id] = Dictionary(uniqueKeysWithValues: properties.map { name in
                    (name, (0..<Int.random(in: 0...6, using: &random)).map { _ in word() }.joined(separator: " "))
                })
            }
            let tokens = objects.mapValues { $0.mapValues { TextTokenizer.simple.terms(in: $0) } }
            for _ in 0..<25 {
                let search = tree(Int.random(in: 1...4, using: &random))
                var evaluator = Self.evaluator(objects, properties: properties)
                guard search.isBounded else {
                    #expect(throws: CofferError.self, "\(search.summary)") { try TextSearch.parse(search.summary) }
                    #expect(throws: CofferError.self, "\(search.summary)") { try evaluator.ids(search) }
                    refused += 1
                    continue
                }
                #expect(try TextSearch.parse(search.summary) == search, "\(search.summary)")
                let expected = tokens.filter { Self.plainMatch(search, $0.value) }.map(\.key).sorted()
                #expect(try evaluator.ids(search) == expected, "\(search.summary)")
                var ranking = Self.evaluator(objects, properties: properties, ranking: true)
                #expect(try ranking.ids(search) == expected, "ranking: \(search.summary)")
                checked += 1
            }
        }
        print("Full-text evaluator (seed \(seed)): \(checked) random trees checked against a plain model, \(refused) unbounded refused")
    }
}
