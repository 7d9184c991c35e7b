import Foundation

/// Changes the server refused: kept for the app, and the objects' server state fetched.
extension Store {
    /// The local changes the server refused, in mid order, each with the refused values and
    /// the server's reason. The replica has taken the server's state of each object (a
    /// refused creation was removed, refused values were replaced); these records are what
    /// the app may want to show or do again. They stay until ``clearSyncRejections(through:)``.
    ///
    /// ```swift
    /// for rejection in try store.syncRejections() {
    ///     print("\(rejection.entity) \(rejection.syncId): \(rejection.reason) — refused \(rejection.values)")
    /// }
    /// ```
    public func syncRejections() throws -> [SyncRejectedChange] {
        if Transaction.current(for: self) == nil, storedDatabase(Transaction.syncRejectionsName) == nil { try openTables() }
        return try performRead { transaction in try transaction.storedSyncRejections() }
    }

    /// Removes the stored rejections through `mid` (all of them by default); returns how
    /// many went. Objects whose server state the replica has not fetched yet still get it.
    ///
    /// ```swift
    /// let shown = try store.syncRejections()
    /// try store.clearSyncRejections(through: shown.last?.mid ?? 0)
    /// ```
    @discardableResult
    public func clearSyncRejections(through mid: UInt64 = .max) throws -> Int {
        try openTables()
        return try performWrite { transaction in try transaction.clearSyncRejections(through: mid) }
    }

    /// Removes the outbox entries through `mid` (the server applied or refused them) and, in
    /// the same write transaction, records each refused change (its values as the change
    /// carried them, the server's reason) and lists its object for a fetch of the server's
    /// state (``syncObjectsAwaitingServerState(entity:)``).
    ///
    /// ```swift
    /// let refused = reply.rejected.compactMap { r in changes.first { $0.mid == r.mid }.map { ($0, r.reason) } }
    /// try store.acknowledgeSyncChanges(through: batch.lastMid, rejected: refused)
    /// ```
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.acknowledgedUntakenSyncChange`) when `mid` is
    ///   above the last entry taken (nothing is written).
    @_spi(CofferSync)
    public func acknowledgeSyncChanges(through mid: UInt64, rejected: [(change: SyncChange, reason: String)]) throws {
        try openTables()
        let now = Date()
        try performWrite { transaction in
            try transaction.acknowledgeSyncChanges(through: mid)
            for (change, reason) in rejected {
                let kind: SyncRejectedChange.Kind = change.operation == .delete ? .deletion : change.isCreation ? .creation : .update
                try transaction.recordSyncRejection(SyncRejectedChange(
                    mid: change.mid, entity: change.entity, syncId: change.syncId, kind: kind,
                    values: Self.jsonObject(change.fields), reason: reason, rejectedAt: now))
            }
        }
    }

    /// The sync ids of `entity`'s objects with a refused change whose server state is not
    /// applied yet: fetch it (`coffer_fetch`) and apply it with
    /// ``applyFetchedObjects(_:entity:requested:)``.
    ///
    /// ```swift
    /// let ids = try store.syncObjectsAwaitingServerState(entity: "Task")
    /// if !ids.isEmpty { try store.applyFetchedObjects(try await transport.fetch(entity: "Task", ids: ids), entity: "Task", requested: ids) }
    /// ```
    @_spi(CofferSync)
    public func syncObjectsAwaitingServerState(entity: String) throws -> [UUID] {
        if Transaction.current(for: self) == nil, storedDatabase(Transaction.syncRejectionsName) == nil { try openTables() }
        return try performRead { transaction in try transaction.syncObjectsAwaitingServerState(entity: entity) }
    }

    /// Applies the server's current state of the objects `ids` of `entity` (a page
    /// `coffer_fetch` returned: an upsert for each object the server has, a delete for each
    /// it does not) in one write transaction, in remote mode, with the rules of pulled
    /// changes; a delete leaves an object with unacknowledged local changes alone (they are
    /// pushed, and the server's answer decides). The pull cursor does not move. The stored
    /// rejections of these objects stop waiting for the server's state.
    ///
    /// ```swift
    /// let page = try await transport.fetch(entity: "Task", ids: rejectedIds)
    /// try store.applyFetchedObjects(page, entity: "Task", requested: rejectedIds)
    /// ```
    ///
    /// - Throws: ``CofferError/invalidSyncPage(entity:field:reason:)`` when the page is not
    ///   the format or answers nothing for one of `ids` (nothing is applied).
    @_spi(CofferSync)
    @discardableResult
    public func applyFetchedObjects(_ page: Data, entity: String, requested ids: [UUID]) throws -> SyncPullSummary {
        let parsed = try PulledPage(parsing: Array(page), entity: entity)
        let answered = Set(parsed.changes.map(\.syncId) + parsed.oversized.map(\.syncId))
        if let missing = ids.first(where: { !answered.contains($0) }) {
            throw CofferError.invalidSyncPage(entity: entity, field: nil, reason: "the server's answer to a fetch has no change of \(missing)")
        }
        let file = try ReplicaIdentity.dataFile(of: path)
        try openTables()
        return try performWrite { transaction in
            var summary = try transaction.applyFetchedChanges(parsed.changes, entity: entity, file: file, serverClock: parsed.serverClock)
            try transaction.markSyncRejectionsResolved(entity: entity, syncIds: Set(ids))
            summary.oversized = parsed.oversized.map { SyncPullSummary.Oversized(syncId: $0.syncId, bytes: $0.bytes) }
            return summary
        }
    }

    /// `{"name": value, ...}` from fields whose values are JSON text already.
    private static func jsonObject(_ fields: [SyncFieldValue]) -> String {
        var json = "{"
        for (index, field) in fields.enumerated() {
            if index > 0 { json += "," }
            json += jsonString(field.name) + ":" + (field.json ?? "null")
        }
        return json + "}"
    }

    /// `text` as a JSON string literal.
    private static func jsonString(_ text: String) -> String {
        var json = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": json += "\\" + String(scalar)
            case _ where scalar.value < 0x20: json += String(format: "\\u%04x", scalar.value)
            default: json.unicodeScalars.append(scalar)
            }
        }
        return json + "\""
    }
}
