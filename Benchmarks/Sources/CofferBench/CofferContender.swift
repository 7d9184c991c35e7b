import Coffer
import Foundation

/// The benchmark entity: id, an indexed String, Int32, Int64, Double, Float, Bool, 16-byte Data.
struct BenchObject: Entity {
    var id: Id = 0
    @Index var name: String
    var i32: Int32
    var i64: Int64
    var d: Double
    var f: Float
    var b: Bool
    var blob: Data
}

/// Coffer, used the way the README shows.
func runCoffer(_ workload: Workload, directory: String) throws -> ContenderResult {
    var result = ContenderResult()
    let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 30))
    let box = store.box(for: BenchObject.self)
    let n = workload.count

    var objects = (1...UInt64(n)).map { i in
        BenchObject(name: Workload.name(i), i32: Workload.i32(i), i64: Workload.i64(i), d: Workload.double(i),
                    f: Workload.float(i), b: Workload.bool(i), blob: Workload.blob(i))
    }
    try measure(.insert, objects: n, into: &result) {
        try box.put(&objects)
        return objects.count
    }
    objects = []
    try measure(.readAll, objects: n, into: &result) { try box.all().count }
    try measure(.getRandom, objects: n, into: &result) {
        try store.read {
            var found = 0
            for id in workload.randomIds where try box.get(id) != nil { found += 1 }
            return found
        }
    }
    try measure(.indexEquality, objects: workload.lookupIds.count, into: &result) {
        var query = try box.query { BenchObject.name == "" }.build()
        return try store.read {
            var found = 0
            for id in workload.lookupIds {
                try query.setParameter(BenchObject.name, to: Workload.name(id))
                if try query.findFirst() != nil { found += 1 }
            }
            return found
        }
    }
    try measure(.scanQuery, objects: n / 10, into: &result) {
        try box.query { BenchObject.i32 < workload.scanThreshold }.build().find().count
    }
    try measure(.update, objects: n, into: &result) {
        try store.write {
            var all = try box.all()
            for index in all.indices {
                all[index].i64 += 1
                all[index].d += 1
            }
            try box.put(&all)
            return all.count
        }
    }
    result.fileBytes = directoryBytes(directory)
    result.materializeFloor = materializeFloor(count: n)
    try measure(.remove, objects: n, into: &result) {
        try store.write {
            var removed = 0
            for id in 1...Id(n) where try box.remove(id) { removed += 1 }
            return removed
        }
    }
    result.peakResidentKiB = peakResidentKiB()
    try store.close()
    return result
}

/// Objects per second for only building the Swift values readAll returns (a String, a
/// 16-byte Data and the scalars per object, appended to an array), with no storage at all:
/// the ceiling for any Swift store that returns `[BenchObject]`.
func materializeFloor(count: Int) -> Double {
    let name = Array(Workload.name(1).utf8)
    let blob = [UInt8](Workload.blob(1))
    let start = DispatchTime.now().uptimeNanoseconds
    var objects: [BenchObject] = []
    objects.reserveCapacity(count)
    name.withUnsafeBytes { nameBytes in
        blob.withUnsafeBytes { blobBytes in
            for i in 0..<count {
                objects.append(BenchObject(id: Id(i), name: String(decoding: nameBytes, as: UTF8.self), i32: Int32(truncatingIfNeeded: i),
                                           i64: Int64(i), d: Double(i), f: Float(i), b: i & 1 == 0, blob: Data(blobBytes)))
            }
        }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return Double(objects.count) / seconds
}
