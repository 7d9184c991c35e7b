/// The relations pointing at each entity as one transaction's catalog has them, so a bulk
/// removal asks the catalog once per entity, not once per object. Stored inline in
/// `Transaction` and forgotten whenever the transaction changes the schema (a new entity
/// may link to others).
struct IncomingRelationCache {
    private var byTarget: [String: IncomingRelations] = [:]
    /// The last entry asked for: a run of removals skips hashing the name.
    private var last: (target: String, relations: IncomingRelations)?

    /// The relations pointing at the entity stored as `target`, when already known.
    @inline(__always)
    mutating func relations(to target: String) -> IncomingRelations? {
        if let last, last.target == target { return last.relations }
        guard let known = byTarget[target] else { return nil }
        last = (target, known)
        return known
    }

    /// Remembers the relations pointing at `target`.
    mutating func remember(_ relations: IncomingRelations, to target: String) {
        byTarget[target] = relations
        last = (target, relations)
    }

    /// Forgets everything: the transaction's catalog changed.
    mutating func forget() {
        byTarget.removeAll()
        last = nil
    }
}
