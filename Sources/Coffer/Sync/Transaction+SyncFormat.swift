import CLMDB
import Foundation

/// The format of the sync tables (``SyncState/format``). Format 1 kept the mid of each
/// object's newest untaken entry in a separate map (`sync.pending`, sync id -> mid) and its
/// `syncIds` values held the sync id alone (16 bytes). Format 2 keeps that mid in the
/// `syncIds` value (24 bytes) and has no pending map.
extension Transaction {
    /// Whether the store holds sync tables of format 1: a 24-byte sync state or a pending map.
    func hasLegacySyncTables(catalog: MDB_dbi) throws -> Bool {
        if let state = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: self), state.count == SyncState.legacySize {
            return true
        }
        return try legacyPendingMap() != nil
    }

    /// Converts sync tables of format 1 to format 2 in this write transaction (at open, before
    /// anything else reads them): each `syncIds` value gets the mid the pending map held for
    /// its object (0 when none, or when a pusher took that entry), the pending map is dropped
    /// and the sync state is written with its format. Nothing happens to a store of format 2.
    ///
    /// - Throws: ``CofferError/damagedStore(part:reason:)`` (`.sync`) when format-1 bytes do
    ///   not read: nothing is converted.
    func convertLegacySyncTables(catalog: MDB_dbi) throws {
        let stateBytes = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: self)
        var legacyState: SyncState?
        if let stateBytes, stateBytes.count == SyncState.legacySize { legacyState = try SyncState(decodingLegacy: stateBytes) }
        let pendingMap = try legacyPendingMap()
        guard legacyState != nil || pendingMap != nil else { return }
        let state = try legacyState ?? stateBytes.map(SyncState.init(decoding:)) ?? SyncState()
        var pending: [UUID: UInt64] = [:]
        if let pendingMap {
            try withCursor(pendingMap, "reading the sync pending map") { cursor in
                var current = try cursor.first()
                while let stored = current {
                    guard let syncId = UUID(syncBytes: stored.key), stored.value.count == 8 else {
                        throw CofferError.damagedStore(part: .sync, reason: "the sync pending map holds an entry of \(stored.key.count) + \(stored.value.count) bytes")
                    }
                    pending[syncId] = UInt64(bigEndian: stored.value.loadUnaligned(as: UInt64.self))
                    current = try cursor.next()
                }
            }
        }
        for entity in try Catalog.entities(dbi: catalog, in: self) where entity.synced == true {
            var forward: MDB_dbi = 0
            let rc = mdb_dbi_open(txn, SyncIdTables.names(entity: entity.id).syncIds, 0, &forward)
            if rc == MDB_NOTFOUND { continue }
            try check(rc, "cannot open the sync ids of \(entity.name)")
            var converted: [(key: [UInt8], value: [UInt8])] = []
            try withCursor(forward, "reading the sync ids of \(entity.name)") { cursor in
                var current = try cursor.first()
                while let stored = current {
                    guard IdKey(stored.key) != nil, let syncId = UUID(syncBytes: stored.value) else {
                        throw CofferError.damagedStore(part: .sync, reason: "the format-1 sync id table of \(entity.name) holds an entry of \(stored.key.count) + \(stored.value.count) bytes")
                    }
                    let mid = pending[syncId].flatMap { $0 > state.sendFloor ? $0 : nil } ?? 0
                    converted.append((Array(stored.key), Array(stored.value) + Self.midKey(mid)))
                    current = try cursor.next()
                }
            }
            for row in converted {
                try putSyncValue(forward, key: row.key, value: row.value, "converting the sync ids of \(entity.name)")
            }
        }
        if let pendingMap { try check(mdb_drop(txn, pendingMap, 1), "removing the sync pending map") }
        try state.encoded().withUnsafeBytes { try Catalog.putRaw(key: SyncState.catalogKey, value: $0, dbi: catalog, in: self) }
    }

    /// Raises the catalog's format to ``Catalog/derivedIdsFormatVersion`` when it is below (in
    /// the transaction that records this instance's epoch, and at open for a store that holds
    /// creation runs already), so that builds which would misread derived ids refuse the store.
    func markDerivedIdsFormat(catalog: MDB_dbi) throws {
        guard var meta = try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: self),
              meta.formatVersion < Catalog.derivedIdsFormatVersion else { return }
        meta.formatVersion = Catalog.derivedIdsFormatVersion
        try Catalog.store(meta, key: Catalog.metaKey, dbi: catalog, in: self)
    }

    /// Format 1's pending map, when the store has one.
    private func legacyPendingMap() throws -> MDB_dbi? {
        var database: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, SyncIdTables.legacyPendingName, 0, &database)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "cannot open the sync pending map")
        return database
    }
}
