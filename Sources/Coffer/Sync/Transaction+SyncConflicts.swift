import CLMDB
import Foundation

/// Parked conflicts, in `sync.conflicts`: key `entity id (4, big-endian) ‖ sync id (16)`,
/// value the conflict as JSON.
extension Transaction {
    static let syncConflictsName = "sync.conflicts"

    private struct StoredConflict: Codable {
        var entity: String
        var property: String
        var value: String
        var row: String
    }

    private static func conflictKey(entityId: UInt32, syncId: UUID) -> [UInt8] {
        withUnsafeBytes(of: entityId.bigEndian) { Array($0) } + syncId.syncBytes
    }

    /// Parks (or replaces) the conflict of the pulled object `syncId`.
    func parkSyncConflict(_ conflict: SyncConflict, entityId: UInt32) throws {
        let database = try openDatabase(Self.syncConflictsName, create: true, "the sync conflicts").0
        let stored = StoredConflict(entity: conflict.entity, property: conflict.property, value: conflict.value, row: conflict.remoteRow)
        let value = try JSONEncoder().encode(stored)
        try putSyncValue(database, key: Self.conflictKey(entityId: entityId, syncId: conflict.syncId), value: Array(value),
                         "parking the sync conflict of \(conflict.syncId)")
    }

    /// Removes the parked conflict of `syncId`; returns whether there was one.
    @discardableResult
    func dropSyncConflict(entityId: UInt32, syncId: UUID) throws -> Bool {
        guard try databaseExists(Self.syncConflictsName) else { return false }
        let database = try openDatabase(Self.syncConflictsName, create: false, "the sync conflicts").0
        let key = Self.conflictKey(entityId: entityId, syncId: syncId)
        guard try syncValue(database, key: key, "reading the sync conflicts") != nil else { return false }
        try deleteSyncValue(database, key: key, "dropping the sync conflict of \(syncId)")
        return true
    }

    /// Every parked conflict with its entity id, in (entity id, sync id) order.
    func parkedSyncConflicts() throws -> [(entityId: UInt32, conflict: SyncConflict)] {
        guard let database = try existingConflictsDatabase() else { return [] }
        var conflicts: [(UInt32, SyncConflict)] = []
        try withCursor(database, "reading the sync conflicts") { cursor in
            var current = try cursor.first()
            while let entry = current {
                guard entry.key.count == 20, let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.key[4...])) else {
                    throw CofferError.damagedStore(part: .sync, reason: "the sync conflicts hold a key of \(entry.key.count) bytes, not 20")
                }
                let stored: StoredConflict
                do {
                    stored = try JSONDecoder().decode(StoredConflict.self, from: Data(entry.value))
                } catch {
                    throw CofferError.damagedStore(part: .sync, reason: "the sync conflict of \(syncId) cannot be read: \(error)")
                }
                conflicts.append((UInt32(bigEndian: entry.key.loadUnaligned(as: UInt32.self)),
                                  SyncConflict(entity: stored.entity, syncId: syncId, property: stored.property, value: stored.value, remoteRow: stored.row)))
                current = try cursor.next()
            }
        }
        return conflicts
    }

    /// The conflicts database, or nil when none was ever parked (a read transaction sees
    /// the handle `openTables` opened).
    private func existingConflictsDatabase() throws -> MDB_dbi? {
        if let opened = store.storedDatabase(Self.syncConflictsName) { return opened }
        guard isWrite, try databaseExists(Self.syncConflictsName) else { return nil }
        return try openDatabase(Self.syncConflictsName, create: false, "the sync conflicts").0
    }
}
