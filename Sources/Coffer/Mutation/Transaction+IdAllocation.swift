import CLMDB

/// Id allocation.
///
/// Invariants:
/// - An id handed out by any transaction of this process is never handed out again by this
///   process, whether that transaction commits, rolls back or throws: a value that kept a
///   rolled-back id (an object put inside a `store.write` that threw) can never alias a
///   different object. The store remembers the highest id handed out per entity
///   (`SchemaRegistry.reservedIds`), merged after each transaction that is not going to be retried.
/// - A retried transaction (map growth) starts from the same reservations as its first
///   run, so it hands out the same ids.
/// - The catalog's sequence holds the last id handed out by a committed transaction.
///   Explicit ids below ``Transaction/explicitIdCeiling`` raise it (later ids ascend above
///   them); explicit ids at or above it are stored as given and leave it alone, so an
///   explicit `Id.max` cannot exhaust the id space.
/// - An id never collides with a stored object: when the next id is not above the table's
///   last key (an explicit id sits above the sequence), stored ids are skipped.
extension Transaction {
    /// Explicit ids from here up do not move the sequence.
    static let explicitIdCeiling: Id = 1 << 62

    /// Hands out the next id of an entity and whether LMDB may append it (it is above every
    /// stored key). An appended id becomes the table's last key at once: if the put then
    /// fails, later appends are still above every stored key.
    func nextId(for binding: EntityBinding) throws -> (id: Id, append: Bool) {
        // The usual case, in place: the state is known and the next id is above every stored key.
        let quick = ids.update(binding.entityId) { state -> Id? in
            guard state.lastHandedOut < Self.explicitIdCeiling - 1, state.lastHandedOut >= state.lastStored else { return nil }
            state.lastHandedOut += 1
            state.lastStored = state.lastHandedOut
            state.isDirty = true
            return state.lastHandedOut
        }
        if let quick, let id = quick { return (id, true) }
        var state = try idState(for: binding)
        guard state.lastHandedOut < Self.explicitIdCeiling - 1 else {
            throw CofferError.limitReached(.ids(entity: binding.schema.name))
        }
        var candidate = state.lastHandedOut + 1
        var append = candidate > state.lastStored
        if !append {
            candidate = try firstFreeId(from: candidate, binding: binding)
            append = candidate > state.lastStored
        }
        state.lastHandedOut = candidate
        state.isDirty = true
        if append { state.lastStored = candidate }
        ids[binding.entityId] = state
        return (candidate, append)
    }

    /// Records that `id` was stored explicitly, so later ids are handed out above it. Returns
    /// whether `id` is fresh: above every id the entity handed out before (and below the
    /// ceiling), so no object ever had it.
    @discardableResult
    func noteStoredId(_ id: Id, for binding: EntityBinding) throws -> Bool {
        // An update of a stored object (the usual case) changes nothing: no write-back.
        if let known = ids[binding.entityId], id <= known.lastStored, id <= known.lastHandedOut || id >= Self.explicitIdCeiling {
            return false
        }
        var state = try idState(for: binding)
        var isFresh = false
        if id < Self.explicitIdCeiling && id > state.lastHandedOut {
            state.lastHandedOut = id
            state.isDirty = true
            isFresh = true
        }
        if id > state.lastStored { state.lastStored = id }
        ids[binding.entityId] = state
        return isFresh
    }

    /// Makes sure `id` is never handed out as a fresh id (later ids are handed out above it),
    /// without storing anything under it.
    func reserveIds(through id: Id, for binding: EntityBinding) throws {
        _ = try reserveIds(through: id, for: binding, within: .max)
    }

    /// Reserves like `reserveIds(through:for:)` only when `id` is at most `reach` above the
    /// last id handed out; returns whether `id` can never be handed out fresh afterwards
    /// (false: it is further above, and nothing was reserved).
    func reserveIds(through id: Id, for binding: EntityBinding, within reach: Id) throws -> Bool {
        guard id < Self.explicitIdCeiling else { return true }
        var state = try idState(for: binding)
        guard id > state.lastHandedOut else { return true }
        guard id - state.lastHandedOut <= reach else { return false }
        state.lastHandedOut = id
        state.isDirty = true
        ids[binding.entityId] = state
        return true
    }

    /// The entity's state: the catalog's sequence or this process's reservation, whichever
    /// is higher, and the table's last key; read once per transaction.
    private func idState(for binding: EntityBinding) throws -> IdState {
        if let known = ids[binding.entityId] { return known }
        var last: Id = 0
        if let catalog = store.catalogDatabase {
            last = try Catalog.sequence(binding.entityId, dbi: catalog, in: self, entity: binding.schema.name)
        }
        last = max(last, store.registry.reservedId(for: binding.entityId))
        var stored: Id = 0
        try withCursor(binding.table, "reading the last id of \(binding.schema.name)") { cursor in
            if let entry = try cursor.last() {
                guard let id = IdKey(entry.key)?.id else {
                    throw CofferError.damagedStore(part: .table(entity: binding.schema.name), reason: "the last key has \(entry.key.count) bytes, not 8")
                }
                stored = id
            }
        }
        let state = IdState(lastHandedOut: last, lastStored: stored)
        ids[binding.entityId] = state
        return state
    }

    /// The first id from `start` on that no stored object has.
    private func firstFreeId(from start: Id, binding: EntityBinding) throws -> Id {
        var candidate = start
        try withCursor(binding.table, "looking for a free id of \(binding.schema.name)") { cursor in
            var entry = try cursor.seek(IdKey(start))
            while let current = entry, IdKey(current.key)?.id == candidate {
                guard candidate < Self.explicitIdCeiling - 1 else {
                    throw CofferError.limitReached(.ids(entity: binding.schema.name))
                }
                candidate += 1
                entry = try cursor.next()
            }
        }
        return candidate
    }
}
