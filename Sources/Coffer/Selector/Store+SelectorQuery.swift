import Foundation

extension Store {
    /// Runs a Cloudant Query selector on the objects of the entity stored as `entity`, from
    /// the schema catalog alone (no generated code needed), and calls `body` with each match
    /// as a JSON object: `{"id":1,"name":"Ada",...}`, ids included, dates in ISO 8601, data
    /// in base64, nil values left out (as `coffer dump` writes them). What `coffer query` runs.
    ///
    /// ```swift
    /// try store.query(entity: "Person", selector: #"{"age": {"$gte": 18}}"#,
    ///                 sort: [("age", .descending)], limit: 10, fields: ["name", "age"]) { print($0) }
    /// ```
    ///
    /// Same selector language and errors as `Box.query(selector:sort:skip:limit:)`; the
    /// planner uses the stored indexes. `fields` keeps only those stored names (`id` or
    /// `_id` keeps the id); nil or an empty list keeps every field, and a `limit` of 0 means
    /// no limit, as in Cloudant.
    ///
    /// - Throws: ``CofferError/invalidSelector(entity:path:reason:)`` for a bad selector, sort, page or
    ///   field; ``CofferError/unknownEntity(name:path:known:)`` naming the stored entities when
    ///   there is none called `entity`.
    public func query(entity: String, selector: String, sort: [(String, SortDirection)] = [], skip: Int = 0, limit: Int? = nil,
                      fields: [String]? = nil, _ body: (String) throws -> Void) throws {
        try withCatalogQuery(entity: entity, selector: selector, sort: sort, skip: skip, limit: limit) { transaction, stored, binding, executor, limit, _ in
            let byId = Dictionary(stored.properties.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let known = Set(stored.properties.map(\.name) + ["id", "_id"])
            if let unknown = fields?.first(where: { !known.contains($0) }) {
                throw CofferError.invalidSelector(entity: stored.name, path: "fields", reason: "\(stored.name) has no property \(unknown)")
            }
            // An empty list keeps every field (Cloudant's reading), like no list.
            let fieldSet = fields.flatMap { $0.isEmpty ? nil : Set($0) }
            let relations = try relationColumns(of: stored, fields: fieldSet, in: transaction)
            let nesting = EmbeddedNesting(stored)
            for match in try executor.matches(in: transaction, offset: skip, limit: limit) {
                try body(try Self.jsonObject(id: match.id, record: match.record, entity: stored, byId: byId, nesting: nesting, fields: fieldSet,
                                             relations: relations, in: transaction))
            }
        }
    }

    /// How `query(entity:selector:...)` would run: the index or scan it uses and the checks
    /// on records, as `Query.describe()` tells it. What `coffer query --explain` prints.
    ///
    /// ```swift
    /// print(try store.explain(entity: "Person", selector: #"{"name": "Ada"}"#))
    /// ```
    public func explain(entity: String, selector: String, sort: [(String, SortDirection)] = []) throws -> String {
        var text = "\(entity): nothing stored yet; every query is empty"
        try withCatalogQuery(entity: entity, selector: selector, sort: sort, skip: 0, limit: nil) { transaction, _, binding, executor, _, unresolved in
            // Planned on the resolved condition, described with its link and text steps.
            let plan = QueryPlanner.plan(condition: executor.condition, orders: executor.orders, binding: binding, transaction: transaction)
            text = Describe.plan(plan, condition: unresolved, orders: executor.orders, schema: binding.schema)
        }
        return text
    }

    /// The catalog schema of the entity stored as `storedName`, or nil when the catalog has
    /// none (nothing of it stored yet).
    func catalogSchema(storedName: String) throws -> EntitySchema? {
        try performRead { transaction in
            guard let catalog = catalogDatabase,
                  let entity = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(storedName), dbi: catalog, in: transaction) else { return nil }
            return EntitySchema(catalog: entity)
        }
    }

    /// Compiles the selector against the catalog's schema of `entity` and hands an executor
    /// (links resolved in this snapshot) and the limit to apply (nil for none) to `body`;
    /// does nothing when the entity has no table yet.
    private func withCatalogQuery(entity name: String, selector: String, sort: [(String, SortDirection)], skip: Int, limit: Int?,
                                  _ body: (Transaction, CatalogEntity, EntityBinding, QueryExecutor, Int?, ConditionNode?) throws -> Void) throws {
        try openTables()   // tables created since the store opened, by any process
        try performRead { transaction in
            let entities = try catalogDatabase.map { try Catalog.entities(dbi: $0, in: transaction) } ?? []
            guard let stored = entities.first(where: { $0.name == name }) else {
                throw CofferError.unknownEntity(name: name, path: path, known: entities.map(\.name))
            }
            let schema = EntitySchema(catalog: stored)
            let compiler = SelectorCompiler.catalog(schema, entities: entities)
            let document = try compiler.parse(Array(selector.utf8))
            let limit = try compiler.checkPaging(skip: skip, limit: limit)
            let condition = try compiler.condition(document)
            let orders = try compiler.orders(sort)
            guard let binding = try makeCatalogBinding(schema, in: transaction) else { return }
            let resolved = try condition.map { condition in
                condition.hasLinks ? try condition.resolvingLinks { try $0.condition(in: transaction, store: self) } : condition
            }
            try body(transaction, stored, binding, QueryExecutor(binding: binding, condition: resolved, orders: orders), limit, condition)
        }
    }
}
