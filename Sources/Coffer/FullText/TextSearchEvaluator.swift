import CLMDB

/// Answers a `TextSearch` from full-text postings: the ids that match, and for ranking the
/// frequency of each positive part (word, prefix, phrase) in each matching object.
///
/// Semantics: the searched properties act as one text for words and prefixes (a word
/// matches when any searched property holds it); a phrase must occur within one property.
/// Search words are tokenized with each property's tokenizer; a word that tokenizes into
/// several terms ("e-mail") is a phrase of them. Prefixes are folded but not stemmed.
struct TextSearchEvaluator {
    /// The postings of one property: from its index, or built by tokenizing every record
    /// (a store whose index is not built yet, a read-only store of an older build).
    struct Source {
        let tokenizer: TextTokenizer
        /// id -> positions of a term (or of every term with the prefix).
        let read: (_ term: String, _ prefix: Bool) throws -> [Id: [UInt32]]
        /// id -> number of positions, without decoding them (single words need no more).
        let count: (_ term: String, _ prefix: Bool) throws -> [Id: Int]
    }

    /// What one positive part found: each object's number of occurrences.
    typealias Hits = [Id: Int]

    let sources: [Source]
    /// Hits of every positive part evaluated, in order, for ranking.
    private(set) var parts: [(part: TextSearch, hits: Hits)] = []

    init(sources: [Source]) {
        self.sources = sources
    }

    /// The ids matching `search`.
    mutating func ids(_ search: TextSearch) throws -> Set<Id> {
        switch search {
        case .word(let word, let prefix):
            let hits = try self.hits(word: word, prefix: prefix)
            parts.append((search, hits))
            return Set(hits.keys)
        case .phrase(let text):
            let hits = try self.hits(phrase: text)
            parts.append((search, hits))
            return Set(hits.keys)
        case .or(let alternatives):
            var result = Set<Id>()
            for alternative in alternatives { result.formUnion(try ids(alternative)) }
            return result
        case .and(let conjuncts):
            var result: Set<Id>?
            var excluded = Set<Id>()
            for conjunct in conjuncts {
                if case .not(let inner) = conjunct {
                    var negative = self
                    excluded.formUnion(try negative.ids(inner))   // negated parts do not rank
                    continue
                }
                let found = try ids(conjunct)
                result = result.map { $0.intersection(found) } ?? found
            }
            return (result ?? []).subtracting(excluded)
        case .not:
            // `TextSearch.parse` refuses searches without a positive part.
            return []
        }
    }

    private func hits(word: String, prefix: Bool) throws -> Hits {
        var result: Hits = [:]
        for source in sources {
            let terms = (prefix ? TextTokenizer.simple : source.tokenizer).terms(in: word)
            guard let last = terms.last else { continue }
            if terms.count == 1 {
                let counts = try source.count(last, prefix)
                if result.isEmpty {
                    result = counts
                } else {
                    for (id, count) in counts { result[id, default: 0] += count }
                }
            } else {
                // Several terms ("e-mail"): a phrase, the last one a prefix when asked.
                for (id, count) in try phrase(terms, lastIsPrefix: prefix, in: source) { result[id, default: 0] += count }
            }
        }
        return result
    }

    private func hits(phrase text: String) throws -> Hits {
        var result: Hits = [:]
        for source in sources {
            let terms = source.tokenizer.terms(in: text)
            guard !terms.isEmpty else { continue }
            for (id, count) in try phrase(terms, lastIsPrefix: false, in: source) { result[id, default: 0] += count }
        }
        return result
    }

