import CLMDB
import Foundation

/// The outbox and its coalescing, in the transaction of the change:
///
/// - `sync.pending` maps a sync id to the mid of that object's newest entry no pusher has
///   taken. A later change of the object merges into that entry (union of the fields, each
///   at its latest clock); a delete after an untaken creation drops the entry (the server
///   never saw the object); a delete after an untaken update turns it into the delete.
/// - An entry at or below the send floor (taken by a pusher, perhaps on its way) is never
///   changed: a later change gets a new entry with the next mid.
extension Transaction {
    /// Loads the sync counters and opens the outbox databases, once per transaction.
    func prepareSyncState() throws {
        guard sync.state == nil else { return }
        guard let catalog = store.catalogDatabase else {
            throw CofferError.readOnly(path: store.path, operation: "record a synced change")
        }
        let loaded = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: self).map(SyncState.init(decoding:)) ?? SyncState()
        sync.outbox = try openDatabase(SyncIdTables.outboxName, create: true, "the sync outbox").0
        sync.pending = try openDatabase(SyncIdTables.pendingName, create: true, "the sync pending map").0
        sync.storeHasOutbox = true
        sync.state = loaded
    }

    /// The transaction's clock value: the first call ticks the persisted clock (one tick per
    /// transaction), later ones return the same value.
    func syncTick() throws -> UInt64 {
        if let tick = sync.tick { return tick }
        try prepareSyncState()
        guard var state = sync.state else { return 0 }
        state.clock = try HybridClock.tick(after: state.clock, now: store.syncClock.now())
        sync.state = state
        sync.isDirty = true
        sync.tick = state.clock
        return state.clock
    }

    /// Advances the clock past a value received from another replica (a pulled change).
    func receiveSyncClock(_ remote: UInt64) throws {
        try prepareSyncState()
        guard var state = sync.state else { return }
        state.clock = try HybridClock.receive(remote, after: state.clock, now: store.syncClock.now())
        sync.state = state
        sync.isDirty = true
        // A tick taken earlier in this transaction stays: its changes happened before.
    }

    /// Records one change of an object: merged into its untaken entry, or a new entry.
    func enqueue(_ operation: OutboxEntry.Operation, isCreation: Bool, entityId: UInt32, syncId: UUID, fields: [UInt16]) throws {
        let clock = try syncTick()
        guard var state = sync.state else { return }
        let key = syncId.syncBytes
        if let mid = try pendingMid(key), mid > state.sendFloor {
            guard var entry = try outboxEntry(mid) else {
                throw CofferError.damagedStore(part: .sync, reason: "the pending map names the outbox entry \(mid), which is not stored")
            }
            guard entry.syncId == syncId, entry.operation == .upsert else {
                throw CofferError.damagedStore(part: .sync, reason: "the pending map names the outbox entry \(mid), which is not an update of \(syncId)")
            }
            switch operation {
            case .delete where entry.isCreation:
                try deleteSyncValue(sync.outbox, key: Self.midKey(mid), "dropping the outbox entry \(mid)")
                try deleteSyncValue(sync.pending, key: key, "updating the sync pending map")
            case .delete:
                entry = OutboxEntry(operation: .delete, isCreation: false, entityId: entityId, syncId: syncId, clock: clock, fields: [])
                try putSyncValue(sync.outbox, key: Self.midKey(mid), value: entry.encoded(), "writing the outbox entry \(mid)")
                try deleteSyncValue(sync.pending, key: key, "updating the sync pending map")
            case .upsert:
                entry.merge(fields: fields, clock: clock)
                try putSyncValue(sync.outbox, key: Self.midKey(mid), value: entry.encoded(), "writing the outbox entry \(mid)")
            }
            return
        }
        guard state.lastMid < UInt64.max else {
            throw CofferError.damagedStore(part: .sync, reason: "the outbox's mutation ids are exhausted")
        }
        state.lastMid += 1
        sync.state = state
        sync.isDirty = true
        let entry = OutboxEntry(operation: operation, isCreation: isCreation, entityId: entityId, syncId: syncId, clock: clock,
                                fields: fields.sorted().map { (id: $0, clock: clock) })
        // A new mid never replaces a stored entry: one that is there means the counter went
        // back (lost sync state), and reusing a mid the server may have applied loses changes.
        let stored = try putSyncValue(sync.outbox, key: Self.midKey(state.lastMid), value: entry.encoded(), flags: UInt32(MDB_NOOVERWRITE),
                                      "writing the outbox entry \(state.lastMid)")
        guard stored else {
            throw CofferError.damagedStore(part: .sync, reason: "the outbox already holds mid \(state.lastMid): the sync state's counter is behind its entries")
        }
        if operation == .upsert {
            try putSyncValue(sync.pending, key: key, value: Self.midKey(state.lastMid), "updating the sync pending map")
        } else {
            try deleteSyncValue(sync.pending, key: key, "updating the sync pending map")
        }
    }

    /// The mid of the untaken entry of the object with these sync id bytes, if any.
    func pendingMid(_ syncIdBytes: [UInt8]) throws -> UInt64? {
        guard let bytes = try syncValue(sync.pending, key: syncIdBytes, "reading the sync pending map") else { return nil }
        guard bytes.count == 8 else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync pending map holds a mid of \(bytes.count) bytes, not 8")
        }
        return bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// The outbox entry stored under `mid`, if any.
    func outboxEntry(_ mid: UInt64) throws -> OutboxEntry? {
        guard let bytes = try syncValue(sync.outbox, key: Self.midKey(mid), "reading the outbox entry \(mid)") else { return nil }
        return try bytes.withUnsafeBytes { try OutboxEntry(decoding: $0, mid: mid) }
    }

    static func midKey(_ mid: UInt64) -> [UInt8] {
        withUnsafeBytes(of: mid.bigEndian) { Array($0) }
    }

    /// A copy of the value under `key` (copied: later writes may move LMDB's pages).
    func syncValue(_ database: MDB_dbi, key: [UInt8], _ what: @autoclosure () -> String) throws -> [UInt8]? {
        var key = key
        return try key.withUnsafeMutableBytes { raw in
            var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
            var value = MDB_val()
            let rc = mdb_get(txn, database, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, what())
            return Array(value.bytes)
        }
    }

    /// Stores `value` under `key`; returns false when `flags` hold `MDB_NOOVERWRITE` and the
    /// key is taken (nothing is written).
    @discardableResult
    func putSyncValue(_ database: MDB_dbi, key: [UInt8], value: [UInt8], flags: UInt32 = 0,
                      _ what: @autoclosure () -> String) throws -> Bool {
        var key = key
        var value = value
        return try key.withUnsafeMutableBytes { keyRaw in
            try value.withUnsafeMutableBytes { valueRaw in
                var keyVal = MDB_val(UnsafeRawBufferPointer(keyRaw))
                var valueVal = MDB_val(UnsafeRawBufferPointer(valueRaw))
                let rc = mdb_put(txn, database, &keyVal, &valueVal, flags)
                if rc == MDB_KEYEXIST && flags & UInt32(MDB_NOOVERWRITE) != 0 { return false }
                try check(rc, what())
                return true
            }
        }
    }

    func deleteSyncValue(_ database: MDB_dbi, key: [UInt8], _ what: @autoclosure () -> String) throws {
        var key = key
        try key.withUnsafeMutableBytes { raw in
            var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
            let rc = mdb_del(txn, database, &keyVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, what()) }
        }
    }
}
