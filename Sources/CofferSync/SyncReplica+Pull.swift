@_spi(CofferSync) import Coffer
import Foundation

extension SyncReplica {
    /// The most ids one `coffer_fetch` call asks for.
    static let fetchLimit = 1000

    /// Pulls every entity, page by page, from its stored cursor to the server's horizon. Each
    /// page is applied with its cursor in one LMDB transaction, so an interruption anywhere
    /// resumes from the last applied page. Entities fail one by one: one that cannot be
    /// pulled (a page that cannot be applied, a protocol error) is reported in
    /// ``SyncStatus/pullFailures`` and the others are pulled; the first failure is thrown
    /// once all were tried, so the pass counts as failed and is retried.
    /// `skippingBackedOff`: a failed entity whose next attempt is not due is left out (it
    /// stays listed, with when it is tried again), and does not fail the pass.
    func pullEntities(skippingBackedOff: Bool = false) async throws {
        channel.update { $0.phase = .pulling }
        var firstFailure: (any Error)?
        for entity in entityNames {
            try Task.checkCancellation()
            if skippingBackedOff, pullIsBackingOff(entity) { continue }
            do {
                try await pullEntity(entity)
                resetPullBackoff(entity)
                channel.update { status in status.pullFailures.removeAll { $0.entity == entity } }
            } catch {
                if error is CancellationError || Task.isCancelled { throw error }
                recordPullFailure(entity: entity, error: error, retryAt: schedulePullRetry(entity))
                if firstFailure == nil { firstFailure = error }
            }
        }
        let pending = try store.pendingSyncCount()
        channel.update { $0.pending = pending }
        if let firstFailure { throw firstFailure }
    }

    private func recordPullFailure(entity: String, error: any Error, retryAt: Date) {
        channel.update { status in
            if let index = status.pullFailures.firstIndex(where: { $0.entity == entity }) {
                let previous = status.pullFailures[index]
                status.pullFailures[index] = SyncPullFailure(entity: entity, error: error, attempts: previous.attempts + 1,
                                                             since: previous.since, retryAt: retryAt)
            } else {
                status.pullFailures.append(SyncPullFailure(entity: entity, error: error, attempts: 1, since: Date(), retryAt: retryAt))
                let order = entityNames
                status.pullFailures.sort { (order.firstIndex(of: $0.entity) ?? 0) < (order.firstIndex(of: $1.entity) ?? 0) }
            }
        }
    }

    /// Brings one entity to the server's horizon: first the server's state of objects whose
    /// changes it refused, then the pages of each of its subscriptions (the whole table
    /// unless the replica subscribed to scopes, see ``subscribe(_:)``), then, when a page
    /// said rows moved or the subscriptions changed, the comparison of the ids the replica
    /// holds with the scopes' (``reconcile(_:_:)``).
    func pullEntity(_ entity: String) async throws {
        try await fetchRefusedObjects(entity)
        let entries = try subscriptionEntries(of: entity)
        for entry in entries {
            if entry.key.isEmpty {
                try await pullWholeTable(entity)
            } else {
                try await pullScope(entry.subscription, stream: scopeStream(entry.key))
            }
        }
        if try scopeState().reconcile.contains(entity) {
            try await reconcile(entity, entries.map(\.subscription))
        }
    }

    /// Pulls the whole table from its stored cursor. When the server has collected
    /// tombstones past the cursor (CF004) the entity resyncs: the cursor goes back to "0",
    /// every page records the sync ids it brings, and at the end the server's state of each
    /// local object it did not bring (and that has no unacknowledged change) is fetched and
    /// applied, which removes the objects the server no longer has. The resync's marker and
    /// seen ids are stored with the pages, so an interrupted resync resumes.
    private func pullWholeTable(_ entity: String) async throws {
        let stream = transport.stream
        var resyncing = try store.isResyncing(entity: entity, stream: stream)
        let (transport, limit, bytes) = (transport, options.pullPageSize, options.pullPageBytes)
        try await pullPages(entity, stream: stream, request: { cursor in
            PendingCall { try await transport.pull(entity: entity, cursor: cursor, limit: limit, bytes: bytes) }
        }, onResync: {
            try store.beginSyncResync(entity: entity, stream: stream)
            channel.update { $0.resyncs += 1 }
            resyncing = true
        })
        if resyncing {
            let unseen = try store.syncResyncCandidates(entity: entity, stream: stream)
            var pages: [Data] = []
            for start in stride(from: 0, to: unseen.count, by: Self.fetchLimit) {
                let ids = Array(unseen[start..<min(start + Self.fetchLimit, unseen.count)])
                pages += try await fetchPages(entity, ids: ids).map(\.page)
            }
            let summary = try store.finishSyncResync(entity: entity, stream: stream, fetched: pages)
            channel.update { $0.pulled += summary.upserted + summary.deleted }
            reportOversized(summary, entity: entity)
        }
    }

    /// Pulls one scope from its own cursor. When the server has collected tombstones past it
    /// (CF004), the scope is pulled again from "0" and the ids are compared after, which
    /// removes the objects the server no longer has.
    private func pullScope(_ subscription: SyncSubscription, stream: String) async throws {
        let (transport, limit, bytes) = (transport, options.pullPageSize, options.pullPageBytes)
        try await pullPages(subscription.entity, stream: stream, request: { cursor in
            PendingCall { try await transport.pull(subscription: subscription, cursor: cursor, limit: limit, bytes: bytes) }
        }, onResync: {
            channel.update { $0.resyncs += 1 }
            try markForReconciliation(subscription.entity)
        })
    }

