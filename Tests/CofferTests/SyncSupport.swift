@_spi(CofferSync) @testable import Coffer
import CLMDB
import Foundation

/// Reads a store's sync bookkeeping as it is stored, for the sync tests.
enum SyncProbe {
    struct Snapshot {
        var outbox: [(mid: UInt64, entry: OutboxEntry)] = []
        /// Sync id -> mid of the untaken entry its next change merges into.
        var pending: [UUID: UInt64] = [:]
        var state = SyncState()
    }

    /// The outbox, the entries later changes merge into and the counters (empty when the
    /// store has no outbox).
    static func snapshot(_ store: Store) throws -> Snapshot {
        try store.performWrite { transaction in
            var snapshot = Snapshot()
            guard try transaction.databaseExists(SyncIdTables.outboxName) else { return snapshot }
            try transaction.prepareSyncState()
            snapshot.state = transaction.sync.state
            try transaction.withCursor(transaction.sync.outbox, "outbox") { cursor in
                var current = try cursor.first()
                while let stored = current {
                    let mid = UInt64(bigEndian: stored.key.loadUnaligned(as: UInt64.self))
                    snapshot.outbox.append((mid, try OutboxEntry(decoding: stored.value, mid: mid)))
                    current = try cursor.next()
                }
            }
            // The entries later changes merge into: the newest entry each sync id names,
            // while no pusher took it.
            guard let catalog = store.catalogDatabase else { return snapshot }
            for entity in try Catalog.entities(dbi: catalog, in: transaction) where entity.synced == true {
                let name = SyncIdTables.names(entity: entity.id).syncIds
                guard try transaction.databaseExists(name) else { continue }
                let tables = try SyncIdTables.listed(entityId: entity.id, entity: entity.name, in: transaction)
                for object in try transaction.syncIdentities(in: tables, entity: entity.name) where object.mid > snapshot.state.sendFloor {
                    snapshot.pending[object.syncId] = object.mid
                }
            }
            return snapshot
        }
    }

    /// The stored field ids of an entity's properties, by name.
    static func fieldIds<E: Entity>(_ type: E.Type, in store: Store) throws -> [String: UInt16] {
        try store.performWrite { transaction in
            let binding = try store.writableBinding(for: type, in: transaction)
            return Dictionary(uniqueKeysWithValues: binding.catalog.properties.map { ($0.name, $0.id) })
        }
    }

    /// The catalog id of an entity.
    static func entityId<E: Entity>(_ type: E.Type, in store: Store) throws -> UInt32 {
        try store.performWrite { transaction in try store.writableBinding(for: type, in: transaction).entityId }
    }

    /// Whether a database of that name exists in the store.
    static func databaseExists(_ name: String, in store: Store) throws -> Bool {
        try store.performWrite { transaction in try transaction.databaseExists(name) }
    }

    /// Writes raw bytes into a sync database (to damage it).
    static func overwrite(_ database: String, key: [UInt8], value: [UInt8], in store: Store) throws {
        try store.performWrite { transaction in
            let (handle, _) = try transaction.openDatabase(database, create: true, database)
            try transaction.putSyncValue(handle, key: key, value: value, "damaging \(database)")
        }
    }
}

/// A physical clock the tests move by hand (milliseconds since 1970).
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: UInt64

    init(_ milliseconds: UInt64) { self.milliseconds = milliseconds }

    var now: UInt64 {
        get { lock.withLock { milliseconds } }
        set { lock.withLock { milliseconds = newValue } }
    }

    func install(in store: Store) {
        store.syncClock.use { [self] in now }
    }
}
