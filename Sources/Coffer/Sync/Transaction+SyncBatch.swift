import CLMDB
import Foundation

/// The pusher's side of the outbox: taking a batch (which raises the send floor, so later
/// changes of those objects get new entries) and acknowledging what the server applied.
extension Transaction {
    /// The first `limit` outbox entries above mid `after` (taken before or not: an
    /// unacknowledged entry is sent again, and the server skips mids it applied), with their
    /// fields' current values; the send floor rises to the last of them. Taking stops after
    /// the change whose ``SyncChange/wireSizeEstimate`` brings the total to `byteBudget` or
    /// past it (so at least one is taken, and values beyond a batch are never read).
    func takeSyncChanges(limit: Int, after: UInt64 = 0, byteBudget: Int = .max) throws -> [SyncChange] {
        guard limit > 0, after < UInt64.max, try databaseExists(SyncIdTables.outboxName), let catalog = store.catalogDatabase else { return [] }
        try prepareSyncState()
        var taken: [(mid: UInt64, entry: OutboxEntry)] = []
        try withCursor(sync.outbox, "reading the sync outbox") { cursor in
            var current = try after == 0 ? cursor.first() : cursor.seek(withUnsafeBytes(of: (after + 1).bigEndian) { Array($0) })
            while let stored = current, taken.count < limit {
                guard stored.key.count == 8 else {
                    throw CofferError.damagedStore(part: .sync, reason: "the outbox holds a key of \(stored.key.count) bytes, not 8")
                }
                let mid = UInt64(bigEndian: stored.key.loadUnaligned(as: UInt64.self))
                taken.append((mid, try OutboxEntry(decoding: stored.value, mid: mid)))
                current = try cursor.next()
            }
        }
        guard !taken.isEmpty else { return [] }
        var reader = SyncChangeReader(catalog: try Catalog.entities(dbi: catalog, in: self))
        var changes: [SyncChange] = []
        changes.reserveCapacity(taken.count)
        var bytes = 0
        for (mid, entry) in taken {
            guard bytes < byteBudget else { break }
            let change = try reader.change(mid: mid, entry: entry, in: self)
            if byteBudget != .max { bytes += change.wireSizeEstimate }
            changes.append(change)
        }
        guard let highest = changes.last?.mid else { return [] }
        // Raising the floor is all taking does: entries at or below it are never merged
        // into, so the objects' next changes get new entries.
        if highest > sync.state.sendFloor {
            guard highest <= sync.state.lastMid else {
                throw CofferError.damagedStore(part: .sync, reason: "the outbox holds the mid \(highest), above the last one handed out (\(sync.state.lastMid))")
            }
            sync.state.sendFloor = highest
            sync.isDirty = true
        }
        return changes
    }

    /// Removes the outbox entries through `mid`, which the server has applied.
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.acknowledgedUntakenSyncChange`) when `mid` is
    ///   above the send floor: no pusher took those entries.
    func acknowledgeSyncChanges(through mid: UInt64) throws {
        guard try databaseExists(SyncIdTables.outboxName) else {
            if mid == 0 { return }
            throw CofferError.misuse(.acknowledgedUntakenSyncChange(mid: mid, sendFloor: 0))
        }
        try prepareSyncState()
        guard mid <= sync.state.sendFloor else {
            throw CofferError.misuse(.acknowledgedUntakenSyncChange(mid: mid, sendFloor: sync.state.sendFloor))
        }
        var acknowledged: [[UInt8]] = []
        try withCursor(sync.outbox, "reading the sync outbox") { cursor in
            var current = try cursor.first()
            while let stored = current, stored.key.count == 8, UInt64(bigEndian: stored.key.loadUnaligned(as: UInt64.self)) <= mid {
                acknowledged.append(Array(stored.key))
                current = try cursor.next()
            }
        }
        for key in acknowledged { try deleteSyncValue(sync.outbox, key: key, "removing an acknowledged outbox entry") }
    }

    /// How many outbox entries wait for a pusher or an acknowledgement.
    func pendingSyncCount(outbox: MDB_dbi) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(txn, outbox, &stat), "counting the sync outbox")
        return Int(stat.ms_entries)
    }
}
