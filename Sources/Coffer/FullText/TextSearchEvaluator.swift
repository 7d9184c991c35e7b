import CLMDB

/// Answers a `TextSearch` from full-text postings: the ids that match, in ascending order,
/// and for ranking the frequency of each positive part (word, prefix, phrase, NEAR group) in
/// each matching object.
///
/// Semantics: the searched properties act as one text for words and prefixes (a word
/// matches when any searched property holds it); a phrase, and a NEAR group, must occur
/// within one property; `name:term` looks in the property `name` only. Search words are
/// tokenized with each property's tokenizer; a word that tokenizes into several terms
/// ("e-mail") is a phrase of them. Prefixes are folded but not stemmed.
///
/// NOT is set difference wherever it stands: each part is answered within a universe, the
/// objects the enclosing conjunction's other parts already matched, and `-x` is that
/// universe minus `x`'s matches in it. So `birds (cats OR -dogs)` is
/// birds ∩ (cats ∪ (birds \ dogs)) and `cats -(-dogs)` is cats ∩ dogs. A search with no
/// universe to start from (`-dogs`, `cats OR -dogs` alone) is refused by `TextSearch.parse`.
///
/// Everything works on ascending id arrays (`PostingList`): conjunctions intersect them,
/// alternatives merge them, and only phrases and NEAR decode positions.
struct TextSearchEvaluator {
    /// The postings of one property: from its index, or built by tokenizing every record
    /// (a store whose index is not built yet, a read-only store of an older build).
    struct Source {
        /// The property's name, for `name:term`.
        let name: String
        let tokenizer: TextTokenizer
        /// The postings of a term (or of every term with the prefix), decoded to `detail`.
        let read: (_ term: String, _ prefix: Bool, _ detail: PostingList.Detail) throws -> PostingList
    }

    let sources: [Source]
    /// Whether parts keep their occurrence counts (`findRanked`).
    let ranking: Bool
    /// Each positive part evaluated (under an even number of negations), in order, with
    /// what it found in all objects, not only in its universe (counts when ranking).
    private(set) var parts: [(part: TextSearch, hits: PostingList)] = []

    init(sources: [Source], ranking: Bool = false) {
        self.sources = sources
        self.ranking = ranking
    }

    /// The ids matching `search`, ascending. `search` must be bounded (`TextSearch.parse`
    /// refuses the others); an unbounded one throws.
    mutating func ids(_ search: TextSearch) throws -> [Id] {
        try ids(search, within: nil, positive: true)
    }

    /// The ids matching `search` among `universe` (nil: all objects, allowed only for a
    /// bounded search). `positive`: not under an odd number of negations, so it ranks.
    private mutating func ids(_ search: TextSearch, within universe: [Id]?, positive: Bool) throws -> [Id] {
        switch search {
        case .word, .phrase, .field, .near:
            let hits = try self.hits(search, in: sources)
            if ranking, positive { parts.append((search, hits)) }
            return universe.map { PostingList.intersection($0, hits.ids) } ?? hits.ids
        case .or(let alternatives):
            var result: [Id] = []
            for alternative in alternatives {
                result = PostingList.union(result, try ids(alternative, within: universe, positive: positive))
            }
            return result
        case .and(let conjuncts):
            // Bounded parts first: they give the others (negations among them) a universe.
            var current = universe
            for conjunct in conjuncts.filter(\.isBounded) + conjuncts.filter({ !$0.isBounded }) {
                // Nothing left matches; ranking still wants every positive part's counts.
                if let current, current.isEmpty, !ranking { return [] }
                current = try ids(conjunct, within: current, positive: positive)
            }
            guard let current else { throw Self.unbounded(search) }
            return current
        case .not(let inner):
            guard let universe else { throw Self.unbounded(search) }
            return PostingList.subtracting(universe, try ids(inner, within: universe, positive: !positive))
        }
    }

    private static func unbounded(_ search: TextSearch) -> CofferError {
        CofferError.invalidSearch(search: search.summary, reason: "a negation needs a word or phrase that must occur beside it")
    }

    /// The objects where a term part (word, prefix, phrase, `name:` term, NEAR group) occurs
    /// in one of `sources`, with its occurrence counts.
    private func hits(_ search: TextSearch, in sources: [Source]) throws -> PostingList {
        switch search {
        case .word(let word, let prefix): return try hits(word: word, prefix: prefix, in: sources)
        case .phrase(let text): return try hits(phrase: text, in: sources)
        case .field(let name, let inner): return try hits(inner, in: sources.filter { $0.name == name })
        case .near(let operands, let distances):
            var found: [PostingList] = []
            for source in sources {
                // Each operand's occurrences in this property: start positions and length.
                var occurrences: [(list: PostingList, length: Int)] = []
                for operand in operands {
                    let occurrence = try self.occurrences(operand, in: source)
                    guard !occurrence.list.isEmpty else { break }
                    occurrences.append(occurrence)
                }
                guard occurrences.count == operands.count else { continue }
                found.append(Self.near(occurrences, distances: distances))
            }
            return PostingList.union(found)
        case .and, .or, .not:
            throw CofferError.invalidSearch(search: search.summary, reason: "only words, prefixes and phrases are looked up as terms")
        }
    }

