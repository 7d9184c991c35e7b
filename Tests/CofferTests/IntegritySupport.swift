@testable import Coffer
import CLMDB
import Foundation
import Testing

/// Writes raw bytes under `key` in one of an entity's databases, bypassing Coffer's checks,
/// to simulate damage.
enum Damage {
    static func overwriteRecord<E: Entity>(_ store: Store, _ type: E.Type, id: Id, with bytes: [UInt8]) throws {
        try store.performWrite { transaction in
            let binding = try store.writableBinding(for: E.self, in: transaction)
            try put(transaction, binding.table, key: withUnsafeBytes(of: id.bigEndian) { Array($0) }, value: bytes)
        }
    }

    static func putIndexKey<E: Entity, V>(_ store: Store, _ property: Property<E, V>, key: [UInt8]) throws {
        try store.performWrite { transaction in
            let binding = try store.writableBinding(for: E.self, in: transaction)
            guard let index = binding.indexes.first(where: { $0.position == property.index }) else { return }
            try put(transaction, index.database, key: key, value: [])
        }
    }

    static func put(_ transaction: Transaction, _ database: MDB_dbi, key: [UInt8], value: [UInt8]) throws {
        var key = key, value = value
        try key.withUnsafeMutableBytes { keyRaw in
            try value.withUnsafeMutableBytes { valueRaw in
                var keyVal = MDB_val(UnsafeRawBufferPointer(keyRaw))
                var val = MDB_val(UnsafeRawBufferPointer(valueRaw))
                try transaction.check(mdb_put(transaction.txn, database, &keyVal, &val, 0), "damaging")
            }
        }
    }

    static func isCorrupt(_ error: any Error, entity: String? = nil, id: Id? = nil) -> Bool {
        guard case CofferError.damagedRecord(let name, let badId, _) = error else { return false }
        return (entity.map { $0 == name } ?? true) && (id.map { $0 == badId } ?? true)
    }

    /// Whether `error` reports damage of the store's `part` (a structure of no one record).
    static func isDamaged(_ error: any Error, _ part: CofferError.StorePart) -> Bool {
        guard case CofferError.damagedStore(let damaged, _) = error else { return false }
        return damaged == part
    }
}

/// Collects change sets from handlers (which may run on any thread).
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var sets: [ChangeSet] = []
    func append(_ set: ChangeSet) { lock.lock(); sets.append(set); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return sets.count }
    var last: ChangeSet { lock.lock(); defer { lock.unlock() }; return sets.last ?? ChangeSet() }
}
