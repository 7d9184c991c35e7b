import CLMDB
import Foundation

/// Derived sync ids (see ``SyncIdDerivation``) and the creation runs that say which local ids
/// have one, under which epoch, and which mid their creation entry has.
///
/// - `sync.epochs`: epoch prefix (8 bytes big-endian) -> key (16 bytes).
/// - `sync.runs`: (entity id, first local id) -> (epoch prefix, first mid, count): see
///   ``CreationRun``. Runs never overlap, are never removed (a removed object's id stays
///   named, so a look-up of its sync id finds no object), and an object is derived only
///   with an id above every id its entity handed out before, so no local id is ever
///   derived twice.
///
/// An object's identity, in order: its `syncIds` entry when it has one (pulled objects,
/// objects whose id was not fresh, objects of stores written before derived ids, and
/// derived objects whose newest entry is not their creation); else the run holding its id.
extension Transaction {
    static let syncRunsName = "sync.runs"
    static let syncEpochsName = "sync.epochs"

    /// Opens (creating) the runs and epochs tables, in a write transaction.
    func createDerivedIdTables() throws {
        guard sync.runs == 0 else { return }
        if try derivedIdTables() != nil { return }
        sync.runs = try openDatabase(Self.syncRunsName, create: true, "the sync creation runs").0
        sync.epochs = try openDatabase(Self.syncEpochsName, create: true, "the sync epochs").0
        sync.runsOpenedHere = true
    }

    /// The runs and epochs tables, or nil when the store has none (no object has a derived id).
    /// A read transaction that cannot open tables another process created marks itself to
    /// open them and run again, as for any listed table.
    @inline(__always)
    func derivedIdTables() throws -> (runs: MDB_dbi, epochs: MDB_dbi)? {
        if sync.runs != 0 { return (sync.runs, sync.epochs) }
        return try openDerivedIdTables()
    }