    /// Where a NEAR operand occurs in one property: its start positions per object, and its
    /// length in terms (nothing when it names another property or has no terms).
    private func occurrences(_ operand: TextSearch, in source: Source) throws -> (list: PostingList, length: Int) {
        switch operand {
        case .field(let name, let inner):
            guard name == source.name else { return (PostingList(), 0) }
            return try occurrences(inner, in: source)
        case .word(let word, let prefix):
            let terms = (prefix ? TextTokenizer.simple : source.tokenizer).terms(in: word)
            guard !terms.isEmpty else { return (PostingList(), 0) }
            if terms.count == 1 { return (try source.read(terms[0], prefix, .positions), 1) }
            return (try phrase(terms, lastIsPrefix: prefix, in: source, starts: true), terms.count)
        case .phrase(let text):
            let terms = source.tokenizer.terms(in: text)
            guard !terms.isEmpty else { return (PostingList(), 0) }
            if terms.count == 1 { return (try source.read(terms[0], false, .positions), 1) }
            return (try phrase(terms, lastIsPrefix: false, in: source, starts: true), terms.count)
        case .and, .or, .not, .near:
            throw CofferError.invalidSearch(search: operand.summary, reason: "NEAR joins words, prefixes and phrases")
        }
    }

    /// The objects holding a chain of occurrences, one per operand, each within its
    /// distance of the next (the number of terms strictly between them, in either order;
    /// overlapping occurrences are near). Counts: the last operand's occurrences that end
    /// such a chain.
    private static func near(_ operands: [(list: PostingList, length: Int)], distances: [Int]) -> PostingList {
        var result = PostingList()
        var cursors = [Int](repeating: 0, count: operands.count)
        let first = operands[0].list
        candidates: for i in first.ids.indices {
            let id = first.ids[i]
            var rows = [i]
            for k in 1..<operands.count {
                let list = operands[k].list
                cursors[k] = PostingList.gallop(list.ids, id, from: cursors[k])
                guard cursors[k] < list.ids.count else { break candidates }
                guard list.ids[cursors[k]] == id else { continue candidates }
                rows.append(cursors[k])
            }
            // Occurrences of operand k reachable through a chain from operand 0, ascending.
            var reachable = Array(first.positions(at: i)).map(Int64.init)
            for k in 1..<operands.count {
                let before = Int64(operands[k - 1].length), length = Int64(operands[k].length)
                let distance = Int64(distances[k - 1])
                // q is near p when p + before + distance >= q and q + length + distance >= p.
                reachable = operands[k].list.positions(at: rows[k]).map(Int64.init).filter { q in
                    let low = Self.lowerBound(reachable, q - before - distance)
                    return low < reachable.count && reachable[low] <= q + length + distance
                }
                if reachable.isEmpty { continue candidates }
            }
            result.ids.append(id)
            result.counts.append(reachable.count)
        }
        return result
    }

    /// The first index of ascending `values` holding a value >= `value`.
    private static func lowerBound(_ values: [Int64], _ value: Int64) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = low + (high - low) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func hits(word: String, prefix: Bool, in sources: [Source]) throws -> PostingList {
        var found: [PostingList] = []
        for source in sources {
            let terms = (prefix ? TextTokenizer.simple : source.tokenizer).terms(in: word)
            guard let last = terms.last else { continue }
            if terms.count == 1 {
                found.append(try source.read(last, prefix, ranking ? .counts : .ids))
            } else {
                // Several terms ("e-mail"): a phrase, the last one a prefix when asked.
                found.append(try phrase(terms, lastIsPrefix: prefix, in: source, starts: false))
            }
        }
        return PostingList.union(found)
    }

    private func hits(phrase text: String, in sources: [Source]) throws -> PostingList {
        var found: [PostingList] = []
        for source in sources {
            let terms = source.tokenizer.terms(in: text)
            guard !terms.isEmpty else { continue }
            found.append(try phrase(terms, lastIsPrefix: false, in: source, starts: false))
        }
        return PostingList.union(found)
    }

    /// Objects where `terms` occur at consecutive positions, with the number of occurrences
    /// and, when `starts`, the position where each occurrence starts.
    private func phrase(_ terms: [String], lastIsPrefix: Bool, in source: Source, starts: Bool) throws -> PostingList {
        var lists: [PostingList] = []
        for (offset, term) in terms.enumerated() {
            let found = try source.read(term, lastIsPrefix && offset == terms.count - 1, terms.count == 1 ? .counts : .positions)
            guard !found.isEmpty else { return PostingList() }
            lists.append(found)
        }
        guard lists.count > 1 else { return lists[0] }
        return PostingList.withBuffers(lists[...]) { Self.phrase($0, starts: starts) }
    }

    /// `phrase` on the lists' storage: all lists ascend, so one cursor per later term moves
    /// forward as the first term's ids advance, and within an object one position cursor
    /// per later term moves forward as the first term's positions advance.
    private static func phrase(_ lists: [PostingList.Buffers], starts: Bool) -> PostingList {
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
                if matched {
                    count += 1
                    if starts { result.positions.append(start) }
                }
            }
            if count > 0 {
                result.ids.append(id)
                result.counts.append(count)
                if starts { result.positionEnds.append(result.positions.count) }
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
                    throw index.damaged("a key is damaged")
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
        for list in lists { list.checkInvariants() }
        return PostingList.union(lists)
    }

    /// Postings built by tokenizing every record's value of the property at `position`.
    func scannedTextPostings(_ binding: EntityBinding, position: Int, tokenizer: TextTokenizer) throws -> [String: [Id: [UInt32]]] {
        let storedId = binding.storedIds[position]
        var postings: [String: [Id: [UInt32]]] = [:]
        guard storedId != 0 else { return postings }
        let index = TextIndexBinding(position: position, storedId: storedId, entityName: binding.schema.name, propertyName: binding.schema.properties[position].name,
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
