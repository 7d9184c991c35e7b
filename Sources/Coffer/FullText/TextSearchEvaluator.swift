import CLMDB

/// Answers a `TextSearch` from full-text postings: the ids that match, in ascending order,
/// and for ranking the frequency of each positive part (word, prefix, phrase) in each
/// matching object.
///
/// Semantics: the searched properties act as one text for words and prefixes (a word
/// matches when any searched property holds it); a phrase must occur within one property.
/// Search words are tokenized with each property's tokenizer; a word that tokenizes into
/// several terms ("e-mail") is a phrase of them. Prefixes are folded but not stemmed.
///
/// Everything works on ascending id arrays (`PostingList`): conjunctions intersect them,
/// alternatives merge them, and only phrases decode positions.
struct TextSearchEvaluator {
    /// The postings of one property: from its index, or built by tokenizing every record
    /// (a store whose index is not built yet, a read-only store of an older build).
    struct Source {
        let tokenizer: TextTokenizer
        /// The postings of a term (or of every term with the prefix), decoded to `detail`.
        let read: (_ term: String, _ prefix: Bool, _ detail: PostingList.Detail) throws -> PostingList
    }

    let sources: [Source]
    /// Whether parts keep their occurrence counts (`findRanked`).
    let ranking: Bool
    /// Each positive part evaluated, in order, with what it found (counts when ranking).
    private(set) var parts: [(part: TextSearch, hits: PostingList)] = []

    init(sources: [Source], ranking: Bool = false) {
        self.sources = sources
        self.ranking = ranking
    }

    /// The ids matching `search`, ascending.
    mutating func ids(_ search: TextSearch) throws -> [Id] {
        switch search {
        case .word(let word, let prefix):
            let hits = try self.hits(word: word, prefix: prefix)
            if ranking { parts.append((search, hits)) }
            return hits.ids
        case .phrase(let text):
            let hits = try self.hits(phrase: text)
            if ranking { parts.append((search, hits)) }
            return hits.ids
        case .or(let alternatives):
            var result: [Id] = []
            for alternative in alternatives { result = PostingList.union(result, try ids(alternative)) }
            return result
        case .and(let conjuncts):
            var result: [Id]?
            var excluded: [Id] = []
            for conjunct in conjuncts {
                if case .not(let inner) = conjunct {
                    var negative = TextSearchEvaluator(sources: sources)   // negated parts do not rank
                    excluded = PostingList.union(excluded, try negative.ids(inner))
                    continue
                }
                let found = try ids(conjunct)
                result = result.map { PostingList.intersection($0, found) } ?? found
            }
            return PostingList.subtracting(result ?? [], excluded)
        case .not:
            // `TextSearch.parse` refuses searches without a positive part.
            return []
        }
    }

    private func hits(word: String, prefix: Bool) throws -> PostingList {
        var found: [PostingList] = []
        for source in sources {
            let terms = (prefix ? TextTokenizer.simple : source.tokenizer).terms(in: word)
            guard let last = terms.last else { continue }
            if terms.count == 1 {
                found.append(try source.read(last, prefix, ranking ? .counts : .ids))
            } else {
                // Several terms ("e-mail"): a phrase, the last one a prefix when asked.
                found.append(try phrase(terms, lastIsPrefix: prefix, in: source))
            }
        }
        return PostingList.union(found)
    }

    private func hits(phrase text: String) throws -> PostingList {
        var found: [PostingList] = []
        for source in sources {
            let terms = source.tokenizer.terms(in: text)
            guard !terms.isEmpty else { continue }
            found.append(try phrase(terms, lastIsPrefix: false, in: source))
        }
        return PostingList.union(found)
    }

    /// Objects where `terms` occur at consecutive positions, with the number of occurrences.
    private func phrase(_ terms: [String], lastIsPrefix: Bool, in source: Source) throws -> PostingList {
        var lists: [PostingList] = []
        for (offset, term) in terms.enumerated() {
            let found = try source.read(term, lastIsPrefix && offset == terms.count - 1, terms.count == 1 ? .counts : .positions)
            guard !found.isEmpty else { return PostingList() }
            lists.append(found)
        }
        guard lists.count > 1 else { return lists[0] }
        return PostingList.withBuffers(lists[...]) { Self.phrase($0) }
    }

    /// `phrase` on the lists' storage: all lists ascend, so one cursor per later term moves
    /// forward as the first term's ids advance, and within an object one position cursor
    /// per later term moves forward as the first term's positions advance.
    private static func phrase(_ lists: [PostingList.Buffers]) -> PostingList {
        var result = PostingList()
        var cursors = [Int](repeating: 0, count: lists.count)
        var at = [Int](repeating: 0, count: lists.count)
        var ends = [Int](repeating: 0, count: lists.count)
        let first = lists[0]
        candidates: for i in first.ids.indices {
            let id = first.ids[i]
            for k in 1..<lists.count {
                let list = lists[k]
                cursors[k] = PostingList.gallop(list.ids, id, from: cursors[k])
                guard cursors[k] < list.ids.count else { break candidates }
                guard list.ids[cursors[k]] == id else { continue candidates }
                at[k] = cursors[k] == 0 ? 0 : list.positionEnds[cursors[k] - 1]
                ends[k] = list.positionEnds[cursors[k]]
            }
            var count = 0
            var p = i == 0 ? 0 : first.positionEnds[i - 1]
            let end = first.positionEnds[i]
            starts: while p < end {
                let start = first.positions[p]
                p += 1
                var matched = true
                for k in 1..<lists.count {
                    let positions = lists[k].positions
                    let wanted = start &+ UInt32(k)
                    var position = at[k]
                    while position < ends[k], positions[position] < wanted { position += 1 }
                    at[k] = position
                    // A later term without positions left ends every later start too.
                    guard position < ends[k] else { break starts }
                    if positions[position] != wanted {
                        matched = false
                        break
                    }
                }
                if matched { count += 1 }
            }
            if count > 0 {
                result.ids.append(id)
                result.counts.append(count)
            }
        }
        return result
    }
}

extension Transaction {
    /// The postings of `term` (or of every term starting with it) in a full-text index,
    /// decoded to `detail`. A malformed block throws.
    func readTextPostings(_ index: TextIndexBinding, term: String, prefix: Bool, detail: PostingList.Detail) throws -> PostingList {
        try flushTextIndexes()
        var start = Array(term.utf8)
        if !prefix { start.append(0) }
        var lists: [PostingList] = []
        var list = PostingList()
        var listTerm: [UInt8] = []
        try withCursor(index.database, "reading the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.seek(start)
            while let entry = current, entry.key.starts(with: start) {
                let key = entry.key
                // Terms hold no 0x00: a key is term ‖ 0x00 ‖ first id.
                let termBytes = key[..<max(key.count - 9, 0)]
                guard key.count >= 10, key[key.count - 9] == 0, !termBytes.contains(0) else {
                    throw CofferError.storage(code: MDB_CORRUPTED, message: "a key of the full-text index on \(index.propertyName) is damaged")
                }
                if prefix, !termBytes.elementsEqual(listTerm) {
                    // The next term with the prefix: its own ascending list.
                    if !list.isEmpty { lists.append(list) }
                    list = PostingList()
                    listTerm = Array(termBytes)
                }
                let firstId = Id(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
                if let last = list.ids.last, firstId <= last { throw index.damage(term: term) }
                guard PostingBlock.decode(entry.value, firstId: firstId, detail: detail, into: &list) else { throw index.damage(term: term) }
                current = try cursor.next()
            }
        }
        if !list.isEmpty { lists.append(list) }
        return PostingList.union(lists)
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
