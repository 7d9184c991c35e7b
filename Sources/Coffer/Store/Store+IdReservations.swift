import CLMDB

extension Store {
    /// The highest id this process handed out for an entity (0 when none).
    func reservedId(for entityId: UInt32) -> Id {
        stateLock.lock(); defer { stateLock.unlock() }
        return reservedIds[entityId] ?? 0
    }

    /// Remembers the ids `transaction` handed out, whatever becomes of it.
    func reserveIds(of transaction: Transaction) {
        guard !transaction.ids.isEmpty else { return }
        stateLock.lock(); defer { stateLock.unlock() }
        for (entity, state) in transaction.ids where state.isDirty && state.lastHandedOut > reservedIds[entity] ?? 0 {
            reservedIds[entity] = state.lastHandedOut
        }
    }
}
