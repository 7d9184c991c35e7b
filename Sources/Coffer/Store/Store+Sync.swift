import CLMDB
import Foundation

/// Sync's store-level calls: the outbox count an app may show, and (for the CofferSync
/// module) taking and acknowledging outbox entries and applying remote changes.
extension Store {
    /// How many changes of `@Sync` entities wait in the outbox: recorded, not yet
    /// acknowledged by the server (coalesced: repeated updates of one object before a push
    /// count once). 0 when nothing is synced.
    ///
    /// ```swift
    /// let waiting = try store.pendingSyncCount()
    /// statusLabel.text = waiting == 0 ? "Synced" : "\(waiting) changes to upload"
    /// ```
    public func pendingSyncCount() throws -> Int {
        if Transaction.current(for: self) == nil, storedDatabase(SyncIdTables.outboxName) == nil { try openTables() }
        return try performRead { transaction in
            guard let outbox = try storedDatabase(SyncIdTables.outboxName) ?? openInWrite(SyncIdTables.outboxName, in: transaction) else { return 0 }
            return try transaction.pendingSyncCount(outbox: outbox)
        }
    }

    /// Takes up to `limit` outbox entries, oldest first, with their fields' current values,
    /// in a write transaction that raises the send floor to the last one: later changes of
    /// those objects get new entries instead of merging into entries on their way. Entries
    /// taken before and not acknowledged come again (send them again: the server skips mids
    /// it applied).
    ///
    /// ```swift
    /// let batch = try store.takeSyncChanges(limit: 500)
    /// let reply = try await server.push(batch)
    /// try store.acknowledgeSyncChanges(through: reply.lastMid)
    /// ```
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.syncBatchInsideTransaction`) inside
    ///   `store.read` or `store.write`: the floor must be committed before the entries leave.
    @_spi(CofferSync)
    public func takeSyncChanges(limit: Int) throws -> [SyncChange] {
        try takeSyncChanges(limit: limit, after: 0)
    }

    /// Takes up to `limit` outbox entries above mid `after`, oldest first, as
    /// ``takeSyncChanges(limit:)`` takes them: a pusher takes the next batch while the
    /// previous one is on its way to the server (and not acknowledged yet).
    ///
    /// ```swift
    /// let first = try store.takeSyncChanges(limit: 500)
    /// let sending = Task { try await server.push(first) }
    /// let next = try store.takeSyncChanges(limit: 500, after: first.last?.mid ?? 0)
    /// ```
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.syncBatchInsideTransaction`) inside
    ///   `store.read` or `store.write`.
    @_spi(CofferSync)
    public func takeSyncChanges(limit: Int, after mid: UInt64) throws -> [SyncChange] {
        try takeSyncChanges(limit: limit, after: mid, byteBudget: .max)
    }

    /// Takes outbox entries as ``takeSyncChanges(limit:after:)`` does, stopping after the
    /// change whose ``SyncChange/wireSizeEstimate`` brings the total to `byteBudget` or past
    /// it: at least one change is taken, and the values of changes beyond the budget are not
    /// read (a pusher that cuts its batches by bytes reads each value once).
    ///
    /// ```swift
    /// let batch = try store.takeSyncChanges(limit: 1000, after: 0, byteBudget: 4 << 20)
    /// ```
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.syncBatchInsideTransaction`) inside
    ///   `store.read` or `store.write`.
    @_spi(CofferSync)
    public func takeSyncChanges(limit: Int, after mid: UInt64, byteBudget: Int) throws -> [SyncChange] {
        guard Transaction.current(for: self) == nil else { throw CofferError.misuse(.syncBatchInsideTransaction(path: path)) }
        return try performWrite { transaction in try transaction.takeSyncChanges(limit: limit, after: mid, byteBudget: byteBudget) }
    }

    /// Removes the outbox entries through `mid` (the server applied them).
    ///
    /// ```swift
    /// try store.acknowledgeSyncChanges(through: 42)
    /// ```
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.acknowledgedUntakenSyncChange`) when `mid` is
    ///   above the last entry taken.
    @_spi(CofferSync)
    public func acknowledgeSyncChanges(through mid: UInt64) throws {
        try performWrite { transaction in try transaction.acknowledgeSyncChanges(through: mid) }
    }

    /// Runs `body` in a write transaction (or the calling thread's one) whose writes are
    /// changes that came from the server: they go through the whole write path (indexes,
    /// unique constraints, full text, relations, observation) but record no outbox entry, so
    /// they are not sent back. Objects inserted here get a new sync id unless put with
    /// ``Box/put(_:syncId:)``.
    ///
    /// ```swift
    /// try store.applyRemoteChanges {
    ///     try store.receiveSyncClock(page.highestClock)
    ///     for row in page.rows { var task = row.task; try tasks.put(&task, syncId: row.syncId) }
    /// }
    /// ```
    @_spi(CofferSync)
    public func applyRemoteChanges<T>(_ body: () throws -> T) throws -> T {
        try performWrite { transaction in
            let wasApplying = transaction.sync.isApplyingRemote
            transaction.sync.isApplyingRemote = true
            defer { transaction.sync.isApplyingRemote = wasApplying }
            return try body()
        }
    }

    /// Advances the hybrid clock past `clock`, a value received from another replica, so
    /// that the next local change orders after it.
    ///
    /// ```swift
    /// try store.receiveSyncClock(remoteChange.clock)
    /// ```
    @_spi(CofferSync)
    public func receiveSyncClock(_ clock: UInt64) throws {
        try performWrite { transaction in try transaction.receiveSyncClock(clock) }
    }

    /// The hybrid clock's last value (0 before the first synced change).
    ///
    /// ```swift
    /// let clock = try store.syncClockValue()
    /// ```
    @_spi(CofferSync)
    public func syncClockValue() throws -> UInt64 {
        try performRead { transaction in
            guard let catalog = catalogDatabase,
                  let bytes = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: transaction) else { return 0 }
            return try SyncState(decoding: bytes).clock
        }
    }
}
