import Coffer
import Foundation

/// `BenchObject` marked `@Sync`: every write also records its outbox entry, sync id and clock.
@Sync
struct SyncedBenchObject: Entity, BenchEntity {
    var id: Id = 0
    @Index var name: String
    var i32: Int32
    var i64: Int64
    var d: Double
    var f: Float
    var b: Bool
    var blob: Data
}

/// The writes an application does most: one object per write transaction, each committed
/// with the store's default durability (`.full`: synced to disk at every commit).
enum SingleWriteOperation: String, CaseIterable {
    /// `box.put` of a new object in its own transaction.
    case insertOne
    /// Read one object, change two fields, put it, in one transaction.
    case updateOne
    /// `box.remove` of one object in its own transaction.
    case removeOne
}

/// The write cost of sync: the same writes on `BenchObject` (`--contender coffer-plain`) and
/// on `SyncedBenchObject` (`--contender coffer-synced`), neither part of the default
/// comparison. First n objects inserted, updated and removed in one transaction each (the
/// per-object cost), then `singleWriteCount(n)` objects inserted, updated and removed one
/// per transaction (the per-transaction cost, commit included). No pusher runs, so a synced
/// update merges into the object's untaken creation entry and a synced remove drops it.
func runWriteCost<E: BenchEntity>(_ type: E.Type, _ workload: Workload, directory: String) throws -> ContenderResult {
    var result = ContenderResult()
    let n = workload.count
    let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 30))
    let box = store.box(for: E.self)
    try measureInsert(box, count: n, into: &result)
    try measureUpdate(box, count: n, into: &result)
    try measureRemove(box, count: n, into: &result)
    try measureSingleWrites(box, count: singleWriteCount(n), into: &result)
    try store.close()
    return result
}

/// How many single-object transactions of each kind a run of `count` objects does: a tenth,
/// at most 2,000 (each commit waits for the disk).
func singleWriteCount(_ count: Int) -> Int { min(max(count / 10, 1), 2_000) }

/// Inserts `n` new objects, then updates each, then removes each, one object per write
/// transaction.
func measureSingleWrites<E: BenchEntity>(_ box: Box<E>, count n: Int, into result: inout ContenderResult) throws {
    let objects = (1...UInt64(n)).map(E.init(number:))
    var ids: [Id] = []
    ids.reserveCapacity(n)
    try measure(SingleWriteOperation.insertOne, objects: n, into: &result) {
        for var object in objects { ids.append(try box.put(&object)) }
        return ids.count
    }
    try measure(SingleWriteOperation.updateOne, objects: n, into: &result) {
        var updated = 0
        for id in ids {
            try box.store.write {
                guard var object = try box.get(id) else { return }
                object.i64 += 1
                object.d += 1
                try box.put(&object)
                updated += 1
            }
        }
        return updated
    }
    try measure(SingleWriteOperation.removeOne, objects: n, into: &result) {
        var removed = 0
        for id in ids where try box.remove(id) { removed += 1 }
        return removed
    }
}
