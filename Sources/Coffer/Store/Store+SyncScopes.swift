import Foundation

/// Partial replication (for the CofferSync module): the replica's subscriptions and their
/// cursors, the sync ids it holds, and removing objects that left its scope.
extension Store {
    /// The subscription state the replica stored for `stream` (its own JSON), or nil when it
    /// never stored one (every entity is then pulled whole).
    ///
    /// ```swift
    /// let state = try store.syncScopeState(stream: transport.stream)
    /// ```
    @_spi(CofferSync)
    public func syncScopeState(stream: String) throws -> Data? {
        try openTables()
        return try performRead { transaction in
            guard let catalog = catalogDatabase,
                  let bytes = try Catalog.raw(key: Transaction.syncKey("scopes", entity: "", stream: stream), dbi: catalog, in: transaction)
            else { return nil }
            return Data(bytes)
        }
    }

    /// Stores `state` for `stream` and forgets the pull cursors `droppingCursors` (of
    /// subscriptions that ended, so that a later one with the same name starts from the
    /// beginning), in one write transaction.
    ///
    /// ```swift
    /// try store.setSyncScopeState(state, stream: transport.stream, droppingCursors: [(entity: "Message", stream: ended)])
    /// ```
    @_spi(CofferSync)
    public func setSyncScopeState(_ state: Data, stream: String, droppingCursors: [(entity: String, stream: String)] = []) throws {
        try openTables()
        try performWrite { transaction in
            guard let catalog = catalogDatabase else { throw CofferError.readOnly(path: path, operation: "store sync subscriptions") }
            try state.withUnsafeBytes { bytes in
                try Catalog.putRaw(key: Transaction.syncKey("scopes", entity: "", stream: stream), value: bytes, dbi: catalog, in: transaction)
            }
            for cursor in droppingCursors { try transaction.dropSyncCursor(entity: cursor.entity, stream: cursor.stream) }
        }
    }

    /// The sync ids of every local object of `entity` (none before it was first written or
    /// pulled).
    ///
    /// ```swift
    /// let held = Set(try store.syncIds(entity: "Message"))
    /// ```
    @_spi(CofferSync)
    public func syncIds(entity: String) throws -> [UUID] {
        try openTables()
        // A write transaction, as for a resync's candidates: the identity tables may need opening.
        return try performWrite { transaction in
            guard let catalog = catalogDatabase,
                  let stored = try Catalog.entities(dbi: catalog, in: transaction).first(where: { $0.name == entity }) else { return [] }
            guard stored.synced == true else { throw CofferError.misuse(.notSynced(entity: entity)) }
            let names = SyncIdTables.names(entity: stored.id)
            guard try transaction.databaseExists(names.syncIds) else { return [] }
            let tables = try SyncIdTables.listed(entityId: stored.id, entity: entity, in: transaction)
            return try transaction.syncIdentities(in: tables, entity: entity).map(\.syncId)
        }
    }

    /// Removes the objects `syncIds` of `entity` because they left the replica's scope, in
    /// one write transaction, as remote changes (nothing is sent; observers see removals).
    /// The server still has them: links that synced objects hold into them wait as pending
    /// links and are set again when the objects arrive again. An object with unacknowledged
    /// local changes stays until they are acknowledged (counted in `kept`); ids the store
    /// does not hold are skipped.
    ///
    /// ```swift
    /// let result = try store.leaveSyncObjects(gone, entity: "Message")
    /// if result.kept > 0 { /* compare again after the next push */ }
    /// ```
    @_spi(CofferSync)
    @discardableResult
    public func leaveSyncObjects(_ syncIds: [UUID], entity: String) throws -> (left: Int, kept: Int) {
        guard !syncIds.isEmpty else { return (0, 0) }
        let file = try ReplicaIdentity.dataFile(of: path)
        try openTables()
        return try performWrite { transaction in
            let clientId = try transaction.replicaClientId(file: file, renewing: false)
            let wasApplying = transaction.sync.isApplyingRemote
            transaction.sync.isApplyingRemote = true
            defer { transaction.sync.isApplyingRemote = wasApplying }
            var applier = try PulledPageApplier(entity: entity, clientId: clientId, in: transaction)
            var kept = 0
            for syncId in syncIds where try applier.leave(syncId) { kept += 1 }
            return (applier.left, kept)
        }
    }
}
