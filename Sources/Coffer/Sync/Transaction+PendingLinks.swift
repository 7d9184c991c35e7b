import CLMDB
import Foundation

/// Links that arrived before their targets. A pulled `ToOne` (or to-many element) names its
/// target by sync id; when this replica holds no object with that id yet, the owner is
/// stored without the link and the link is remembered here, in `sync.links.pending`, until
/// the transaction that brings the target (a pulled page, or `Box.put(_:syncId:)`) sets it.
///
/// Two kinds of keys:
/// - `0x01 ‖ target sync id (16) ‖ owner entity id (4) ‖ owner id (8) ‖ field id (2)`: found
///   by the target when it arrives (empty value);
/// - `0x02 ‖ owner entity id (4) ‖ owner id (8) ‖ field id (2) ‖ target sync id (16)`: found
///   by the owner's field when a later value replaces the one that waits. Its value is the
///   (clock (8), origin (16, zero for plain SQL)) of the pulled field that parked the link; a
///   local edit of the field at or above it drops the link, as a pulled field loses to a newer
///   local change. An empty value (parked by an earlier build) loses to any local edit.
/// Integers are big-endian.
extension Transaction {
    static let pendingLinksName = "sync.links.pending"
    private static let byTarget: UInt8 = 1
    private static let byOwner: UInt8 = 2

    /// A link waiting for its target.
    struct PendingLink: Equatable {
        let ownerEntityId: UInt32
        let owner: Id
        let field: UInt16
        let target: UUID
    }

