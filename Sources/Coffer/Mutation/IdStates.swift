/// One entity's id allocation in one transaction.
struct IdState {
    /// The highest id handed out (the catalog's sequence, this process's reservation, or
    /// an id handed out by this transaction).
    var lastHandedOut: Id
    /// The table's last key as this transaction sees it (after its own inserts).
    var lastStored: Id
    /// Whether `lastHandedOut` moved in this transaction (the catalog needs writing).
    var isDirty = false
}

/// The `IdState` of each entity a transaction hands out or stores ids for.
///
/// A transaction writes few entities, so a short list searched from the last one used is
/// faster than a dictionary, which hashed the entity id twice on every insert.
struct IdStates: Sequence {
    private var entries: [(entity: UInt32, state: IdState)] = []

    var isEmpty: Bool { entries.isEmpty }

    subscript(entity: UInt32) -> IdState? {
        get {
            for index in entries.indices.reversed() where entries[index].entity == entity { return entries[index].state }
            return nil
        }
        set {
            if let index = entries.lastIndex(where: { $0.entity == entity }) {
                if let newValue { entries[index].state = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((entity, newValue))
            }
        }
    }

    /// Runs `body` on the state of `entity` in place (one search, no copy out and back), or
    /// returns nil when there is none.
    @inline(__always)
    mutating func update<R>(_ entity: UInt32, _ body: (inout IdState) throws -> R) rethrows -> R? {
        for index in entries.indices.reversed() where entries[index].entity == entity {
            return try body(&entries[index].state)
        }
        return nil
    }

    func makeIterator() -> IndexingIterator<[(entity: UInt32, state: IdState)]> {
        entries.makeIterator()
    }

    /// The last id handed out per entity whose state moved in this transaction (what the
    /// store reserves, see `SchemaRegistry.reserve`).
    var handedOut: LazyMapSequence<LazyFilterSequence<[(entity: UInt32, state: IdState)]>, (entity: UInt32, last: Id)> {
        entries.lazy.filter { $0.state.isDirty }.map { (entity: $0.entity, last: $0.state.lastHandedOut) }
    }
}