    /// Objects where `terms` occur at consecutive positions, with the number of occurrences.
    private func phrase(_ terms: [String], lastIsPrefix: Bool, in source: Source) throws -> Hits {
        var postings: [[Id: [UInt32]]] = []
        for (offset, term) in terms.enumerated() {
            let found = try source.read(term, lastIsPrefix && offset == terms.count - 1)
            guard !found.isEmpty else { return [:] }
            postings.append(found)
        }
        var result: Hits = [:]
        // Positions are ascending: each later term's position is found by binary search.
        candidates: for (id, starts) in postings[0] {
            var later: [[UInt32]] = []
            later.reserveCapacity(postings.count - 1)
            for other in postings.dropFirst() {
                guard let positions = other[id] else { continue candidates }
                later.append(positions)
            }
            var count = 0
            for start in starts where later.enumerated().allSatisfy({ offset, positions in
                Self.contains(positions, start &+ UInt32(offset + 1))
            }) {
                count += 1
            }
            if count > 0 { result[id] = count }
        }
        return result
    }

    /// Whether the ascending `positions` hold `position`.
    static func contains(_ positions: [UInt32], _ position: UInt32) -> Bool {
        var low = 0
        var high = positions.count
        while low < high {
            let middle = (low + high) / 2
            if positions[middle] < position { low = middle + 1 } else { high = middle }
        }
        return low < positions.count && positions[low] == position
    }
}

extension Transaction {
    /// The postings of `term` (or of every term starting with it) in a full-text index:
    /// id -> positions. A malformed entry throws.
    func textPostings(_ index: TextIndexBinding, term: String, prefix: Bool) throws -> [Id: [UInt32]] {
        var start = Array(term.utf8)
        if !prefix { start.append(0) }
        var result: [Id: [UInt32]] = [:]
        try withCursor(index.database, "reading the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.seek(start)
            while let entry = current, entry.key.starts(with: start) {
                let key = entry.key
                // Terms hold no 0x00: a key is term ‖ 0x00 ‖ id.
                guard key.count >= 10, key[key.count - 9] == 0, let positions = TextIndexBinding.decodePositions(entry.value) else {
                    throw CofferError.storage(code: MDB_CORRUPTED, message: "an entry of the full-text index on \(index.propertyName) is damaged")
                }
                let id = Id(bigEndian: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]).loadUnaligned(as: UInt64.self))
                result[id, default: []].append(contentsOf: positions)
                current = try cursor.next()
            }
        }
        if prefix {
            for id in result.keys { result[id]?.sort() }
        }
        return result
    }

    /// The number of positions of `term` (or of every term starting with it) per id, read
    /// from the encoding without decoding it (each varint ends with a byte below 0x80).
    func textCounts(_ index: TextIndexBinding, term: String, prefix: Bool) throws -> [Id: Int] {
        var start = Array(term.utf8)
        if !prefix { start.append(0) }
        var result: [Id: Int] = [:]
        try withCursor(index.database, "reading the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.seek(start)
            while let entry = current, entry.key.starts(with: start) {
                let key = entry.key
                guard key.count >= 10, key[key.count - 9] == 0, let last = entry.value.last, last < 0x80 else {
                    throw CofferError.storage(code: MDB_CORRUPTED, message: "an entry of the full-text index on \(index.propertyName) is damaged")
                }
                let id = Id(bigEndian: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]).loadUnaligned(as: UInt64.self))
                var count = 0
                for byte in entry.value where byte < 0x80 { count += 1 }
                result[id, default: 0] += count
                current = try cursor.next()
            }
        }
        return result
    }

    /// Postings built by tokenizing every record's value of the property at `position`.
    func scannedTextPostings(_ binding: EntityBinding, position: Int, tokenizer: TextTokenizer) throws -> [String: [Id: [UInt32]]] {
        let storedId = binding.storedIds[position]
        var postings: [String: [Id: [UInt32]]] = [:]
        guard storedId != 0 else { return postings }
        let index = TextIndexBinding(position: position, storedId: storedId, propertyName: binding.schema.properties[position].name,
                                     tokenizer: tokenizer, database: 0)
        let name = binding.schema.name
        try forEachRecord(binding) { id, record in
            for (term, positions) in try index.postings(in: RecordFields(bytes: record, entity: name, id: id)) {
                postings[term, default: [:]][id] = positions
            }
            return true
        }
        return postings
    }
}
