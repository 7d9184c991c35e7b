import CLMDB
import Foundation

/// Changes the server refused, in `sync.rejections`: each record under `"r" ‖ mid (8,
/// big-endian)` (the value is the record as JSON), and each object whose server state the
/// replica must still fetch under `"f" ‖ sync id (16) ‖ entity name` (value: one byte). The
/// records stay until the app clears them; an object leaves the fetch list when the
/// server's state of it is applied.
extension Transaction {
    static let syncRejectionsName = "sync.rejections"

    private static let recordTag = UInt8(ascii: "r")
    private static let fetchTag = UInt8(ascii: "f")

    private struct StoredRejection: Codable {
        var entity: String
        var syncId: UUID
        var kind: SyncRejectedChange.Kind
        var values: String
        var reason: String
        var rejectedAt: Double
    }

    private static func recordKey(_ mid: UInt64) -> [UInt8] {
        [recordTag] + withUnsafeBytes(of: mid.bigEndian) { Array($0) }
    }

    private static func fetchKey(entity: String, syncId: UUID) -> [UInt8] {
        [fetchTag] + syncId.syncBytes + Array(entity.utf8)
    }

    /// The rejections table, or nil when nothing was ever rejected (a read transaction sees
    /// the handle `openTables` opened).
    private func existingRejectionsDatabase() throws -> MDB_dbi? {
        if let opened = store.storedDatabase(Self.syncRejectionsName) { return opened }
        guard isWrite, try databaseExists(Self.syncRejectionsName) else { return nil }
        return try openDatabase(Self.syncRejectionsName, create: false, "the sync rejections").0
    }

    /// Records `rejection` and puts its object on the fetch list.
    func recordSyncRejection(_ rejection: SyncRejectedChange) throws {
        let database = try openDatabase(Self.syncRejectionsName, create: true, "the sync rejections").0
        let stored = StoredRejection(entity: rejection.entity, syncId: rejection.syncId, kind: rejection.kind, values: rejection.values,
                                     reason: rejection.reason, rejectedAt: rejection.rejectedAt.timeIntervalSince1970)
        try putSyncValue(database, key: Self.recordKey(rejection.mid), value: Array(try JSONEncoder().encode(stored)),
                         "recording the rejection of change \(rejection.mid)")
        try putSyncValue(database, key: Self.fetchKey(entity: rejection.entity, syncId: rejection.syncId), value: [1],
                         "listing \(rejection.syncId) for a fetch of its server state")
    }

    /// Every stored rejection, in mid order.
    func storedSyncRejections() throws -> [SyncRejectedChange] {
        guard let database = try existingRejectionsDatabase() else { return [] }
        var rejections: [SyncRejectedChange] = []
        try withCursor(database, "reading the sync rejections") { cursor in
            var current = try cursor.seek([Self.recordTag])
            while let entry = current, entry.key.first == Self.recordTag {
                guard entry.key.count == 9 else {
                    throw CofferError.damagedStore(part: .sync, reason: "the sync rejections hold a record key of \(entry.key.count) bytes, not 9")
                }
                let mid = UInt64(bigEndian: entry.key.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
                let stored: StoredRejection
                do {
                    stored = try JSONDecoder().decode(StoredRejection.self, from: Data(entry.value))
                } catch {
                    throw CofferError.damagedStore(part: .sync, reason: "the rejection of change \(mid) cannot be read: \(error)")
                }
                rejections.append(SyncRejectedChange(mid: mid, entity: stored.entity, syncId: stored.syncId, kind: stored.kind,
                                                     values: stored.values, reason: stored.reason,
                                                     rejectedAt: Date(timeIntervalSince1970: stored.rejectedAt)))
                current = try cursor.next()
            }
        }
        return rejections
    }

    /// Removes the records through `mid`; returns how many went. The fetch list is kept.
    func clearSyncRejections(through mid: UInt64) throws -> Int {
        guard let database = try existingRejectionsDatabase() else { return 0 }
        var keys: [[UInt8]] = []
        try withCursor(database, "reading the sync rejections") { cursor in
            var current = try cursor.seek([Self.recordTag])
            while let entry = current, entry.key.first == Self.recordTag, entry.key.count == 9,
                  UInt64(bigEndian: entry.key.loadUnaligned(fromByteOffset: 1, as: UInt64.self)) <= mid {
                keys.append(Array(entry.key))
                current = try cursor.next()
            }
        }
        for key in keys { try deleteSyncValue(database, key: key, "clearing a sync rejection") }
        return keys.count
    }

    /// The sync ids of `entity`'s objects whose server state must still be fetched.
    func syncObjectsAwaitingServerState(entity: String) throws -> [UUID] {
        guard let database = try existingRejectionsDatabase() else { return [] }
        let name = Array(entity.utf8)
        var ids: [UUID] = []
        try withCursor(database, "reading the sync rejections") { cursor in
            var current = try cursor.seek([Self.fetchTag])
            while let entry = current, entry.key.first == Self.fetchTag {
                guard entry.key.count >= 17, let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.key[1..<17])) else {
                    throw CofferError.damagedStore(part: .sync, reason: "the sync rejections hold a fetch key of \(entry.key.count) bytes")
                }
                if entry.key.count == 17 + name.count, entry.key[17...].elementsEqual(name) { ids.append(syncId) }
                current = try cursor.next()
            }
        }
        return ids
    }

    /// Takes `syncIds` of `entity` off the fetch list (their server state was applied).
    func markSyncRejectionsResolved(entity: String, syncIds: Set<UUID>) throws {
        guard !syncIds.isEmpty, let database = try existingRejectionsDatabase() else { return }
        for syncId in syncIds {
            try deleteSyncValue(database, key: Self.fetchKey(entity: entity, syncId: syncId), "taking \(syncId) off the fetch list")
        }
    }
}