    private func openDerivedIdTables() throws -> (runs: MDB_dbi, epochs: MDB_dbi)? {
        if let known = store.syncEpochs.tables {
            sync.runs = known.runs
            sync.epochs = known.epochs
            return known
        }
        if let runs = store.storedDatabase(Self.syncRunsName), let epochs = store.storedDatabase(Self.syncEpochsName) {
            sync.runs = runs
            sync.epochs = epochs
            store.syncEpochs.remember(recorded: nil, epoch: nil, run: nil, tables: (runs, epochs))
            return (runs, epochs)
        }
        if let runs = try store.openInWrite(Self.syncRunsName, in: self), let epochs = try store.openInWrite(Self.syncEpochsName, in: self) {
            sync.runs = runs
            sync.epochs = epochs
            sync.runsOpenedHere = true
            return (runs, epochs)
        }
        if !isWrite, let catalog = store.catalogDatabase,
           let state = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: self), state.count == SyncState.size,
           UInt64(bigEndian: state.loadUnaligned(as: UInt64.self)) >= SyncState.derivedIdsFormat,
           try fileHoldsDatabase(Self.syncRunsName) {  // a store written without them has no derived ids
            needsNewTables = true
            throw CofferError.createdByOtherProcess(what: "the sync creation runs", path: store.path)
        }
        return nil
    }

    // MARK: Epochs

    /// The epoch this transaction derives ids under: the store instance's, recorded in this
    /// transaction unless a committed one did (a prefix another epoch holds already gets the
    /// instance a new epoch first).
    func derivationEpoch() throws -> SyncIdDerivation {
        if let epoch = sync.epoch { return epoch }
        // Usually recorded by an earlier commit: one look at the instance's state.
        if sync.runs == 0, let known = store.syncEpochs.recordedEpoch() {
            sync.runs = known.tables.runs
            sync.epochs = known.tables.epochs
            if sync.cachedRun == nil { sync.cachedRun = known.lastRun }
            sync.epoch = known.epoch
            return known.epoch
        }
        try createDerivedIdTables()
        let now = store.syncClock.now()
        let current = store.syncEpochs.current(milliseconds: now)
        var epoch = current.epoch
        if !current.recorded {
            if let catalog = store.catalogDatabase { try markDerivedIdsFormat(catalog: catalog) }
            while try !putSyncValue(sync.epochs, key: epoch.recordKey, value: epoch.recordValue, flags: UInt32(MDB_NOOVERWRITE),
                                    "recording the sync epoch") {
                if try syncValue(sync.epochs, key: epoch.recordKey, "reading the sync epochs") == epoch.recordValue { break }
                epoch = store.syncEpochs.replace(epoch, milliseconds: now)
            }
            sync.recordedEpoch = true
        }
        sync.epoch = epoch
        return epoch
    }

    /// The epoch with `prefix`, or nil when this store has none.
    func derivation(prefix: UInt64, epochs: MDB_dbi) throws -> SyncIdDerivation? {
        if let epoch = sync.epoch, epoch.prefix == prefix { return epoch }
        if let epoch = sync.lastEpoch, epoch.prefix == prefix { return epoch }
        if let epoch = store.syncEpochs.known(prefix: prefix) {
            sync.lastEpoch = epoch
            return epoch
        }
        var key = prefix.bigEndian
        let found: SyncIdDerivation? = try withUnsafeMutableBytes(of: &key) { raw in
            var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
            var value = MDB_val()
            let rc = mdb_get(txn, epochs, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc, "reading the sync epochs")
            guard let epoch = SyncIdDerivation(prefix: prefix, recordValue: value.bytes) else {
                throw CofferError.damagedStore(part: .sync, reason: "the sync epoch \(prefix) has \(value.mv_size) bytes, not 16")
            }
            return epoch
        }
        if let found {
            sync.lastEpoch = found
            if !isWrite { store.syncEpochs.remember(recorded: nil, epoch: found, run: nil, tables: nil) }
        }
        return found
    }

    // MARK: Runs

    /// Notes a derived creation (the object `id`, its entry `mid`): it extends the open run
    /// when both follow on, else the open run is stored and a new one opens.
    @inline(__always)
    func noteDerivedCreation(_ id: Id, mid: UInt64, entityId: UInt32, prefix: UInt64) throws {
        if var run = sync.openRun {
            if run.entityId == entityId, run.prefix == prefix, run.firstId &+ run.count == id, run.firstMid &+ run.count == mid {
                run.count &+= 1
                sync.openRun = run
                return
            }
            try storeOpenRun()
        }
        sync.openRun = CreationRun(entityId: entityId, prefix: prefix, firstId: id, firstMid: mid, count: 1)
    }

    /// Stores the open run: appended to the stored run before it when both follow on (a run of
    /// single-object transactions stays one entry), else as a new entry.
    func storeOpenRun() throws {
        guard let run = sync.openRun else { return }
        sync.openRun = nil
        // The run before it is usually the one this instance stored last (its epoch's runs
        // grow only here): extended by key, no search for it.
        if let before = sync.cachedRun ?? store.syncEpochs.lastRun, before.entityId == run.entityId, before.prefix == run.prefix,
           before.firstId &+ before.count == run.firstId, before.firstMid &+ before.count == run.firstMid {
            var extended = before
            extended.count &+= run.count
            try putRun(extended)
            sync.cachedRun = extended
            return
        }
        sync.cachedRun = nil
        let cursor = try runsCursor()
        try withRunKey(run.entityId, run.firstId) { keyVal in
            var searched = keyVal
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &searched, &value, MDB_SET_RANGE)
            if rc == 0 {
                rc = mdb_cursor_get(cursor, &searched, &value, MDB_PREV)
            } else if rc == MDB_NOTFOUND {
                rc = mdb_cursor_get(cursor, &searched, &value, MDB_LAST)
            }
            if rc != MDB_NOTFOUND { try check(rc, "reading the sync creation runs") }
            if rc == 0, var before = try Self.decodeRun(key: searched.bytes, value: value.bytes),
               before.entityId == run.entityId, before.prefix == run.prefix,
               before.firstId &+ before.count == run.firstId, before.firstMid &+ before.count == run.firstMid {
                before.count &+= run.count
                try writeRun(before, flags: UInt32(MDB_CURRENT), cursor: cursor)
                sync.cachedRun = before
                return
            }
            try writeRun(run, flags: UInt32(MDB_NOOVERWRITE), cursor: cursor)
            sync.cachedRun = run
        }
    }

    /// The run holding the object `id` of `entityId` (the open one, the last found, or a stored
    /// one), or nil when its sync id is not derived.
    @inline(__always)
    func creationRun(of id: Id, entityId: UInt32) throws -> CreationRun? {
        if let run = sync.openRun, run.creationMid(of: id, entityId: entityId) != nil { return run }
        if let run = sync.cachedRun, run.creationMid(of: id, entityId: entityId) != nil { return run }
        if let run = store.syncEpochs.run(holding: id, entityId: entityId) {
            sync.cachedRun = run
            return run
        }
        return try storedCreationRun(of: id, entityId: entityId)
    }

    private func storedCreationRun(of id: Id, entityId: UInt32) throws -> CreationRun? {
        guard let tables = try derivedIdTables() else { return nil }
        let found: CreationRun? = try withRunKey(entityId, id) { keyVal in
            try withCursor(tables.runs, "reading the sync creation runs") { cursor -> CreationRun? in
                // The run starting at `id`, else the one before.
                var entry = try cursor.seek(UnsafeRawBufferPointer(start: keyVal.mv_data, count: keyVal.mv_size))
                if let found = entry, found.key.elementsEqual(UnsafeRawBufferPointer(start: keyVal.mv_data, count: keyVal.mv_size)) {
                    return try Self.decodeRun(key: found.key, value: found.value)
                }
                entry = try entry == nil ? cursor.last() : cursor.previous()
                guard let before = entry else { return nil }
                return try Self.decodeRun(key: before.key, value: before.value)
            }
        }
        guard let found, found.creationMid(of: id, entityId: entityId) != nil else { return nil }
        sync.cachedRun = found
        if !isWrite { store.syncEpochs.remember(recorded: nil, epoch: nil, run: found, tables: nil) }
        return found
    }

    /// The derived sync id of the object `id` of `entityId` and its creation mid, when a run
    /// names it (whether or not the object is stored).
    @inline(__always)
    func derivedIdentity(of id: Id, entityId: UInt32) throws -> (syncId: UUID, creationMid: UInt64)? {
        guard let run = try creationRun(of: id, entityId: entityId), let mid = run.creationMid(of: id, entityId: entityId) else { return nil }
        let epoch: SyncIdDerivation
        if let current = sync.epoch, current.prefix == run.prefix {
            epoch = current
        } else {
            guard let tables = try derivedIdTables(), let known = try derivation(prefix: run.prefix, epochs: tables.epochs) else {
                throw CofferError.damagedStore(part: .sync, reason: "a creation run names the sync epoch \(run.prefix), which is not recorded")
            }
            epoch = known
        }
        return (epoch.syncId(of: id, entityId: entityId), mid)
    }

    /// The local id `syncId` was derived from for `entityId` (a run names it under the id's
    /// epoch), whether or not the object is stored; nil when it is not a derived id here.
    func derivedLocalId(of syncId: UUID, entityId: UInt32) throws -> Id? {
        guard let prefix = SyncIdDerivation.prefix(of: syncId), let tables = try derivedIdTables(),
              let epoch = try derivation(prefix: prefix, epochs: tables.epochs),
              let id = epoch.id(of: syncId, entityId: entityId),
              let run = try creationRun(of: id, entityId: entityId), run.prefix == prefix else { return nil }
        return id
    }

    private func runsCursor() throws -> OpaquePointer {
        if let cursor = sync.runsCursor { return cursor }
        try createDerivedIdTables()
        let cursor = try openWriteCursor(sync.runs, "the sync creation runs")
        sync.runsCursor = cursor
        return cursor
    }

    /// Overwrites the stored run that starts where `run` does.
    private func putRun(_ run: CreationRun) throws {
        try createDerivedIdTables()
        try withRunKey(run.entityId, run.firstId) { keyVal in
            var value = (run.prefix.bigEndian, run.firstMid.bigEndian, run.count.bigEndian)
            try withUnsafeMutableBytes(of: &value) { raw in
                var valueVal = MDB_val(UnsafeRawBufferPointer(raw))
                try check(mdb_put(txn, sync.runs, &keyVal, &valueVal, 0), "storing a sync creation run")
            }
        }
    }

    private func writeRun(_ run: CreationRun, flags: UInt32, cursor: OpaquePointer) throws {
        try withRunKey(run.entityId, run.firstId) { keyVal in
            var value = (run.prefix.bigEndian, run.firstMid.bigEndian, run.count.bigEndian)
            try withUnsafeMutableBytes(of: &value) { raw in
                var valueVal = MDB_val(UnsafeRawBufferPointer(raw))
                let rc = mdb_cursor_put(cursor, &keyVal, &valueVal, flags)
                if rc == MDB_KEYEXIST {
                    throw CofferError.damagedStore(part: .sync, reason: "a creation run of entity \(run.entityId) starts at \(run.firstId) already")
                }
                try check(rc, "storing a sync creation run")
            }
        }
    }

    @inline(__always)
    private func withRunKey<T>(_ entityId: UInt32, _ id: Id, _ body: (inout MDB_val) throws -> T) throws -> T {
        var key = (entityId.bigEndian, UInt32(truncatingIfNeeded: id >> 32).bigEndian, UInt32(truncatingIfNeeded: id).bigEndian)
        return try withUnsafeMutableBytes(of: &key) { raw in
            var keyVal = MDB_val(mv_size: CreationRun.keySize, mv_data: raw.baseAddress)
            return try body(&keyVal)
        }
    }

    static func decodeRun(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> CreationRun? {
        guard key.count == CreationRun.keySize, value.count == CreationRun.valueSize else {
            throw CofferError.damagedStore(part: .sync, reason: "a sync creation run of \(key.count) + \(value.count) bytes")
        }
        let run = CreationRun(entityId: UInt32(bigEndian: key.loadUnaligned(as: UInt32.self)),
                              prefix: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)),
                              firstId: UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 4, as: UInt64.self)),
                              firstMid: UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                              count: UInt64(bigEndian: value.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        guard run.count > 0, run.firstId &+ run.count > run.firstId else {
            throw CofferError.damagedStore(part: .sync, reason: "a sync creation run of entity \(run.entityId) at \(run.firstId) counts \(run.count) objects")
        }
        return run
    }
}
