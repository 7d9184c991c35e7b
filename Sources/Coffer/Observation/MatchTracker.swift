/// A query's matches in the query's order, kept up to date from change sets: the state
/// behind `query.results()` and `QueryController`.
///
/// Invariants: `entries` is sorted by `QuerySorter.precedes` (the orderings, then ids
/// ascending, the order `find()` returns) and holds exactly the objects that match in the
/// snapshot of the last `reload` or `apply`; `keysById` holds the sort keys of every entry
/// and nothing else.
///
/// Cost: `apply` re-reads only the changed ids of the query's own entity, re-checks the
/// condition on their records and finds their places by binary search (O(changes x log n)
/// comparisons plus moving array elements). A change of an entity the query's link steps
/// read (or a change set without ids) runs the query again (`reload`), since the resolved
/// link condition may differ.
struct MatchTracker {
    struct Entry {
        let id: Id
        let keys: [QuerySorter.Key]
    }

    /// The query's condition, link steps unresolved.
    let condition: ConditionNode?
    let orders: [QueryOrder]
    /// The stored name of the query's entity.
    let entity: String
    /// The stored names of the entities its link steps read.
    let dependencies: Set<String>

    private(set) var entries: [Entry] = []
    private var keysById: [Id: [QuerySorter.Key]] = [:]
    /// The condition with its link steps resolved in the snapshot of the last reload.
    private var resolved: ConditionNode?
    private var isLoaded = false
    /// How many times the query ran from scratch (tests check that one change does not).
    private(set) var reloads = 0

    init(condition: ConditionNode?, orders: [QueryOrder], entity: String) {
        self.condition = condition
        self.orders = orders
        self.entity = entity
        self.dependencies = condition?.linkDependencies ?? []
    }

    /// Whether a commit's changes can change the matches (commit handlers filter with it).
    static func isAffected(by changes: ChangeSet, entity: String, dependencies: Set<String>) -> Bool {
        guard changes.isComplete else { return true }
        return changes.entities.keys.contains { $0 == entity || dependencies.contains($0) }
    }

    /// Runs the query from scratch in `transaction`'s snapshot.
    mutating func reload(in transaction: Transaction, binding: EntityBinding?, store: Store) throws {
        entries = []
        keysById = [:]
        reloads += 1
        // Loaded only once complete: a reload that throws partway is done again next time.
        // No table yet: nothing matches, and the first change runs the query for real.
        isLoaded = false
        guard let binding else { return }
        resolved = try condition.map { node in
            node.hasLinks ? try node.resolvingLinks { try $0.condition(in: transaction, store: store) } : node
        }
        let matches = try QueryExecutor(binding: binding, condition: resolved, orders: [])
            .matches(in: transaction, offset: 0, limit: nil)
        let sorter = QuerySorter(orders: orders, binding: binding)
        entries.reserveCapacity(matches.count)
        for match in matches {
            let keys = try sorter.keys(id: match.id, fields: RecordFields(bytes: match.record, entity: binding.schema.name, id: match.id))
            entries.append(Entry(id: match.id, keys: keys))
            keysById[match.id] = keys
        }
        if !orders.isEmpty {
            entries.sort { sorter.precedes($0.id, $0.keys, $1.id, $1.keys) }
        }
        isLoaded = true
        checkInvariants(sorter)
    }

    /// Brings the matches up to date with `changes`, read in `transaction` (whose snapshot
    /// holds exactly those changes). Returns the ids whose records were rewritten, or nil
    /// when the query ran again and any record may have changed.
    mutating func apply(_ changes: ChangeSet, in transaction: Transaction, binding: EntityBinding?, store: Store) throws -> Set<Id>? {
        guard isLoaded, changes.isComplete, dependencies.isDisjoint(with: changes.entities.keys), let binding else {
            try reload(in: transaction, binding: binding, store: store)
            return nil
        }
        guard let own = changes.entities[entity], !own.isEmpty else { return [] }
        let sorter = QuerySorter(orders: orders, binding: binding)
        // Everything that can throw (a damaged record, a condition on it) runs before the
        // matches change: a failed apply leaves them as they were, and since its changes
        // were taken, the next one reloads instead of missing them.
        var additions: [Entry] = []
        do {
            let evaluator = try ConditionEvaluator(resolved, binding: binding)
            let name = binding.schema.name
            for id in own.put {
                // Removed again by a later commit coalesced into this set: not stored.
                guard let record = try transaction.record(id, table: binding.table, entity: name) else { continue }
                let fields = RecordFields(bytes: record, entity: name, id: id)
                guard try evaluator.matches(id: id, record: fields) else { continue }
                additions.append(Entry(id: id, keys: try sorter.keys(id: id, fields: fields)))
            }
        } catch {
            isLoaded = false
            throw error
        }
        for id in own.removed.union(own.put) {
            guard let keys = keysById.removeValue(forKey: id) else { continue }
            // The entry sits at its insertion point (keys are exact, ids unique); the linear
            // search is a safety net that the order's totality makes unreachable.
            let position = insertionPoint(id, keys, sorter)
            if position < entries.count, entries[position].id == id {
                entries.remove(at: position)
            } else if let found = entries.firstIndex(where: { $0.id == id }) {
                entries.remove(at: found)
            }
        }
        for entry in additions {
            entries.insert(entry, at: insertionPoint(entry.id, entry.keys, sorter))
            keysById[entry.id] = entry.keys
        }
        checkInvariants(sorter)
        return own.put
    }

    /// Checks the invariants above that concern the tracker's own state, in debug builds
    /// (nothing in release): `entries` in the query's order without repeats, and `keysById`
    /// holding exactly the entries' ids with their keys. Matching itself is what the tests
    /// compare with `find()`.
    func checkInvariants(_ sorter: QuerySorter) {
        #if DEBUG
        assert(entries.count == keysById.count, "keysById holds one entry per match")
        for (index, entry) in entries.enumerated() {
            guard let keys = keysById[entry.id] else {
                assertionFailure("match \(entry.id) has no keys in keysById")
                return
            }
            // Equal keys: neither precedes the other for the same id.
            assert(!sorter.precedes(entry.id, keys, entry.id, entry.keys) && !sorter.precedes(entry.id, entry.keys, entry.id, keys),
                   "keysById holds other keys than the entry of \(entry.id)")
            if index > 0 {
                let previous = entries[index - 1]
                assert(sorter.precedes(previous.id, previous.keys, entry.id, entry.keys),
                       "matches out of the query's order at \(index)")
            }
        }
        #endif
    }

    /// The position of the entry of `id` in `entries`, or nil when it does not match.
    func position(of id: Id, binding: EntityBinding) -> Int? {
        guard let keys = keysById[id] else { return nil }
        let position = insertionPoint(id, keys, QuerySorter(orders: orders, binding: binding))
        if position < entries.count, entries[position].id == id { return position }
        return entries.firstIndex { $0.id == id }
    }

    /// The first position whose entry does not come before (`id`, `keys`).
    private func insertionPoint(_ id: Id, _ keys: [QuerySorter.Key], _ sorter: QuerySorter) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = low + (high - low) / 2
            if sorter.precedes(entries[middle].id, entries[middle].keys, id, keys) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