    /// The database, or nil when it does not exist and `create` is false (a read transaction
    /// sees the handle `openTables` opened).
    private func pendingLinksDatabase(create: Bool) throws -> MDB_dbi? {
        if let opened = store.storedDatabase(Self.pendingLinksName) { return opened }
        guard isWrite else { return nil }
        if !create, try !databaseExists(Self.pendingLinksName) { return nil }
        return try openDatabase(Self.pendingLinksName, create: true, "the pending sync links").0
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private static func ownerPrefix(entityId: UInt32, owner: Id, field: UInt16) -> [UInt8] {
        var key: [UInt8] = [byOwner]
        append(entityId, to: &key)
        append(owner, to: &key)
        append(field, to: &key)
        return key
    }

    private static func targetKey(_ link: PendingLink) -> [UInt8] {
        var key: [UInt8] = [byTarget] + link.target.syncBytes
        append(link.ownerEntityId, to: &key)
        append(link.owner, to: &key)
        append(link.field, to: &key)
        return key
    }

    /// Remembers that `link`'s owner field waits for its target, as pulled at (`clock`, `origin`).
    func addPendingLink(_ link: PendingLink, clock: UInt64, origin: UUID) throws {
        guard let database = try pendingLinksDatabase(create: true) else { return }
        sync.storeHasPendingLinks = true
        var value: [UInt8] = []
        Self.append(clock, to: &value)
        value += origin.syncBytes
        try putSyncValue(database, key: Self.targetKey(link), value: [], "remembering a link to \(link.target)")
        try putSyncValue(database, key: Self.ownerPrefix(entityId: link.ownerEntityId, owner: link.owner, field: link.field) + link.target.syncBytes,
                         value: value, "remembering a link to \(link.target)")
    }

    /// After a local write of `owner` changed the fields in `sync.changedFields`: drops the
    /// links its relation fields wait for when the edit is at or above the pulled
    /// (clock, origin) that parked them (a pulled field loses to a newer local change the
    /// same way). The edit is then what the server gets, and setting the link when its
    /// target arrives would overwrite it here only, with nothing sent.
    func dropPendingLinksSupersededByLocalEdit(of owner: Id, binding: EntityBinding) throws {
        if sync.storeHasPendingLinks == nil {
            sync.storeHasPendingLinks = try store.storedDatabase(Self.pendingLinksName) != nil || databaseExists(Self.pendingLinksName)
        }
        guard sync.storeHasPendingLinks == true else { return }
        for field in binding.linkFieldIds where sync.changedFields.contains(field) {
            try dropPendingLinks(ownerEntityId: binding.entityId, owner: owner, field: field, editedAt: try syncTick())
        }
    }

    /// Whether a local edit at `clock` supersedes a link parked with `value` (its stamp).
    private func localEdit(at clock: UInt64, supersedes value: UnsafeRawBufferPointer) throws -> Bool {
        guard !value.isEmpty else { return true }
        guard value.count == 24, let origin = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: value[8...])) else {
            throw CofferError.damagedStore(part: .sync, reason: "a pending sync link holds a stamp of \(value.count) bytes, not 24")
        }
        let parkedClock = UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))
        if clock != parkedClock { return clock > parkedClock }
        // The same clock: ordered by origin as the server orders uuid values, by their bytes.
        guard let client = try storedReplicaIdentity()?.clientId else { return false }
        return !client.syncBytes.lexicographicallyPrecedes(origin.syncBytes)
    }

    /// Forgets the links the owner's field waits for (a later value replaced them); with
    /// `editedAt`, only those a local edit at that clock supersedes.
    func dropPendingLinks(ownerEntityId: UInt32, owner: Id, field: UInt16, editedAt clock: UInt64? = nil) throws {
        guard let database = try pendingLinksDatabase(create: false) else { return }
        let prefix = Self.ownerPrefix(entityId: ownerEntityId, owner: owner, field: field)
        var links: [PendingLink] = []
        try withCursor(database, "reading the pending sync links") { cursor in
            var current = try cursor.seek(prefix)
            while let entry = current, entry.key.starts(with: prefix) {
                guard entry.key.count == prefix.count + 16, let target = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.key[prefix.count...])) else {
                    throw CofferError.damagedStore(part: .sync, reason: "the pending sync links hold a key of \(entry.key.count) bytes")
                }
                if try clock.map({ try localEdit(at: $0, supersedes: entry.value) }) ?? true {
                    links.append(PendingLink(ownerEntityId: ownerEntityId, owner: owner, field: field, target: target))
                }
                current = try cursor.next()
            }
        }
        for link in links { try removePendingLink(link, in: database) }
    }

    /// The targets the owner's field waits for (to-many elements pulled before they arrived).
    func pendingTargets(ownerEntityId: UInt32, owner: Id, field: UInt16) throws -> [UUID] {
        guard let database = try pendingLinksDatabase(create: false) else { return [] }
        let prefix = Self.ownerPrefix(entityId: ownerEntityId, owner: owner, field: field)
        var targets: [UUID] = []
        try withCursor(database, "reading the pending sync links") { cursor in
            var current = try cursor.seek(prefix)
            while let entry = current, entry.key.starts(with: prefix) {
                guard entry.key.count == prefix.count + 16, let target = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.key[prefix.count...])) else {
                    throw CofferError.damagedStore(part: .sync, reason: "the pending sync links hold a key of \(entry.key.count) bytes")
                }
                targets.append(target)
                current = try cursor.next()
            }
        }
        return targets
    }

    /// Takes (removes and returns) the links that wait for `target`.
    func takePendingLinks(to target: UUID) throws -> [PendingLink] {
        guard let database = try pendingLinksDatabase(create: false) else { return [] }
        let prefix = [Self.byTarget] + target.syncBytes
        var links: [PendingLink] = []
        try withCursor(database, "reading the pending sync links") { cursor in
            var current = try cursor.seek(prefix)
            while let entry = current, entry.key.starts(with: prefix) {
                guard entry.key.count == prefix.count + 14 else {
                    throw CofferError.damagedStore(part: .sync, reason: "the pending sync links hold a key of \(entry.key.count) bytes")
                }
                let rest = UnsafeRawBufferPointer(rebasing: entry.key[prefix.count...])
                links.append(PendingLink(ownerEntityId: UInt32(bigEndian: rest.loadUnaligned(as: UInt32.self)),
                                         owner: UInt64(bigEndian: rest.loadUnaligned(fromByteOffset: 4, as: UInt64.self)),
                                         field: UInt16(bigEndian: rest.loadUnaligned(fromByteOffset: 12, as: UInt16.self)),
                                         target: target))
                current = try cursor.next()
            }
        }
        for link in links { try removePendingLink(link, in: database) }
        return links
    }

    /// Every link waiting for a target, in target order (for tests and `verify`).
    func allPendingLinks() throws -> [PendingLink] {
        guard let database = try pendingLinksDatabase(create: false) else { return [] }
        var links: [PendingLink] = []
        try withCursor(database, "reading the pending sync links") { cursor in
            var current = try cursor.first()
            while let entry = current, entry.key.first == Self.byTarget {
                guard entry.key.count == 31, let target = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.key[1..<17])) else {
                    throw CofferError.damagedStore(part: .sync, reason: "the pending sync links hold a key of \(entry.key.count) bytes")
                }
                let rest = UnsafeRawBufferPointer(rebasing: entry.key[17...])
                links.append(PendingLink(ownerEntityId: UInt32(bigEndian: rest.loadUnaligned(as: UInt32.self)),
                                         owner: UInt64(bigEndian: rest.loadUnaligned(fromByteOffset: 4, as: UInt64.self)),
                                         field: UInt16(bigEndian: rest.loadUnaligned(fromByteOffset: 12, as: UInt16.self)),
                                         target: target))
                current = try cursor.next()
            }
        }
        return links
    }

    private func removePendingLink(_ link: PendingLink, in database: MDB_dbi) throws {
        try deleteSyncValue(database, key: Self.targetKey(link), "forgetting a link to \(link.target)")
        try deleteSyncValue(database, key: Self.ownerPrefix(entityId: link.ownerEntityId, owner: link.owner, field: link.field) + link.target.syncBytes,
                            "forgetting a link to \(link.target)")
    }
}
