import CLMDB
import Foundation

/// The outbox and its coalescing, in the transaction of the change:
///
/// - An object's `syncIds` value names its newest entry (see ``SyncIdTables``). While that
///   entry's mid is above the send floor (no pusher took it) a later change of the object
///   merges into it (union of the fields, each at its latest clock); a delete after an
///   untaken creation drops the entry (the server never saw the object); a delete after an
///   untaken update turns it into the delete.
/// - An entry at or below the send floor (taken by a pusher, perhaps on its way) is never
///   changed: a later change gets a new entry with the next mid.
/// - New entries are appended: mids only ascend.
extension Transaction {
    /// Loads the sync counters and opens the outbox, once per transaction. The counters come from the commit directly before this transaction when
    /// this store instance made it (see ``CommittedSyncState``), else from the catalog.
    func prepareSyncState() throws {
        guard !sync.isPrepared else { return }
        guard let catalog = store.catalogDatabase else {
            throw CofferError.readOnly(path: store.path, operation: "record a synced change")
        }
        let committed = store.committedSyncState
        let loaded = try (isWrite ? committed.state(forWriteTransaction: snapshotId) : nil)
            ?? Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: self).map(SyncState.init(decoding:)) ?? SyncState()
        let outbox = try committed.outbox ?? openDatabase(SyncIdTables.outboxName, create: true, "the sync outbox").0
        sync.outbox = outbox
        sync.storeHasOutbox = true
        sync.state = loaded
        sync.isPrepared = true
    }

    /// The write cursor on the outbox, opened at its first use in the transaction.
    @inline(__always)
    func outboxWriteCursor() throws -> OpaquePointer {
        if let cursor = sync.outboxCursor { return cursor }
        let cursor = try openWriteCursor(sync.outbox, "the sync outbox")
        sync.outboxCursor = cursor
        return cursor
    }

    /// The transaction's clock value: the first call ticks the persisted clock (one tick per
    /// transaction), later ones return the same value.
    @inline(__always)
    func syncTick() throws -> UInt64 {
        if sync.tick != 0 { return sync.tick }
        return try firstSyncTick()
    }

    private func firstSyncTick() throws -> UInt64 {
        try prepareSyncState()
        // `tick` never returns 0: it is above the last value.
        sync.state.clock = try HybridClock.tick(after: sync.state.clock, now: store.syncClock.now())
        sync.isDirty = true
        sync.tick = sync.state.clock
        return sync.tick
    }

    /// Advances the clock past a value received from another replica (a pulled change) and
    /// past `serverClock`, the server's time when it sent it (0: not known).
    func receiveSyncClock(_ remote: UInt64, serverClock: UInt64 = 0) throws {
        try prepareSyncState()
        sync.state.clock = try HybridClock.receive(remote, after: sync.state.clock, now: store.syncClock.now(), serverClock: serverClock)
        sync.isDirty = true
        // A tick taken earlier in this transaction stays: its changes happened before.
    }

    /// The mid the next new entry takes.
    @inline(__always)
    func nextSyncMid() throws -> UInt64 {
        guard sync.state.lastMid < UInt64.max else {
            throw CofferError.damagedStore(part: .sync, reason: "the outbox's mutation ids are exhausted")
        }
        return sync.state.lastMid + 1
    }

    /// Appends a new entry under `mid` (from `nextSyncMid`) and counts the mid as handed out.
    /// `fields` (ascending stored field ids) all changed at `clock`.
    func appendOutboxEntry(mid: UInt64, _ operation: OutboxEntry.Operation, isCreation: Bool, entityId: UInt32, syncId: UUID,
                           clock: UInt64, fields: UnsafeBufferPointer<UInt16>) throws {
        let size = OutboxEntry.size(fieldCount: fields.count)
        let space = try reserveOutboxEntry(mid: mid, size: size)
        OutboxEntry.encode(into: space, operation: operation, isCreation: isCreation, entityId: entityId, syncId: syncId,
                           clock: clock, fields: fields)
    }

    /// Appends the creation entry of a new object under `mid` (from `nextSyncMid`): every
    /// stored field of `record`, at `clock`. The field ids are read from the record's headers
    /// straight into the entry's reserved space (a record whose fields are not in ascending
    /// id order, which carried fields can cause, is listed and sorted first).
    func appendCreationEntry(mid: UInt64, entityId: UInt32, syncId: UUID, clock: UInt64, record: RecordFields) throws {
        guard let base = record.bytes.baseAddress, let count = try OutboxEntry.ascendingFieldCount(of: record, base: base) else {
            try collectAllFields(of: record)
            try sync.changedFields.withUnsafeBufferPointer { fields in
                try appendOutboxEntry(mid: mid, .upsert, isCreation: true, entityId: entityId, syncId: syncId, clock: clock, fields: fields)
            }
            return
        }
        let space = try reserveOutboxEntry(mid: mid, size: OutboxEntry.size(fieldCount: count))
        try OutboxEntry.encodeCreation(into: space, entityId: entityId, syncId: syncId, clock: clock, record: record, base: base)
    }

    /// Appends the whole creation (see ``OutboxEntry``) of a new object under `mid` (from
    /// `nextSyncMid`), at `clock`.
    @inline(__always)
    func appendWholeCreationEntry(mid: UInt64, entityId: UInt32, syncId: UUID, clock: UInt64) throws {
        let space = try reserveOutboxEntry(mid: mid, size: OutboxEntry.wholeCreationSize)
        OutboxEntry.encodeWholeCreation(into: space, entityId: entityId, syncId: syncId, clock: clock)
    }

    /// Whether the outbox entry `mid` is the whole creation of `syncId` (of `entityId`) that
    /// this store instance made and no pusher took: every later local change of the object
    /// is part of it already (see ``OutboxEntry``), so none needs an outbox write.
    @inline(__always)
    func isUntakenWholeCreation(_ mid: UInt64, syncId: UUID, entityId: UInt32) throws -> Bool {
        guard isThisInstancesCreation(syncId) else { return false }
        try prepareSyncState()
        guard mid > sync.state.sendFloor else { return false }
        var key = mid.bigEndian
        return try withUnsafeMutableBytes(of: &key) { raw in
            guard let stored = try outboxEntryAt(mid, key: MDB_val(UnsafeRawBufferPointer(raw))) else { return false }
            let entry = try OutboxEntry.View(stored, mid: mid)
            return entry.isWhole && entry.entityId == entityId && entry.hasSyncId(syncId)
        }
    }

    /// Whether `syncId` is derived under this store instance's epoch, so that the object's
    /// whole creation, while untaken, was never pushed by anyone: a copied, restored or
    /// reopened store derives under a new epoch, and the creations it holds from before may
    /// have reached the server from the original (its later changes then get entries of
    /// their own, at their own clocks).
    @inline(__always)
    func isThisInstancesCreation(_ syncId: UUID) -> Bool {
        guard let epoch = instanceEpoch() else { return false }
        return SyncIdDerivation.prefix(of: syncId) == epoch.prefix
    }

    /// This store instance's epoch, if it has one (read once per transaction).
    @inline(__always)
    func instanceEpoch() -> SyncIdDerivation? {
        if let epoch = sync.epoch { return epoch }
        if !sync.instanceEpochRead {
            sync.instanceEpoch = store.syncEpochs.existing
            sync.instanceEpochRead = true
        }
        return sync.instanceEpoch
    }

    /// Reserves `size` bytes for a new entry under `mid` at the outbox's end (the entry is
    /// written straight into its page) and counts the mid as handed out.
    private func reserveOutboxEntry(mid: UInt64, size: Int) throws -> UnsafeMutableRawBufferPointer {
        var key = mid.bigEndian
        var value = MDB_val(mv_size: size, mv_data: nil)
        // The transaction's first append goes without a cursor (opening one costs more than
        // the put); later ones use the cursor, which stays at the end.
        let cursor: OpaquePointer?
        if sync.outboxCursor != nil || sync.appendedWithoutCursor {
            cursor = try outboxWriteCursor()
        } else {
            cursor = nil
            sync.appendedWithoutCursor = true
        }
        let rc = withUnsafeMutableBytes(of: &key) { raw in
            var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
            if let cursor { return mdb_cursor_put(cursor, &keyVal, &value, UInt32(MDB_APPEND | MDB_RESERVE)) }
            return mdb_put(txn, sync.outbox, &keyVal, &value, UInt32(MDB_APPEND | MDB_RESERVE))
        }
        sync.outboxCursorMid = 0
        // A new mid is above every stored one. One that is not means the counter went back
        // (lost sync state), and reusing a mid the server may have applied loses changes.
        if rc == MDB_KEYEXIST {
            throw CofferError.damagedStore(part: .sync, reason: "the outbox already holds mid \(mid): the sync state's counter is behind its entries")
        }
        try check(rc, "writing the outbox entry \(mid)")
        guard let data = value.mv_data, value.mv_size == size else {
            throw CofferError.storage(code: .init(result: EINVAL), message: "LMDB reserved no room for the outbox entry \(mid)")
        }
        sync.state.lastMid = mid
        sync.isDirty = true
        return UnsafeMutableRawBufferPointer(start: data, count: size)
    }

    /// Records a change of an object whose newest entry is `newestMid` (0: none): merged into
    /// that entry while no pusher took it, else a new entry. Returns the mid of the object's
    /// newest entry afterwards (0 when a delete dropped an untaken creation).
    func enqueue(_ operation: OutboxEntry.Operation, isCreation: Bool, entityId: UInt32, syncId: UUID, newestMid: UInt64,
                 fields: UnsafeBufferPointer<UInt16>) throws -> UInt64 {
        try prepareSyncState()
        if newestMid > sync.state.sendFloor,
           try mergeIntoOutboxEntry(newestMid, operation, entityId: entityId, syncId: syncId, fields: fields) {
            return operation == .delete ? 0 : newestMid
        }
        let clock = try syncTick()
        let mid = try nextSyncMid()
        try appendOutboxEntry(mid: mid, operation, isCreation: isCreation, entityId: entityId, syncId: syncId, clock: clock, fields: fields)
        return mid
    }

    /// The entry `mid`, with the outbox cursor left on it; nil when it is not stored.
    ///
    /// Changes of objects visited in id order merge into entries in mid order (a run of
    /// creations, then of updates), so when the cursor stands on a lower mid the next entry
    /// is tried first, and taken only when its key is `mid`; else the tree is searched.
    @inline(__always)
    private func outboxEntryAt(_ mid: UInt64, key keyVal: MDB_val) throws -> UnsafeRawBufferPointer? {
        let cursor = try outboxWriteCursor()
        let standsOn = sync.outboxCursorMid
        sync.outboxCursorMid = 0
        var stored = MDB_val()
        if standsOn != 0 && mid > standsOn {
            var nextKey = MDB_val()
            if mdb_cursor_get(cursor, &nextKey, &stored, MDB_NEXT) == 0, nextKey.mv_size == 8,
               UInt64(bigEndian: nextKey.bytes.loadUnaligned(as: UInt64.self)) == mid {
                sync.outboxCursorMid = mid
                return stored.bytes
            }
        }
        var searched = keyVal
        let rc = mdb_cursor_get(cursor, &searched, &stored, MDB_SET)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "reading the outbox entry \(mid)")
        sync.outboxCursorMid = mid
        return stored.bytes
    }

    /// Merges a change into the untaken entry `mid` of the object `syncId`, at the
    /// transaction's clock; false (nothing written) when the change needs an entry of its
    /// own: an upsert after a whole creation another store instance made (see
    /// ``isThisInstancesCreation(_:)``).
    private func mergeIntoOutboxEntry(_ mid: UInt64, _ operation: OutboxEntry.Operation, entityId: UInt32, syncId: UUID,
                                      fields: UnsafeBufferPointer<UInt16>) throws -> Bool {
        let cursor = try outboxWriteCursor()
        var key = mid.bigEndian
        return try withUnsafeMutableBytes(of: &key) { raw in
            // The put below gets its own copy of the key: one pointing into the page would
            // move under LMDB when the entry changes size.
            var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
            guard let stored = try outboxEntryAt(mid, key: keyVal) else {
                throw CofferError.damagedStore(part: .sync, reason: "the sync id \(syncId) names the outbox entry \(mid), which is not stored")
            }
            let entry = try OutboxEntry.View(stored, mid: mid)
            guard entry.operation == .upsert, entry.hasSyncId(syncId) else {
                throw CofferError.damagedStore(part: .sync, reason: "the sync id \(syncId) names the outbox entry \(mid), which is not an update of it")
            }
            if operation == .upsert && entry.isWhole {
                // This instance's creation stands for every field already (no tick); another's
                // may have been pushed by the original of this store: a new entry.
                return isThisInstancesCreation(syncId)
            }
            let clock = try syncTick()
            switch operation {
            case .delete where entry.isCreation:
                // The cursor then stands between `mid` and the next entry, which its next
                // step reaches: a run of removals in mid order keeps the shortcut.
                try check(mdb_cursor_del(cursor, 0), "dropping the outbox entry \(mid)")
            case .delete:
                try withUnsafeTemporaryAllocation(byteCount: OutboxEntry.size(fieldCount: 0), alignment: 8) { bytes in
                    OutboxEntry.encode(into: bytes, operation: .delete, isCreation: false, entityId: entityId, syncId: syncId,
                                       clock: clock, fields: UnsafeBufferPointer(start: nil, count: 0))
                    var value = MDB_val(UnsafeRawBufferPointer(bytes))
                    try check(mdb_cursor_put(cursor, &keyVal, &value, UInt32(MDB_CURRENT)), "writing the outbox entry \(mid)")
                }
            case .upsert where stored.count <= OutboxEntry.largestRewrittenInPlace && entry.lists(every: fields):
                // Only clocks change: LMDB hands back the stored bytes, in a page this
                // transaction owns, for the same size (an entry this small is never on
                // overflow pages), and they are updated where they lie.
                var value = MDB_val(mv_size: stored.count, mv_data: nil)
                try check(mdb_cursor_put(cursor, &keyVal, &value, UInt32(MDB_CURRENT | MDB_RESERVE)), "writing the outbox entry \(mid)")
                guard let data = value.mv_data, value.mv_size == stored.count else {
                    throw CofferError.storage(code: .init(result: EINVAL), message: "LMDB moved the outbox entry \(mid)")
                }
                OutboxEntry.View.advanceClocks(in: UnsafeMutableRawBufferPointer(start: data, count: stored.count), of: fields, to: clock)
            case .upsert:
                let size = OutboxEntry.size(fieldCount: entry.fieldCount + fields.count)
                try withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { bytes in
                    let merged = try entry.merged(fields: fields, clock: clock, into: bytes)
                    var value = MDB_val(mv_size: merged, mv_data: bytes.baseAddress)
                    try check(mdb_cursor_put(cursor, &keyVal, &value, UInt32(MDB_CURRENT)), "writing the outbox entry \(mid)")
                }
            }
            return true
        }
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
