/// A selector's dotted path through a relation (`"customer.name"`, `"teachers.name"`,
/// `"orders.total"`): the owners related to at least one target matching the rest of the
/// path. Built from catalog schemas, so it needs no Swift type: it runs the target's
/// condition with the executor (the target's indexes apply), then follows the relation's
/// own tables to the owners and becomes an id-list condition.
///
/// How each kind reaches the owners (never a scan of the other entity):
/// - `toOne`: the matching target ids, looked up in the owner's index on the link.
/// - `manyToMany` (the owner's `ToMany`): each matching target's owners from the
///   relation's reverse table.
/// - `manyToManyBacklink` (a `@Backlink` of the target's `ToMany`): each matching target's
///   related ids from the relation's forward table.
/// - `toOneBacklink` (a `@Backlink` of the target's `ToOne`): the link values of the
///   matching target records.
struct CatalogLink: QueryLink {
    enum Kind {
        case toOne(position: Int)
        case manyToMany(position: Int)
        case manyToManyBacklink(relationPosition: Int)
        case toOneBacklink(linkPosition: Int)
    }

    let kind: Kind
    let propertyName: String
    /// The schema of the query's entity (typed or from the catalog).
    let owner: EntitySchema
    let target: EntitySchema
    let targetCondition: ConditionNode?

    /// The link property for a `ToOne`; the id otherwise (the result is a list of owner ids).
    var position: Int {
        if case .toOne(let position) = kind { return position }
        return 0
    }

    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode {
        var ids = Set<Id>()
        if let targetBinding = try store.makeCatalogBinding(target, in: transaction) {
            let resolved = try targetCondition.map { condition in
                condition.hasLinks ? try condition.resolvingLinks { try $0.condition(in: transaction, store: store) } : condition
            }
            let executor = QueryExecutor(binding: targetBinding, condition: resolved, orders: [])
            switch kind {
            case .toOne:
                ids = Set(try executor.ids(in: transaction, offset: 0, limit: nil))
            case .manyToMany(let relationPosition):
                guard let tables = try store.makeCatalogBinding(owner, in: transaction)?.relationTables[relationPosition] else { break }
                for targetId in try executor.ids(in: transaction, offset: 0, limit: nil) {
                    ids.formUnion(try transaction.relatedIds(tables.reverse, of: targetId, owner: tables.owner))
                }
            case .manyToManyBacklink(let relationPosition):
                guard let tables = targetBinding.relationTables[relationPosition] else { break }
                for targetId in try executor.ids(in: transaction, offset: 0, limit: nil) {
                    ids.formUnion(try transaction.relatedIds(tables.forward, of: targetId, owner: tables.owner))
                }
            case .toOneBacklink(let linkPosition):
                let storedId = targetBinding.storedIds[linkPosition]
                guard storedId != 0 else { break }   // the link was never stored
                for match in try executor.matches(in: transaction, offset: 0, limit: nil) {
                    let record = RecordFields(bytes: match.record, entity: target.name, id: match.id)
                    guard let field = try record.field(storedId) else { continue }
                    guard let ownerId = FieldValue.unsigned(field.kind, field.payload) else {
                        throw record.damage("the link \(target.properties[linkPosition].storedName) holds a \(field.kind) value, not an id")
                    }
                    ids.insert(ownerId)
                }
            }
        }
        return .leaf(ConditionLeaf(position: position, op: .inList, values: ids.sorted().map { .unsigned($0) }, caseSensitive: true))
    }

    var summary: String {
        let condition = targetCondition.map { Describe.node($0, schema: target) } ?? "any"
        let how: String
        switch kind {
        case .toOne: how = "its matching ids looked up in the \(propertyName) index"
        case .manyToMany: how = "through the relation's reverse table"
        case .manyToManyBacklink: how = "through the relation's forward table"
        case .toOneBacklink(let linkPosition): how = "their \(target.properties[linkPosition].storedName) ids"
        }
        return "link \(propertyName) -> \(target.name) where \(condition) (\(how))"
    }

    var invalid: String? { targetCondition?.firstInvalid }

    /// Relation rows are recorded as changes of their owner.
    var dependencies: Set<String> {
        Set([target.storedName, owner.storedName]).union(targetCondition?.linkDependencies ?? [])
    }
}
