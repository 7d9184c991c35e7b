/// A step of a query that follows a relation: the ids of the objects on the other side that
/// match a condition become a condition of the query's own.
protocol QueryLink: Sendable {
    /// The owner's property the link follows.
    var position: Int { get }
    /// The condition that the query gets from the other side, in this transaction.
    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode
    /// The step in words, for `describe()`.
    var summary: String { get }
    /// The first problem with the other side's condition, for `build()`.
    var invalid: String? { get }
    /// The stored names of the entities whose changes can change what the step resolves
    /// to (the other side, relation owners, and the steps nested in its condition):
    /// observers run the query again when one of them changes.
    var dependencies: Set<String> { get }
    /// The error `build()` throws for an invalid step, when it has a more precise one than
    /// `invalidQuery` with `invalid`'s message.
    var buildError: CofferError? { get }
}

extension QueryLink {
    var buildError: CofferError? { nil }
}