    /// Pulls pages of `entity` from the cursor stored under `stream` until the server has no
    /// more, each applied with its cursor in one LMDB transaction, so an interruption
    /// anywhere resumes from the last applied page. A page that says rows moved marks the
    /// entity for comparison before it is applied (a crash between the two then compares
    /// once too often, never once too few). CF004 at a cursor past "0" runs `onResync` and
    /// starts again from "0".
    ///
    /// Pages are pipelined: once a page is parsed its cursor is known, so the next page is
    /// requested before this one is applied, and the server's work overlaps the store's.
    /// Pages are still applied one at a time, in order, each with its cursor; a page that
    /// fails to apply ends the pull and the page fetched ahead is dropped (the next pass asks
    /// for it again from the stored cursor).
    private func pullPages(_ entity: String, stream: String, request: @escaping @Sendable (String) -> PendingCall<Data>,
                           onResync: () throws -> Void) async throws {
        var cursor = try store.syncCursor(entity: entity, stream: stream)
        var ahead: PendingCall<Data>? = request(cursor)
        do {
            while let call = ahead {
                try Task.checkCancellation()
                ahead = nil
                let page: Data
                do {
                    page = try await call.value
                } catch let error as SyncTransportError where error.requiresResync && cursor != "0" {
                    try onResync()
                    cursor = "0"
                    ahead = request(cursor)
                    continue
                }
                let parsed = try store.parsePulledPage(page, entity: entity)
                // The next page goes out now, unless this one ends the pull or is refused below.
                if parsed.more && parsed.cursor != cursor {
                    ahead = request(parsed.cursor)
                }
                if parsed.moved { try markForReconciliation(entity) }
                state.withLock { $0.wakeKeys[Self.wakeKeyIndex(entity, stream: stream)] = parsed.wake }
                let summary = try store.applyPulledPage(parsed, stream: stream)
                channel.update { status in
                    status.pulled += summary.upserted + summary.deleted
                    status.conflicts += summary.conflicts
                }
                reportOversized(summary, entity: entity)
                guard summary.more else { break }
                // A page that says there is more but does not move the cursor would be asked
                // for again and again (and, taken for the end, leave the rest unpulled).
                guard summary.cursor != cursor else {
                    throw SyncTransportError.malformedReply(
                        operation: "pull \(entity)", detail: "the page says there is more but its cursor did not move from \(cursor)")
                }
                cursor = summary.cursor
            }
        } catch {
            await ahead?.drop()
            throw error
        }
    }

    /// Lists the rows a page or a fetch left out as too large in ``SyncStatus/oversizedRows``.
    func reportOversized(_ summary: SyncPullSummary, entity: String) {
        guard !summary.oversized.isEmpty else { return }
        let now = Date()
        let rows = summary.oversized.map { SyncOversizedRow(entity: entity, syncId: $0.syncId, bytes: $0.bytes, seenAt: now) }
        channel.update { status in
            status.oversizedCount += rows.count
            status.oversizedRows = Array((status.oversizedRows + rows).suffix(100))
        }
    }

    /// Fetches and applies the server's state of the objects of `entity` whose changes the
    /// server refused, so the replica holds what the server holds (a refused creation is
    /// removed, refused values are replaced); the refused values stay in
    /// `store.syncRejections()`.
    private func fetchRefusedObjects(_ entity: String) async throws {
        try await fetchAndApply(entity, ids: try store.syncObjectsAwaitingServerState(entity: entity))
    }

    /// Fetches the server's state of `ids` of `entity` (``fetchLimit`` per call) and applies
    /// each answer in a transaction of its own.
    func fetchAndApply(_ entity: String, ids: [UUID]) async throws {
        for start in stride(from: 0, to: ids.count, by: Self.fetchLimit) {
            let some = Array(ids[start..<min(start + Self.fetchLimit, ids.count)])
            for fetched in try await fetchPages(entity, ids: some) {
                let summary = try store.applyFetchedObjects(fetched.page, entity: entity, requested: fetched.ids)
                channel.update { $0.pulled += summary.upserted + summary.deleted }
                reportOversized(summary, entity: entity)
            }
        }
    }

    /// The server's state of `ids` (`coffer_fetch`), as pages with the ids each answers. The
    /// server refusing a fetch of several ids (their rows together past what one reply can
    /// hold: each row fits alone, since a row above the size limit comes as a marker) halves
    /// it, down to single ids, so no set of large rows keeps the replica from ever taking the
    /// server's state; an error on one id, or one that is not the server's, is thrown (the
    /// pass is retried).
    func fetchPages(_ entity: String, ids: [UUID]) async throws -> [(ids: [UUID], page: Data)] {
        try Task.checkCancellation()
        do {
            return [(ids, try await transport.fetch(entity: entity, ids: ids))]
        } catch SyncTransportError.server where ids.count > 1 {
            let half = ids.count / 2
            let first = try await fetchPages(entity, ids: Array(ids[..<half]))
            return try await first + fetchPages(entity, ids: Array(ids[half...]))
        }
    }
}

extension SyncTransportError {
    /// The server collected tombstones past the cursor (SQLSTATE CF004): the entity must be
    /// pulled again from the start.
    var requiresResync: Bool {
        if case .server(_, "CF004", _) = self { return true }
        return false
    }
}
