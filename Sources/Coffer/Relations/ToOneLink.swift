/// Follows a `ToOne`: owners whose link points at a matching target.
struct ToOneLink<Target: Entity>: QueryLink {
    let position: Int
    let propertyName: String
    let target: ConditionNode?

    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode {
        var ids: [QueryValue] = []
        try store.forEachMatch(of: Target.self, where: target) { match, _ in ids.append(.unsigned(match.id)) }
        return .leaf(ConditionLeaf(position: position, op: .inList, values: ids, caseSensitive: true))
    }

    var summary: String {
        let condition = target.map { Describe.node($0, schema: Target._cofferSchema) } ?? "any"
        return "link \(propertyName) -> \(Target._cofferSchema.name) where \(condition) (its matching ids looked up in the \(propertyName) index)"
    }

    var invalid: String? { target?.firstInvalid }

    var dependencies: Set<String> {
        Set([Target._cofferSchema.storedName]).union(target?.linkDependencies ?? [])
    }
}

extension QueryBuilder {
    /// Keeps the objects whose `ToOne` points at an object matching `condition`.
    ///
    /// ```swift
    /// let joesOrders = try orders.query { Order.date > startOfToday }
    ///     .link(Order.customer) { Customer.name == "Joe" }
    ///     .build()
    /// ```
    public func link<Target: Entity>(_ property: Property<E, ToOne<Target>>, _ condition: () -> QueryCondition<Target>) -> QueryBuilder<E> {
        adding(ToOneLink<Target>(position: property.index, propertyName: property.name, target: condition().node))
    }
}

extension Property {
    /// A condition that holds for the objects whose `ToOne` points at an object matching
    /// `condition`. Unlike the builder's `link(_:_:)`, it combines with other conditions in
    /// any way, `||` and `!` included.
    ///
    /// ```swift
    /// let query = try orders.query {
    ///     Order.total > 100 || Order.customer.linked { Customer.name == "Joe" }
    /// }.build()
    /// ```
    public func linked<Target: Entity>(_ condition: () -> QueryCondition<Target>) -> QueryCondition<E> where Value == ToOne<Target> {
        QueryCondition(.link(LinkStep(link: ToOneLink<Target>(position: index, propertyName: name, target: condition().node))))
    }
}

extension ConditionNode {
    /// The stored names of the entities the tree's link steps read (see
    /// `QueryLink.dependencies`); empty without link steps.
    var linkDependencies: Set<String> {
        switch self {
        case .link(let step): return step.link.dependencies
        case .leaf, .invalid: return []
        case .and(let nodes), .or(let nodes): return nodes.reduce(into: []) { $0.formUnion($1.linkDependencies) }
        case .not(let node): return node.linkDependencies
        }
    }

    /// This condition and `other`, flattened so the planner sees every conjunct.
    func and(_ other: ConditionNode) -> ConditionNode {
        switch (self, other) {
        case (.and(let a), .and(let b)): return .and(a + b)
        case (.and(let a), let b): return .and(a + [b])
        case (let a, .and(let b)): return .and([a] + b)
        default: return .and([self, other])
        }
    }
}

extension Store {
    /// Calls `body` with every object of `E` matching `condition`, in the calling thread's
    /// transaction (the other side of a link step).
    func forEachMatch<E: Entity>(of type: E.Type, where condition: ConditionNode?,
                                 _ body: (Query<E>.Match, EntityBinding) throws -> Void) throws {
        let box = box(for: E.self)
        let query = Query(box: box, condition: condition, orders: [])
        try box.reading(empty: ()) { transaction, binding in
            for match in try query.matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false) {
                try body(match, binding)
            }
        }
    }
}
