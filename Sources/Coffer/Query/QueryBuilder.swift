/// Collects a query's condition and orderings; `build()` makes the reusable ``Query``.
///
/// ```swift
/// let query = try people.query { Person.age > 18 }
///     .ordered(by: Person.lastName)
///     .ordered(by: Person.age, flags: [.descending])
///     .build()
/// ```
public struct QueryBuilder<E: Entity>: Sendable {
    let box: Box<E>
    var condition: ConditionNode?
    var orders: [QueryOrder] = []
    /// The page a selector asked for (see `Query.skip`).
    var skip = 0
    var limit: Int? = nil

    /// Adds an ordering; call again for secondary orders.
    ///
    /// ```swift
    /// people.query().ordered(by: Person.lastName).ordered(by: Person.firstName)
    /// ```
    public func ordered<Value>(by property: Property<E, Value>, flags: OrderFlags = []) -> QueryBuilder<E> {
        var copy = self
        copy.orders.append(QueryOrder(position: property.index, flags: flags))
        return copy
    }

    /// The finished query.
    ///
    /// ```swift
    /// let query = try people.query { Person.age > 18 }.build()
    /// ```
    ///
    /// - Throws: ``CofferError/invalidQuery(entity:property:reason:)`` for a condition that
    ///   cannot run (an alias on a combination, `modulo(0)`), or an alias used twice;
    ///   ``CofferError/invalidSearch(search:reason:)`` for a malformed full-text search.
    public func build() throws -> Query<E> {
        if let error = condition?.firstBuildError { throw error }
        if let message = condition?.firstInvalid {
            throw CofferError.invalidQuery(entity: E._cofferSchema.name, property: nil, reason: message)
        }
        let aliases = (condition?.leaves ?? []).compactMap(\.alias)
        if let repeated = aliases.first(where: { alias in aliases.filter { $0 == alias }.count > 1 }) {
            throw CofferError.invalidQuery(entity: E._cofferSchema.name, property: nil, reason: "the alias \(repeated) names more than one condition")
        }
        return Query(box: box, condition: condition, orders: orders, skip: skip, limit: limit)
    }

    /// Adds a link step to the condition (both must hold).
    func adding(_ link: any QueryLink) -> QueryBuilder<E> {
        var copy = self
        let step = ConditionNode.link(LinkStep(link: link))
        copy.condition = copy.condition.map { $0.and(step) } ?? step
        return copy
    }
}

extension Box {
    /// Starts a query with a condition.
    ///
    /// ```swift
    /// let adults = try people.query { Person.age >= 18 }.build().find()
    /// ```
    public func query(_ condition: () -> QueryCondition<E>) -> QueryBuilder<E> {
        QueryBuilder(box: self, condition: condition().node)
    }

    /// Starts a query that matches every object.
    ///
    /// ```swift
    /// let everyone = try people.query().ordered(by: Person.lastName).build()
    /// ```
    public func query() -> QueryBuilder<E> {
        QueryBuilder(box: self, condition: nil)
    }
}
