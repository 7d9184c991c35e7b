import Foundation

/// Resyncing an entity (for the CofferSync module): when the server has collected
/// tombstones a replica had not pulled, the replica pulls the entity again from "0" and, at
/// the end, fetches the server's state of every local object the server did not return.
extension Store {
    /// Whether a resync of `entity` from `stream` is under way (begun by
    /// ``beginSyncResync(entity:stream:)``, not yet finished): its pages record the sync ids
    /// they bring.
    ///
    /// ```swift
    /// if try store.isResyncing(entity: "Task", stream: stream) { /* finish it after the last page */ }
    /// ```
    @_spi(CofferSync)
    public func isResyncing(entity: String, stream: String) throws -> Bool {
        if Transaction.current(for: self) == nil, storedDatabase(Transaction.syncResyncName) == nil { try openTables() }
        return try performRead { transaction in
            guard let stored = try catalogDatabase.map({ try Catalog.entities(dbi: $0, in: transaction) })?.first(where: { $0.name == entity })
            else { return false }
            return try transaction.isResyncing(entityId: stored.id, stream: stream)
        }
    }

    /// Starts a resync of `entity` from `stream` (or starts it over), in one write
    /// transaction: the cursor goes back to `"0"`, a marker is stored, and no sync id counts
    /// as seen. Every page ``applyPulledPage(_:entity:stream:)`` applies until
    /// ``finishSyncResync(entity:stream:fetched:)`` records the sync ids it brings, in the
    /// page's transaction. The outbox is untouched.
    ///
    /// ```swift
    /// catch SyncTransportError.server(_, "CF004", _) {   // the server collected tombstones past the cursor
    ///     try store.beginSyncResync(entity: "Task", stream: stream)
    /// }
    /// ```
    @_spi(CofferSync)
    public func beginSyncResync(entity: String, stream: String) throws {
        try openTables()
        try performWrite { transaction in
            let stored = try catalogEntity(named: entity, in: transaction)
            guard stored.synced == true else { throw CofferError.misuse(.notSynced(entity: entity)) }
            try transaction.beginResync(entity: entity, entityId: stored.id, stream: stream)
        }
    }

    /// The sync ids of the local objects of `entity` that the resync has not seen and that
    /// have no unacknowledged local change: fetch the server's state of these
    /// (`coffer_fetch`) and pass it to ``finishSyncResync(entity:stream:fetched:)``.
    ///
    /// ```swift
    /// let unseen = try store.syncResyncCandidates(entity: "Task", stream: stream)
    /// ```
    @_spi(CofferSync)
    public func syncResyncCandidates(entity: String, stream: String) throws -> [UUID] {
        try openTables()
        return try performWrite { transaction in
            let stored = try catalogEntity(named: entity, in: transaction)
            let names = SyncIdTables.names(entity: stored.id)
            guard try transaction.databaseExists(names.syncIds) else { return [] }
            let tables = try SyncIdTables.listed(entityId: stored.id, entity: entity, in: transaction)
            return try transaction.resyncCandidates(entityId: stored.id, tables: tables, stream: stream)
        }
    }

    /// Ends the resync of `entity` from `stream` in one write transaction: applies `fetched`
    /// (pages `coffer_fetch` returned for the candidates) in remote mode, so an object the
    /// server no longer has is removed (no outbox entry) unless it has unacknowledged local
    /// changes by now (those are pushed); then drops the marker and the seen sync ids.
    ///
    /// ```swift
    /// let summary = try store.finishSyncResync(entity: "Task", stream: stream, fetched: pages)
    /// print("\(summary.deleted) objects the server no longer has were removed")
    /// ```
    ///
    /// - Throws: ``CofferError/invalidSyncPage(entity:field:reason:)`` when a page is not the
    ///   format (nothing is applied and the resync stays under way).
    @_spi(CofferSync)
    public func finishSyncResync(entity: String, stream: String, fetched pages: [Data]) throws -> SyncPullSummary {
        let parsed = try pages.map { try PulledPage(parsing: Array($0), entity: entity) }
        let file = try ReplicaIdentity.dataFile(of: path)
        try openTables()
        return try performWrite { transaction in
            let stored = try catalogEntity(named: entity, in: transaction)
            var summary = try transaction.applyFetchedChanges(parsed.flatMap(\.changes), entity: entity, file: file,
                                                              serverClock: parsed.map(\.serverClock).max() ?? 0)
            try transaction.endResync(entityId: stored.id, stream: stream)
            summary.oversized = parsed.flatMap(\.oversized).map { SyncPullSummary.Oversized(syncId: $0.syncId, bytes: $0.bytes) }
            return summary
        }
    }
}
