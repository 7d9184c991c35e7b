import Coffer
import Foundation

/// `BenchObject` marked `@Sync`: every write also records its outbox entry, sync id and clock.
@Sync
struct SyncedBenchObject: Entity {
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
    var objects = (1...UInt64(n)).map { i in
        SyncedBenchObject(name: Workload.name(i), i32: Workload.i32(i), i64: Workload.i64(i), d: Workload.double(i),
                          f: Workload.float(i), b: Workload.bool(i), blob: Workload.blob(i))
    }
    try measure(.insert, objects: n, into: &result) {
        try box.put(&objects)
        return objects.count
    }
    objects = []
    try measure(.update, objects: n, into: &result) {
        try box.modifyEach { object in
            object.i64 += 1
            object.d += 1
        }
    }
    try measure(.remove, objects: n, into: &result) {
        try store.write {
            var removed = 0
            for id in 1...Id(n) where try box.remove(id) { removed += 1 }
            return removed
        }
    }
    try store.close()
    return result
}
