@_spi(CofferSync) @testable import Coffer
import CLMDB
import Foundation
import Testing

/// Sync tables an earlier build wrote (format 1: a separate pending map, 16-byte sync id
/// values, a 24-byte state) are converted when the store opens writable, and refused by a
/// read-only open; never misread.
@Suite struct SyncFormatTests {
    @Test func aStoreOfFormatOneIsConvertedWhenItOpensWritable() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        var tasks = store.box(for: Synced.Task.self)
        for title in ["a", "b", "c"] { try tasks.put(Synced.Task(title: title)) }
        _ = try store.takeSyncChanges(limit: 1)            // a's creation is on its way
        try tasks.put(Synced.Task(id: 1, title: "a2"))      // a new entry (4)
        try tasks.put(Synced.Task(id: 2, title: "b2"))      // merged into b's creation (2)
        let before = try SyncProbe.snapshot(store)
        #expect(before.pending.count == 3)
        try Self.rewriteAsFormatOne(store, pending: before.pending)
        try store.close()

        #expect(throws: CofferError.readOnly(path: directory.path, operation: "convert the sync tables an earlier build wrote (open the store writable once)")) {
            _ = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        }

        store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        tasks = store.box(for: Synced.Task.self)
        let after = try SyncProbe.snapshot(store)
        #expect(after.state == before.state)
        #expect(after.pending == before.pending)
        #expect(after.outbox.map(\.mid) == before.outbox.map(\.mid))
        #expect(after.outbox.map(\.entry) == before.outbox.map(\.entry))
        #expect(try !SyncProbe.databaseExists(SyncIdTables.legacyPendingName, in: store))
        #expect(try store.verify().isIntact)
        // c's untaken creation is whole and an earlier store instance's (which cannot know
        // whether a copy pushed it): its update gets an entry of its own, and later ones
        // coalesce there.
        try tasks.put(Synced.Task(id: 3, title: "c2"))
        try tasks.put(Synced.Task(id: 3, title: "c3"))
        #expect(try SyncProbe.snapshot(store).outbox.map(\.mid) == [1, 2, 3, 4, 5])
    }

    @Test func aStateOfFormatOneIsNeverReadAsThisFormat() throws {
        #expect(throws: CofferError.self) { try [UInt8](repeating: 0, count: SyncState.legacySize).withUnsafeBytes { _ = try SyncState(decoding: $0) } }
        var format = SyncState(clock: 7, lastMid: 3, sendFloor: 2).encoded()
        format[7] = 4   // an unknown format
        #expect(throws: CofferError.damagedStore(part: .sync, reason: "the sync tables are of format 4; this build reads formats 2 and 3")) {
            try format.withUnsafeBytes { _ = try SyncState(decoding: $0) }
        }
        let current = try SyncState(clock: 7, lastMid: 3, sendFloor: 2).encoded().withUnsafeBytes { try SyncState(decoding: $0) }
        #expect(current == SyncState(clock: 7, lastMid: 3, sendFloor: 2))
    }

    /// Writes the store's sync tables back as format 1 had them: 16-byte sync id values, the
    /// pending map and a 24-byte state.
    static func rewriteAsFormatOne(_ store: Store, pending: [UUID: UInt64]) throws {
        try store.performWrite { transaction in
            guard let catalog = store.catalogDatabase else { return }
            for entity in try Catalog.entities(dbi: catalog, in: transaction) where entity.synced == true {
                let name = SyncIdTables.names(entity: entity.id).syncIds
                let (forward, _) = try transaction.openDatabase(name, create: false, name)
                var rows: [([UInt8], [UInt8])] = []
                try transaction.withCursor(forward, name) { cursor in
                    var current = try cursor.first()
                    while let stored = current {
                        rows.append((Array(stored.key), Array(stored.value.prefix(16))))
                        current = try cursor.next()
                    }
                }
                for (key, value) in rows { try transaction.putSyncValue(forward, key: key, value: value, name) }
            }
            let (map, _) = try transaction.openDatabase(SyncIdTables.legacyPendingName, create: true, "pending")
            for (syncId, mid) in pending {
                try transaction.putSyncValue(map, key: syncId.syncBytes, value: Transaction.midKey(mid), "pending")
            }
            var state = SyncProbe.legacyBytes(try SyncProbe.stateOf(transaction))
            try state.withUnsafeMutableBytes { try Catalog.putRaw(key: SyncState.catalogKey, value: UnsafeRawBufferPointer($0), dbi: catalog, in: transaction) }
        }
    }
}

extension SyncProbe {
    static func stateOf(_ transaction: Transaction) throws -> SyncState {
        try transaction.prepareSyncState()
        return transaction.sync.state
    }

    /// A state as format 1 stored it: clock, last mid, send floor (big-endian).
    static func legacyBytes(_ state: SyncState) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in [state.clock, state.lastMid, state.sendFloor] { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        return bytes
    }
}
