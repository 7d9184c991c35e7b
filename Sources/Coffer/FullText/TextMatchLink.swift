/// A full-text match as a condition step: each run answers the search from the postings of
/// the searched properties (or, without a built index, from their records) and becomes an
/// id-list condition, so it combines with every other condition, ordering, paging, links,
/// property queries and projections, and `describe()` shows it.
///
/// It is not generic over the entity (selector queries on stored data have no Swift type):
/// it carries the schema, and finds the binding with `binding`.
struct TextMatchLink: QueryLink {
    let position = 0   // the object's id
    let schema: EntitySchema
    /// The searched entity's binding in a transaction.
    let binding: @Sendable (Transaction, Store) throws -> EntityBinding?
    /// The searched properties' positions.
    let properties: [Int]
    let text: String
    let search: Result<TextSearch, CofferError>
    /// The names property prefixes (`title:word`) use: stored names in selectors (as every
    /// selector field), Swift names in the typed DSL.
    let useStoredNames: Bool

    init(schema: EntitySchema, properties: [Int], text: String, useStoredNames: Bool = false,
         binding: @escaping @Sendable (Transaction, Store) throws -> EntityBinding?) {
        self.schema = schema
        self.binding = binding
        self.properties = properties
        self.text = text
        self.useStoredNames = useStoredNames
        let names = properties.map { useStoredNames ? schema.properties[$0].storedName : schema.properties[$0].name }
        search = Result { () throws(CofferError) -> TextSearch in
            do {
                let search = try TextSearch.parse(text)
                // A property prefix must name a searched property: an unknown one is an error,
                // never an empty answer.
                if let unknown = search.fields.subtracting(names).sorted().first {
                    let searched = names.joined(separator: ", ")
                    throw CofferError.invalidSearch(search: text, reason: "'\(unknown):' names no full-text property searched here "
                        + "(\(schema.name): \(searched)); put a word with a colon in quotes to search it as text")
                }
                if let near = search.nearAcrossProperties {
                    throw CofferError.invalidSearch(search: text, reason: "the operands of '\(near.summary)' name different properties; NEAR finds terms within one property")
                }
                return search
            } catch let error as CofferError {
                throw error
            } catch {
                throw CofferError.invalidSearch(search: text, reason: "\(error)")
            }
        }
    }

    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode {
        var evaluator = try evaluator(in: transaction, store: store)
        let ids = try evaluator.ids(try search.get())
        var leaf = ConditionLeaf(position: 0, op: .inList, values: ids.map { .unsigned($0) }, caseSensitive: true)
        leaf.idsAreStored = true
        return .leaf(leaf)
    }

    /// An evaluator over the searched properties, reading the calling thread's transaction.
    func evaluator(in transaction: Transaction, store: Store, ranking: Bool = false) throws -> TextSearchEvaluator {
        guard let binding = try binding(transaction, store) else { return TextSearchEvaluator(sources: [], ranking: ranking) }
        let sources = try properties.compactMap { position -> TextSearchEvaluator.Source? in
            guard let tokenizer = schema.properties[position].fullText else { return nil }
            let name = useStoredNames ? schema.properties[position].storedName : schema.properties[position].name
            if let index = binding.textIndexes.first(where: { $0.position == position }) {
                return TextSearchEvaluator.Source(name: name, tokenizer: tokenizer) { term, prefix, detail in
                    try transaction.readTextPostings(index, term: term, prefix: prefix, detail: detail)
                }
            }
            let scanned = try transaction.scannedTextPostings(binding, position: position, tokenizer: tokenizer)
            return TextSearchEvaluator.Source(name: name, tokenizer: tokenizer) { term, prefix, detail in
                guard prefix else { return PostingList(scanned[term] ?? [:], detail: detail) }
                var lists: [PostingList] = []
                for (candidate, postings) in scanned where candidate.utf8.starts(with: term.utf8) {
                    lists.append(PostingList(postings, detail: detail))
                }
                return PostingList.union(lists)
            }
        }
        return TextSearchEvaluator(sources: sources, ranking: ranking)
    }

    var summary: String {
        let names = properties.map { schema.properties[$0].name }.joined(separator: ", ")
        let search = (try? self.search.get())?.summary ?? text
        return "full-text match on \(names) for \(search) (answered from the postings, then checked as an id list)"
    }

    var invalid: String? {
        if case .failure(let error) = search { return error.description }
        return nil
    }

    var buildError: CofferError? {
        if case .failure(let error) = search { return error }
        return nil
    }

    var dependencies: Set<String> { [schema.storedName] }

    /// A link for the entity type `E`.
    static func of<E: Entity>(_ type: E.Type, properties: [Int], text: String) -> TextMatchLink {
        TextMatchLink(schema: E._cofferSchema, properties: properties, text: text) { transaction, store in
            try store.binding(for: E.self, in: transaction)
        }
    }
}

extension Property where Value: StringQueryable {
    /// A full-text search of this `@FullText` property: terms (all must occur), `"a
    /// phrase"`, `pre*`, `OR`, `NOT`/`-term` (set difference, also inside groups),
    /// parentheses, `a NEAR/3 b` and `body:term`, tokenized with the property's tokenizer (so
    /// `matches("Books")` on a `.porter` index finds "book").
    ///
    /// ```swift
    /// let found = try articles.query { Article.body.matches("doctor books") && Article.year > 2000 }.build().find()
    /// let ranked = try articles.query { Article.body.matches("\"is a doctor\" OR doc*") }.build().findRanked()
    /// ```
    ///
    /// A malformed search makes `build()` throw ``CofferError/invalidSearch(search:reason:)``.
    /// On a property without `@FullText` it throws ``CofferError/invalidQuery(entity:property:reason:)``.
    public func matches(_ search: String) -> QueryCondition<E> {
        guard schema.fullText != nil else {
            return QueryCondition(.invalid("\(self) has no @FullText index; matches(_:) searches full-text properties only"))
        }
        return QueryCondition(.link(LinkStep(link: TextMatchLink.of(E.self, properties: [index], text: search))))
    }
}

extension QueryCondition {
    /// A full-text search over every `@FullText` property of the entity as one text (what
    /// Cloudant's `$text` means): a word matches when any of them holds it; a phrase must
    /// occur within one property.
    ///
    /// ```swift
    /// let query = try articles.query { .matchesText("doctor books") && Article.year > 2000 }.build()
    /// ```
    public static func matchesText(_ search: String) -> QueryCondition<E> {
        let properties = E._cofferSchema.properties.indices.filter { E._cofferSchema.properties[$0].fullText != nil }
        guard !properties.isEmpty else {
            return QueryCondition(.invalid("\(E._cofferSchema.name) has no @FullText property; matchesText(_:) needs one"))
        }
        return QueryCondition(.link(LinkStep(link: TextMatchLink.of(E.self, properties: properties, text: search))))
    }
}
