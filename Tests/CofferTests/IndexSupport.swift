@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

/// Reads index contents through the internal API, to check them against the records.
enum IndexProbe {
    /// Ids whose `property` equals its value in `sample`, found through the index.
    static func ids<E: Entity, V>(_ store: Store, _ property: Property<E, V>, like sample: E) throws -> [Id] {
        try store.performRead { transaction in
            guard let binding = try store.binding(for: E.self, in: transaction),
                  let index = binding.indexes.first(where: { $0.position == property.index }) else { return [] }
            let buffer = RecordBuffer()
            var writer = RecordWriter(buffer: buffer, storedIds: binding.storedIds)
            var sample = sample
            E._cofferEncode(&sample, to: &writer)
            buffer.adopt(writer)
            return try transaction.matchingIds(index, valueOf: RecordFields(bytes: writer.bytes, entity: "probe", id: 0), table: binding.table).sorted()
        }
    }

    /// Whether every index of `E` holds exactly one entry per object, with the right key.
    static func isConsistent<E: Entity>(_ store: Store, _ type: E.Type) throws -> Bool {
        try store.performRead { transaction in
            guard let binding = try store.binding(for: E.self, in: transaction) else { return true }
            var stat = MDB_stat()
            mdb_stat(transaction.txn, binding.table, &stat)
            let objects = stat.ms_entries
            for index in binding.indexes {
                mdb_stat(transaction.txn, index.database, &stat)
                guard stat.ms_entries == objects else { return false }
                var cursor: OpaquePointer?
                mdb_cursor_open(transaction.txn, index.database, &cursor)
                defer { mdb_cursor_close(cursor) }
                var key = MDB_val(), value = MDB_val()
                var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
                while rc == 0 {
                    let bytes = Array(key.bytes)
                    let id = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    guard let record = try transaction.record(id, table: binding.table, entity: "probe"),
                          try index.key(in: RecordFields(bytes: record, entity: "probe", id: id)) == Array(bytes.dropLast(8)) else { return false }
                    rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
                }
            }
            return true
        }
    }
}
