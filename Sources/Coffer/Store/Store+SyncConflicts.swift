import Foundation

/// Pulled objects parked because a local object holds one of their unique values.
extension Store {
    /// The pulled objects waiting because a local object holds the same value of a unique
    /// property, in (entity, sync id) order. Each was reported in the `conflicts` count of the
    /// page that brought it; none is dropped.
    ///
    /// ```swift
    /// for conflict in try store.syncConflicts() {
    ///     print("\(conflict.entity).\(conflict.property) = \(conflict.value) is taken by a local object")
    /// }
    /// ```
    public func syncConflicts() throws -> [SyncConflict] {
        if Transaction.current(for: self) == nil, storedDatabase(Transaction.syncConflictsName) == nil { try openTables() }
        return try performRead { transaction in try transaction.parkedSyncConflicts().map(\.conflict) }
    }

    /// Applies the parked conflicts again, in one write transaction (after the app changed
    /// or removed the local objects that held their values); returns how many left the
    /// parked list (applied, or skipped as changes of objects removed here). Those that
    /// still collide stay parked. The rules of pulled changes apply
    /// (read-your-writes, deletes win), so a parked change older than a later local edit
    /// does not overwrite it.
    ///
    /// ```swift
    /// try people.remove(duplicateId)                 // the local object that held the email
    /// let applied = try store.retrySyncConflicts()   // 1: the pulled person is stored now
    /// ```
    ///
    /// - Throws: ``CofferError/invalidSyncPage(entity:field:reason:)`` when a parked change
    ///   no longer fits its entity (nothing is applied).
    @discardableResult
    public func retrySyncConflicts() throws -> Int {
        let file = try ReplicaIdentity.dataFile(of: path)
        try openTables()
        return try performWrite { transaction in
            let parked = try transaction.parkedSyncConflicts()
            guard !parked.isEmpty else { return 0 }
            let clientId = try transaction.replicaClientId(file: file, renewing: false)
            let wasApplying = transaction.sync.isApplyingRemote
            transaction.sync.isApplyingRemote = true
            defer { transaction.sync.isApplyingRemote = wasApplying }
            var appliers: [String: PulledPageApplier] = [:]
            for (_, conflict) in parked {
                var applier = try appliers[conflict.entity] ?? PulledPageApplier(entity: conflict.entity, clientId: clientId, in: transaction)
                try applier.apply(try PulledPage.change(text: conflict.remoteRow, entity: conflict.entity))
                appliers[conflict.entity] = applier
            }
            return parked.count - (try transaction.parkedSyncConflicts().count)
        }
    }
}
