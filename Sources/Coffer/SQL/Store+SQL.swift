extension Store {
    /// Runs a Smart SQL `SELECT` over the stored entities and returns its rows.
    ///
    /// Tables are entities by their stored names (`Employee`, or SmartStore's `{Employee}`);
    /// columns are properties by their stored names (`salary`, `e.salary`, dotted leaves of
    /// embedded values and document paths, `{Employee:salary}`), with `id`, and
    /// SmartStore's `{Employee:_soup}` (the object as JSON), `{Employee:_soupEntryId}` and
    /// `{Employee:_soupLastModifiedDate}` (the `@UpdatedAt` property in milliseconds). The
    /// statement may join (inner, left, cross; by any equality, or by a `ToOne` link's or a
    /// many-to-many relation's name), filter, group, aggregate (`COUNT`, `SUM`, `AVG`,
    /// `TOTAL`, `MIN`, `MAX`, with `DISTINCT`), sort, page, and search `@FullText`
    /// properties with `MATCH`. Conditions on indexed properties use their index, as queries
    /// do; `EXPLAIN SELECT ...` returns the plan.
    ///
    /// ```swift
    /// let rows = try store.query(sql: """
    ///     SELECT d.name, COUNT(*) AS staff, AVG(e.salary) AS average
    ///     FROM Employee e JOIN Department d ON e.department
    ///     WHERE e.salary > ? GROUP BY d.name ORDER BY staff DESC
    ///     """, parameters: [50_000])
    /// for row in rows { print(row["name"], row["staff"], row["average"]) }
    /// ```
    ///
    /// Values follow SQL: NULL is unknown in comparisons, integer division truncates and an
    /// overflow turns real, `COUNT(x)` skips NULLs; text compares as queries compare it
    /// (Unicode canonical equivalence, case-sensitive; `LIKE` ignores case).
    ///
    /// - Parameters:
    ///   - sql: One `SELECT` (or `EXPLAIN SELECT`) statement.
    ///   - parameters: The values of `?` and `?N`, in order.
    /// - Throws: ``CofferError/invalidSQL(position:near:reason:)`` for a statement that cannot
    ///   run (its syntax, names, types, parameters), naming the position;
    ///   ``CofferError/limitReached(_:)`` when an integer `SUM` overflows;
    ///   ``CofferError/damagedRecord(entity:id:reason:)`` for a record that cannot be read.
    public func query(sql: String, parameters: [SQLValue] = []) throws -> SQLRows {
        try collect(sql, .positional(parameters))
    }

    /// Runs a Smart SQL `SELECT` whose parameters are named (`:name`, `@name`, `$name`).
    ///
    /// ```swift
    /// let rows = try store.query(sql: "SELECT name FROM Employee WHERE city = :city AND salary > :floor",
    ///                            parameters: ["city": "Paris", "floor": 40_000])
    /// ```
    ///
    /// See ``query(sql:parameters:)-(_,[SQLValue])`` for the language.
    public func query(sql: String, parameters: [String: SQLValue]) throws -> SQLRows {
        try collect(sql, .named(parameters))
    }

    /// Runs a Smart SQL `SELECT` and calls `body` with each row as it is made, without
    /// building the whole result: a large result costs one row of memory (unless it is
    /// sorted or grouped, which needs every row first). `body` runs inside the statement's
    /// read transaction and must not write.
    ///
    /// ```swift
    /// try store.forEachRow(sql: "SELECT {Employee:_soup} FROM {Employee}") { row in
    ///     print(row.values[0])
    /// }
    /// ```
    public func forEachRow(sql: String, parameters: [SQLValue] = [], _ body: (SQLRow) throws -> Void) throws {
        try run(sql, .positional(parameters), body)
    }

    /// ``forEachRow(sql:parameters:_:)-(_,[SQLValue],_)`` with named parameters.
    ///
    /// ```swift
    /// try store.forEachRow(sql: "SELECT name FROM Employee WHERE city = :city", parameters: ["city": "Oslo"]) { print($0) }
    /// ```
    public func forEachRow(sql: String, parameters: [String: SQLValue], _ body: (SQLRow) throws -> Void) throws {
        try run(sql, .named(parameters), body)
    }

    /// How a Smart SQL statement would run, in words: for each table, the index, look-ups
    /// or scan that finds its rows and the conditions checked on them, then the grouping,
    /// sorting and paging. What `EXPLAIN SELECT ...` and `coffer sql --explain` give.
    ///
    /// ```swift
    /// print(try store.explain(sql: "SELECT name FROM Employee WHERE city = 'Paris'"))
    /// // Employee: index on city (1 span) for city == "Paris"; ...
    /// ```
    public func explain(sql: String, parameters: [SQLValue] = []) throws -> String {
        try explain(sql, .positional(parameters))
    }

    /// ``explain(sql:parameters:)-(_,[SQLValue])`` with named parameters.
    ///
    /// ```swift
    /// print(try store.explain(sql: "SELECT * FROM Employee WHERE city = :city", parameters: ["city": "Oslo"]))
    /// ```
    public func explain(sql: String, parameters: [String: SQLValue]) throws -> String {
        try explain(sql, .named(parameters))
    }

    private func collect(_ sql: String, _ parameters: SQLParameters) throws -> SQLRows {
        var rows: [SQLRow] = []
        var columns: [String] = []
        try run(sql, parameters, columns: { columns = $0 }) { rows.append($0) }
        return SQLRows(columns: columns, rows: rows)
    }

    private func explain(_ sql: String, _ parameters: SQLParameters) throws -> String {
        var text = ""
        try withSQLPlan(sql, parameters) { plan, _ in text = SQLDescribe.plan(plan) }
        return text
    }

    private func run(_ sql: String, _ parameters: SQLParameters, columns: ([String]) -> Void = { _ in },
                     _ body: (SQLRow) throws -> Void) throws {
        try withSQLPlan(sql, parameters) { plan, transaction in
            if plan.bound.explain {
                columns(["plan"])
                try body(SQLRow(columns: ["plan"], values: [.text(SQLDescribe.plan(plan))]))
                return
            }
            let names = plan.bound.outputNames
            columns(names)
            try SQLExecutor(plan, store: self, transaction: transaction).run { values in
                try body(SQLRow(columns: names, values: values))
            }
        }
    }

    /// Parses, binds and plans a statement in one read transaction and hands the plan to
    /// `body` in it.
    private func withSQLPlan(_ sql: String, _ parameters: SQLParameters, _ body: (SQLPlan, Transaction) throws -> Void) throws {
        let select = try SQLParser.parse(sql)
        try openTables()   // tables created since the store opened, by any process
        try performRead { transaction in
            // A damaged catalog entry fails only the statements that name it.
            var damage: (any Error)?
            var entities: [CatalogEntity] = []
            if let catalog = catalogDatabase {
                do {
                    entities = try Catalog.entities(dbi: catalog, in: transaction)
                } catch {
                    damage = error
                    entities = try Catalog.entities(dbi: catalog, in: transaction, skippingDamaged: true)
                }
            }
            var binder = SQLBinder(statement: sql, entities: entities, parameters: parameters, catalogDamage: damage) { table, properties, text in
                let schema = table.schema
                let link = TextMatchLink(schema: schema, properties: properties, text: text, useStoredNames: true) { transaction, store in
                    try store.makeCatalogBinding(schema, in: transaction)
                }
                guard case .leaf(let leaf) = try link.condition(in: transaction, store: self) else { return [] }
                return leaf.values.compactMap { if case .unsigned(let id) = $0 { return id } else { return nil } }
            }
            let bound = try binder.bind(select)
            try body(try SQLPlan(bound, store: self, transaction: transaction), transaction)
        }
    }
}
