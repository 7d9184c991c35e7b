import Foundation

/// Applying pages pulled from a sync server (for the CofferSync module), with the cursor
/// each page ends at.
extension Store {
    /// The cursor to pull `entity` from `stream` with: the one the last applied page stored,
    /// or `"0"` (from the beginning) when none was.
    ///
    /// ```swift
    /// let stream = "postgres://db.example.com:5432/app#coffer"
    /// let page = try await transport.pull(entity: "Task", cursor: try store.syncCursor(entity: "Task", stream: stream), limit: 1000)
    /// ```
    @_spi(CofferSync)
    public func syncCursor(entity: String, stream: String) throws -> String {
        try performRead { transaction in try transaction.syncCursor(entity: entity, stream: stream) ?? "0" }
    }

    /// Applies one page of `entity`'s changes exactly as the server's pull returned it, in
    /// one write transaction: every change goes through the write path as a remote change
    /// (indexes, unique constraints, full text, relations and observers see it; nothing is
    /// recorded in the outbox), the page's cursor is stored for (`stream`, `entity`), and the
    /// hybrid clock moves past the page's highest clock and the server's time (`"clock"`,
    /// when the page gives it). During a resync
    /// (``beginSyncResync(entity:stream:)``) the sync ids of the page's upserts are recorded
    /// in the same transaction. The README's "Applying pulled
    /// changes" gives the rules (read-your-writes, deletes win, links, missing fields).
    ///
    /// ```swift
    /// var cursor = try store.syncCursor(entity: "Task", stream: stream)
    /// while true {
    ///     let page = try await transport.pull(entity: "Task", cursor: cursor, limit: 1000)
    ///     let summary = try store.applyPulledPage(page, entity: "Task", stream: stream)
    ///     cursor = summary.cursor
    ///     if !summary.more { break }
    /// }
    /// ```
    ///
    /// - Throws: ``CofferError/invalidSyncPage(entity:field:reason:)`` when the page is
    ///   malformed or a value does not fit its property (nothing of the page is applied);
    ///   ``CofferError/unknownEntity(name:path:known:)`` when the store has no such entity;
    ///   ``CofferError/misuse(_:)`` (`.notSynced`) when it is not `@Sync`.
    @_spi(CofferSync)
    public func applyPulledPage(_ page: Data, entity: String, stream: String) throws -> SyncPullSummary {
        try applyPulledPage(try parsePulledPage(page, entity: entity), stream: stream)
    }

    /// Parses and checks one page of `entity`'s changes without applying it: its cursor and
    /// whether more follow are then known, so a puller can ask for the next page while this
    /// one is applied (``applyPulledPage(_:stream:)``). Throws what applying would throw for
    /// a malformed page.
    ///
    /// ```swift
    /// let parsed = try store.parsePulledPage(page, entity: "Task")
    /// let next = parsed.more ? Task { try await transport.pull(entity: "Task", cursor: parsed.cursor, limit: 1000) } : nil
    /// let summary = try store.applyPulledPage(parsed, stream: stream)
    /// ```
    ///
    /// - Throws: ``CofferError/invalidSyncPage(entity:field:reason:)`` when the page is malformed.
    @_spi(CofferSync)
    public func parsePulledPage(_ page: Data, entity: String) throws -> SyncParsedPage {
        SyncParsedPage(page: try PulledPage(parsing: Array(page), entity: entity), entity: entity)
    }

    /// Applies a page parsed by ``parsePulledPage(_:entity:)``, as
    /// ``applyPulledPage(_:entity:stream:)`` applies the page's text: in one write
    /// transaction with its cursor.
    ///
    /// ```swift
    /// let summary = try store.applyPulledPage(try store.parsePulledPage(page, entity: "Task"), stream: stream)
    /// ```
    @_spi(CofferSync)
    public func applyPulledPage(_ page: SyncParsedPage, stream: String) throws -> SyncPullSummary {
        let (parsed, entity) = (page.page, page.entity)
        let file = try ReplicaIdentity.dataFile(of: path)
        try openTables()  // tables created since the store opened, by any process
        return try performWrite { transaction in
            let clientId = try transaction.replicaClientId(file: file, renewing: false)
            let wasApplying = transaction.sync.isApplyingRemote
            transaction.sync.isApplyingRemote = true
            defer { transaction.sync.isApplyingRemote = wasApplying }
            // The clock first: a local change made while applying (an app's merge) ticks
            // above every change of the page.
            if parsed.highestClock > 0 || parsed.serverClock > 0 {
                try transaction.receiveSyncClock(parsed.highestClock, serverClock: parsed.serverClock)
            }
            var applier = try PulledPageApplier(entity: entity, clientId: clientId, in: transaction)
            for change in parsed.changes { try applier.apply(change) }
            // A resync under way counts what the server returned, with the page.
            try transaction.recordResyncSeen(parsed.changes.compactMap { $0.operation == .upsert ? $0.syncId : nil },
                                             entityId: applier.binding.entityId, stream: stream)
            try transaction.setSyncCursor(parsed.cursor, entity: entity, stream: stream)
            var summary = SyncPullSummary(upserted: applier.upserted, deleted: applier.deleted, unchanged: applier.unchanged,
                                          skipped: applier.skipped, fieldsKeptLocal: applier.fieldsKeptLocal, conflicts: applier.conflicts,
                                          cursor: parsed.cursor, more: parsed.more)
            summary.oversized = parsed.oversized.map { SyncPullSummary.Oversized(syncId: $0.syncId, bytes: $0.bytes) }
            return summary
        }
    }
}
