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
