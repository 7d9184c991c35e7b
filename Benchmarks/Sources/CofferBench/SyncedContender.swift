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

/// The write operations of `runCoffer` on the synced entity, for the cost of sync against
/// plain Coffer (`--contender coffer-synced`; not part of the default comparison).
func runCofferSynced(_ workload: Workload, directory: String) throws -> ContenderResult {
    var result = ContenderResult()
    let n = workload.count
    let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 30))
    let box = store.box(for: SyncedBenchObject.self)
    try measureInsert(box, count: n, into: &result)
    try measureUpdate(box, count: n, into: &result)
    try measureRemove(box, count: n, into: &result)
    try store.close()
    return result
}
