import CLMDB
import Foundation

/// A resync of one entity from one stream (the server collected tombstones this replica had
/// not pulled), in `sync.resync`: its marker under `stream hash (8) ‖ entity id (4,
/// big-endian)` (the value is the entity's name), and the sync ids the server returned since
/// it began under the marker's key followed by the sync id (16). Both are written in the
/// transactions that apply the pages, so a resync interrupted anywhere resumes where it was.
extension Transaction {
    static let syncResyncName = "sync.resync"

    /// FNV-1a of the stream (stable across runs and builds), then the entity id.
    private static func resyncMarkerKey(entityId: UInt32, stream: String) -> [UInt8] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in stream.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return withUnsafeBytes(of: hash.bigEndian) { Array($0) } + withUnsafeBytes(of: entityId.bigEndian) { Array($0) }
    }

    /// The resync table, or nil when no resync ever began (a read transaction sees the handle
    /// `openTables` opened).
    private func existingResyncDatabase() throws -> MDB_dbi? {
        if let opened = store.storedDatabase(Self.syncResyncName) { return opened }
        guard isWrite, try databaseExists(Self.syncResyncName) else { return nil }
        return try openDatabase(Self.syncResyncName, create: false, "the sync resyncs").0
    }

    /// Whether a resync of (stream, entity) is under way.
    func isResyncing(entityId: UInt32, stream: String) throws -> Bool {
        guard let database = try existingResyncDatabase() else { return false }
        return try syncValue(database, key: Self.resyncMarkerKey(entityId: entityId, stream: stream), "reading the sync resyncs") != nil
    }

    /// Starts (or starts over) a resync: the marker, no sync id seen, the cursor back to "0".
    func beginResync(entity: String, entityId: UInt32, stream: String) throws {
        let database = try openDatabase(Self.syncResyncName, create: true, "the sync resyncs").0
        try dropResyncKeys(database, entityId: entityId, stream: stream)
        try putSyncValue(database, key: Self.resyncMarkerKey(entityId: entityId, stream: stream), value: Array(entity.utf8),
                         "marking the resync of \(entity)")
        try setSyncCursor("0", entity: entity, stream: stream)
    }

    /// Ends the resync: the marker and the seen sync ids go.
    func endResync(entityId: UInt32, stream: String) throws {
        guard let database = try existingResyncDatabase() else { return }
        try dropResyncKeys(database, entityId: entityId, stream: stream)
    }

    /// Records, when a resync of (stream, entity) is under way, that the server returned the
    /// objects `syncIds`.
    func recordResyncSeen(_ syncIds: [UUID], entityId: UInt32, stream: String) throws {
        guard !syncIds.isEmpty, let database = try existingResyncDatabase() else { return }
        let marker = Self.resyncMarkerKey(entityId: entityId, stream: stream)
        guard try syncValue(database, key: marker, "reading the sync resyncs") != nil else { return }
        for syncId in syncIds {
            try putSyncValue(database, key: marker + syncId.syncBytes, value: [1], "recording \(syncId) as seen by the resync")
        }
    }

    /// The sync ids the resync of (stream, entity) has seen so far.
    func resyncSeen(entityId: UInt32, stream: String) throws -> Set<UUID> {
        guard let database = try existingResyncDatabase() else { return [] }
        let marker = Self.resyncMarkerKey(entityId: entityId, stream: stream)
        var seen = Set<UUID>()
        try withCursor(database, "reading the sync ids seen by a resync") { cursor in
            var current = try cursor.seek(marker)
            while let entry = current, entry.key.starts(with: marker) {
                if entry.key.count != marker.count {
                    guard entry.key.count == marker.count + 16,
                          let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.key[marker.count...])) else {
                        throw CofferError.damagedStore(part: .sync, reason: "the sync resyncs hold a key of \(entry.key.count) bytes, not \(marker.count + 16)")
                    }
                    seen.insert(syncId)
                }
                current = try cursor.next()
            }
        }
        return seen
    }

    /// Removes the marker of (stream, entity) and every sync id seen under it.
    private func dropResyncKeys(_ database: MDB_dbi, entityId: UInt32, stream: String) throws {
        let marker = Self.resyncMarkerKey(entityId: entityId, stream: stream)
        var keys: [[UInt8]] = []
        try withCursor(database, "reading the sync resyncs") { cursor in
            var current = try cursor.seek(marker)
            while let entry = current, entry.key.starts(with: marker) {
                keys.append(Array(entry.key))
                current = try cursor.next()
            }
        }
        for key in keys { try deleteSyncValue(database, key: key, "ending a resync") }
    }

    /// The sync ids of the local objects of `entityId` the resync has not seen and that have
    /// no unacknowledged local change: the server may have deleted them (and collected the
    /// tombstones), so their state is fetched before the resync ends.
    func resyncCandidates(entityId: UInt32, tables: SyncIdTables, stream: String) throws -> [UUID] {
        let seen = try resyncSeen(entityId: entityId, stream: stream)
        let local = try unacknowledgedChanges(entityId: entityId)
        var candidates: [UUID] = []
        for object in try syncIdentities(in: tables, entity: "entity \(entityId)") where !seen.contains(object.syncId) && local[object.syncId] == nil {
            candidates.append(object.syncId)
        }
        return candidates
    }
}
