import CLMDB
import Foundation

extension Query {
    /// The matches ordered by relevance to the query's full-text conditions (BM25), most
    /// relevant first, ties by id, with their scores. The query's own ordering is not used.
    ///
    /// ```swift
    /// let query = try articles.query { Article.body.matches("doctor books") && Article.year > 2000 }.build()
    /// for (article, score) in try query.findRanked(limit: 10) { print(score, article.title) }
    /// ```
    ///
    /// The score of an object is the sum, over the positive parts of every `matches`
    /// condition not under `!` (each word, prefix, phrase and NEAR group not under an odd
    /// number of the search's negations; negated parts only filter), of
    /// `idf × tf × (k1 + 1) / (tf + k1 × (1 − b + b × |d| / avgdl))` with k1 = 1.2 and
    /// b = 0.75, where `tf` is the number of occurrences of the part in the object's searched
    /// properties, `|d|` the number of terms in them, `avgdl` the average of that over the
    /// objects with text, and `idf = ln(1 + (N − n + 0.5) / (n + 0.5))` with `N` the number
    /// of stored objects and `n` the number of objects containing the part.
    ///
    /// - Throws: ``CofferError/invalidQuery(entity:property:reason:)`` when the query has no
    ///   `matches` condition outside `!`; ``CofferError/invalidPaging(entity:offset:limit:)``
    ///   for a negative offset or limit.
    public func findRanked(offset: Int = 0, limit: Int? = nil) throws -> [(E, Double)] {
        guard offset >= 0, (limit ?? 0) >= 0 else {
            throw CofferError.invalidPaging(entity: E._cofferSchema.name, offset: offset, limit: limit)
        }
        let steps = condition.map { Self.rankingSteps(in: $0) } ?? []
        guard !steps.isEmpty else {
            throw CofferError.invalidQuery(entity: E._cofferSchema.name, property: nil, reason: "findRanked() needs a full-text matches(_:) condition that is not negated")
        }
        return try box.reading(empty: []) { transaction, binding in
            let matches = try self.matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false)
            guard !matches.isEmpty else { return [] }
            let total = Double(max(try box.count(in: transaction, binding: binding), 1))
            var scores: [Id: Double] = [:]
            for step in steps {
                var evaluator = try step.evaluator(in: transaction, store: box.store, ranking: true)
                _ = try evaluator.ids(try step.search.get())
                let lengths = try TextLengths(step.properties, binding: binding, transaction: transaction)
                let averageLength = max(lengths.average, 1)
                for (_, hits) in evaluator.parts {
                    let n = Double(hits.ids.count)
                    let idf = log(1 + (total - n + 0.5) / (n + 0.5))
                    for match in matches {
                        guard let count = hits.count(of: match.id) else { continue }
                        let tf = Double(count)
                        let length = try lengths.length(of: match.id, record: match.record)
                        let norm = 1 - 0.75 + 0.75 * length / averageLength
                        scores[match.id, default: 0] += idf * tf * 2.2 / (tf + 1.2 * norm)
                    }
                }
            }
            let ranked = matches.map { ($0, scores[$0.id] ?? 0) }.sorted { a, b in
                a.1 != b.1 ? a.1 > b.1 : a.0.id < b.0.id
            }
            let start = min(offset, ranked.count)
            let end = limit.map { ranked.count - start > $0 ? start + $0 : ranked.count } ?? ranked.count
            return try ranked[start..<end].map { match, score in
                var reader = try RecordReader(bytes: match.record, layout: binding, id: match.id)
                return (try E._cofferDecode(id: match.id, from: &reader), score)
            }
        }
    }

    /// The full-text steps that rank: those not under a negation.
    static func rankingSteps(in node: ConditionNode) -> [TextMatchLink] {
        switch node {
        case .link(let step): return (step.link as? TextMatchLink).map { [$0] } ?? []
        case .and(let nodes), .or(let nodes): return nodes.flatMap { rankingSteps(in: $0) }
        case .leaf, .invalid, .not: return []
        }
    }
}

/// Term counts of objects in some full-text properties: from the indexes' length entries
/// and statistics, or by tokenizing records where no index is built.
struct TextLengths {
    let indexes: [TextIndexBinding]
    /// Properties without an index: tokenized from the record.
    let scanned: [TextIndexBinding]
    let transaction: Transaction
    let entity: String
    /// The average term count over objects with text.
    private(set) var average: Double = 0

    init(_ positions: [Int], binding: EntityBinding, transaction: Transaction) throws {
        var indexes: [TextIndexBinding] = []
        var scanned: [TextIndexBinding] = []
        for position in positions {
            if let index = binding.textIndexes.first(where: { $0.position == position }) {
                indexes.append(index)
            } else if let tokenizer = binding.schema.properties[position].fullText {
                scanned.append(TextIndexBinding(position: position, storedId: binding.storedIds[position], entityName: binding.schema.name,
                                                propertyName: binding.schema.properties[position].name, tokenizer: tokenizer, database: 0))
            }
        }
        self.indexes = indexes
        self.scanned = scanned
        self.transaction = transaction
        entity = binding.schema.name
        var documents: UInt64 = 0
        var terms: UInt64 = 0
        for index in indexes {
            let stats = try transaction.textIndexStats(index)
            documents = max(documents, stats.documents)
            terms &+= stats.terms
        }
        if !scanned.isEmpty {
            var scannedDocuments: UInt64 = 0
            try transaction.forEachRecord(binding) { id, record in
                let fields = RecordFields(bytes: record, entity: binding.schema.name, id: id)
                let count = try scanned.reduce(0) { $0 + (try $1.postings(in: fields).values.reduce(0) { $0 + $1.count }) }
                if count > 0 { scannedDocuments += 1 }
                terms &+= UInt64(count)
                return true
            }
            documents = max(documents, scannedDocuments)
        }
        average = documents == 0 ? 0 : Double(terms) / Double(documents)
    }

    /// The number of terms in the searched properties of one object.
    func length(of id: Id, record: UnsafeRawBufferPointer) throws -> Double {
        var total = 0
        for index in indexes {
            try TextIndexBinding.lengthKey(id).withUnsafeBytes { key in
                var keyVal = MDB_val(key)
                var value = MDB_val()
                let rc = mdb_get(transaction.txn, index.database, &keyVal, &value)
                if rc == MDB_NOTFOUND { return }
                try transaction.check(rc, "reading the full-text index on \(index.propertyName)")
                guard value.mv_size == 4 else {
                    throw index.damaged("a length entry is damaged")
                }
                total += Int(UInt32(bigEndian: value.bytes.loadUnaligned(as: UInt32.self)))
            }
        }
        if !scanned.isEmpty {
            let fields = RecordFields(bytes: record, entity: entity, id: id)
            for index in scanned { total += try index.postings(in: fields).values.reduce(0) { $0 + $1.count } }
        }
        return Double(total)
    }
}
