import Foundation

/// What a built query remembers of its plan so that a parameterised look-up (`setParameter`
/// then `findFirst`, in a loop) does not plan again: for a condition that is one equality on
/// an indexed property, the index the planner chose. A run then only encodes the current
/// value's key.
///
/// Invariants: the memo is only used with the binding it was made with (a catalog change
/// makes a new binding) and in snapshots that can use the index (an index built later is
/// not used by older snapshots, as in `QueryPlanner.usableIndex`). Setting a parameter
/// changes values only, never the position or the operator the memo was made for, but both
/// are checked anyway. Copies of a query share the memo; it is guarded by a lock.
final class QueryPlanMemo: @unchecked Sendable {
    /// What the memo remembers: the look-up's index and how its keys are encoded. A class:
    /// taking the remembered entry under the lock is one retain, not one per field.
    final class Entry: Sendable {
        let binding: EntityBinding
        let position: Int
        let index: IndexBinding
        let type: PropertyType
        /// Whether the planner found the look-up exact (`QueryPlanner.isExact`) ...
        let isExact: Bool
        /// ... as long as the key is not cut (string keys), which is checked per run.
        let isStringKey: Bool

        init(binding: EntityBinding, position: Int, index: IndexBinding, type: PropertyType, isExact: Bool, isStringKey: Bool) {
            self.binding = binding
            self.position = position
            self.index = index
            self.type = type
            self.isExact = isExact
            self.isStringKey = isStringKey
        }
    }

    private let lock = NSLock()
    private var entry: Entry?

    /// A remembered look-up: the index, the key of the leaf's current value, and whether the
    /// index alone answers it.
    struct LookUp {
        let index: IndexBinding
        let key: [UInt8]
        let isExact: Bool

        /// The same look-up as a plan, for runs that need one (a page, an order, a check).
        var plan: QueryPlan {
            var plan = QueryPlan(source: .index(index, [.prefix(key, exact: true)]), leaf: nil, score: 1)
            plan.isExact = isExact
            return plan
        }
    }

    /// The remembered look-up for `condition` when the memo holds one that applies, else nil
    /// (`plan` then plans, and remembers). `QueryExecutor.first` seeks with it directly: no
    /// plan, span list or match list is built per look-up.
    func lookUp(condition: ConditionNode?, binding: EntityBinding, transaction: Transaction) -> LookUp? {
        guard case .leaf(let leaf)? = condition, case .compare(.equal) = leaf.op, leaf.path.isEmpty, leaf.values.count == 1 else {
            return nil
        }
        return lookUp(position: leaf.position, value: leaf.values[0], binding: binding, transaction: transaction)
    }

    /// The remembered look-up for an equality of the property at `position` with `value`
    /// (the condition's only leaf), else nil.
    func lookUp(position: Int, value: QueryValue, binding: EntityBinding, transaction: Transaction) -> LookUp? {
        // A floating-point zero is two keys (see `QueryPlanner`): planned afresh.
        guard let known = remembered(position: position, binding: binding, transaction: transaction),
              !IndexKey.isZero(value, type: known.type),
              let key = IndexKey.encode(value, type: known.type) else { return nil }
        return LookUp(index: known.index, key: key,
                      isExact: known.isExact && !(known.isStringKey && IndexKey.isTruncatedString(key[...])))
    }

    /// The remembered look-up of an equality on the property at `position`, when there is
    /// one for `binding` that `transaction`'s snapshot can use; the caller encodes the key
    /// (`QueryExecutor.first` into the transaction's reusable key).
    func remembered(position: Int, binding: EntityBinding, transaction: Transaction) -> Entry? {
        lock.lock()
        let known = entry
        lock.unlock()
        guard let known, known.binding === binding, known.position == position,
              transaction.snapshotId >= known.index.createdInTransaction else { return nil }
        return known
    }

    /// The plan for `condition`, from the memo when it applies, else from the planner (and
    /// remembered when it is an index look-up of one value).
    func plan(condition: ConditionNode?, orders: [QueryOrder], binding: EntityBinding, transaction: Transaction) -> QueryPlan {
        if let remembered = lookUp(condition: condition, binding: binding, transaction: transaction) {
            return remembered.plan
        }
        guard case .leaf(let leaf)? = condition, case .compare(.equal) = leaf.op, leaf.path.isEmpty, leaf.values.count == 1 else {
            return QueryPlanner.plan(condition: condition, orders: orders, binding: binding, transaction: transaction)
        }
        let plan = QueryPlanner.plan(condition: condition, orders: orders, binding: binding, transaction: transaction)
        if case .index(let index, let spans) = plan.source, !index.isElementIndex, spans.count == 1, spans[0].isWholeValue {
            // Exactness without the cut check: the same for every value of this leaf.
            let isStringKey = index.property.type.indexKeyFamily == .string
            let exact = isStringKey ? leaf.caseSensitive : QueryPlanner.isExact(plan.source, for: leaf, binding: binding)
            let remembered = Entry(binding: binding, position: leaf.position, index: index,
                                   type: binding.schema.properties[leaf.position].type,
                                   isExact: exact, isStringKey: isStringKey)
            lock.lock()
            entry = remembered
            lock.unlock()
        }
        return plan
    }
}
