/// A selector's dotted path through a `ToOne` (`"customer.name"`): the owners whose link
/// points at a target matching the rest of the path. Like `ToOneLink`, but built from the
/// target's catalog schema, so it needs no Swift type: it runs the target's condition with
/// the executor and becomes an id-list condition on the owner's link property (answered
/// from its index when there is one).
struct CatalogToOneLink: QueryLink {
    let position: Int
    let propertyName: String
    let target: EntitySchema
    let targetCondition: ConditionNode?

    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode {
        var ids: [QueryValue] = []
        if let binding = try store.makeCatalogBinding(target, in: transaction) {
            let resolved = try targetCondition.map { condition in
                condition.hasLinks ? try condition.resolvingLinks { try $0.condition(in: transaction, store: store) } : condition
            }
            ids = try QueryExecutor(binding: binding, condition: resolved, orders: []).ids(in: transaction, offset: 0, limit: nil).map { .unsigned($0) }
        }
        return .leaf(ConditionLeaf(position: position, op: .inList, values: ids, caseSensitive: true))
    }

    var summary: String {
        let condition = targetCondition.map { Describe.node($0, schema: target) } ?? "any"
        return "link \(propertyName) -> \(target.name) where \(condition) (its matching ids looked up in the \(propertyName) index)"
    }

    var invalid: String? { targetCondition?.firstInvalid }

    var dependencies: Set<String> {
        Set([target.storedName]).union(targetCondition?.linkDependencies ?? [])
    }
}
