import Coffer
import Foundation
import RawLMDB

/// The benchmark entity: id, an indexed String, Int32, Int64, Double, Float, Bool, 16-byte Data.
struct BenchObject: Entity, BenchEntity {
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
    let n = workload.count
    let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 30))
    let box = store.box(for: BenchObject.self)

    try measureInsert(box, count: n, into: &result)
    // The arrays are freed after the clock stops, as the materialisation floor's is.
    var kept: [BenchObject] = []
    try measure(.readAll, objects: n, into: &result) {
        kept = try box.all()
        return kept.count
    }
    kept = []
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
        kept = try box.query { BenchObject.i32 < workload.scanThreshold }.build().find()
        return kept.count
    }
    kept = []
    try measureUpdate(box, count: n, into: &result)
    result.fileBytes = directoryBytes(directory)
    Memory.beginPhase(&result)
    (result.materializeFloor, result.materializeFloorFaults, _) = materializeFloor(count: n, label: "floor")
    Memory.endPhase("floor", &result)
    Memory.beginPhase(&result)
    result.observe = try measureObserve(box, threshold: workload.scanThreshold)
    Memory.endPhase("observe", &result)
    try measureRemove(box, count: n, into: &result)
    result.peakResidentKiB = peakResidentKiB(result)
    try store.close()
    return result
}

/// The shape of the benchmark's entities (plain and `@Sync`), so that one insert, update and
/// remove serve both.
protocol BenchEntity: Entity {
    init(id: Id, name: String, i32: Int32, i64: Int64, d: Double, f: Float, b: Bool, blob: Data)
    var i64: Int64 { get set }
    var d: Double { get set }
}

extension BenchEntity {
    /// Object `i` of the workload.
    init(number i: UInt64) {
        self.init(id: 0, name: Workload.name(i), i32: Workload.i32(i), i64: Workload.i64(i), d: Workload.double(i),
                  f: Workload.float(i), b: Workload.bool(i), blob: Workload.blob(i))
    }
}

/// Inserts objects 1...n in one `put`.
func measureInsert<E: BenchEntity>(_ box: Box<E>, count n: Int, into result: inout ContenderResult) throws {
    var objects = (1...UInt64(n)).map(E.init(number:))
    try measure(.insert, objects: n, into: &result) {
        try box.put(&objects)
        return objects.count
    }
}

/// Changes two fields of every object. Coffer's way to change every object: `modifyEach`
/// walks the table with the write transaction's cursor, changes each object in place and
/// writes it back at the cursor (as C walks a cursor), with no array of a million objects.
func measureUpdate<E: BenchEntity>(_ box: Box<E>, count n: Int, into result: inout ContenderResult) throws {
    try measure(.update, objects: n, into: &result) {
        try box.modifyEach { object in
            object.i64 += 1
            object.d += 1
        }
    }
}

/// Removes objects 1...n by id in one transaction.
func measureRemove<E: BenchEntity>(_ box: Box<E>, count n: Int, into result: inout ContenderResult) throws {
    try measure(.remove, objects: n, into: &result) {
        try box.store.write {
            var removed = 0
            for id in 1...Id(n) where try box.remove(id) { removed += 1 }
            return removed
        }
    }
}

/// The materialisation floor alone, in a process of its own: on a fresh heap, where every
/// page the objects take is touched for the first time (as for a first readAll).
func runFloor(_ workload: Workload) -> ContenderResult {
    var result = ContenderResult()
    (result.materializeFloorFresh, result.materializeFloorFreshFaults, result.objectArrayKiB) = materializeFloor(count: workload.count, label: "floorFresh")
    return result
}

/// Objects per second for only building the Swift values readAll returns (a String, a
/// 16-byte Data and the scalars per object, appended to an array), with no storage at all:
/// the ceiling for any Swift store that returns `[BenchObject]`. Also the resident memory
/// the built array takes (meaningful in the floor's own fresh process, where nothing freed
/// earlier can be reused).
func materializeFloor(count: Int, label: String) -> (rate: Double, minorFaults: Int, arrayKiB: Int) {
    let name = Array(Workload.name(1).utf8)
    let blob = [UInt8](Workload.blob(1))
    let residentBefore = Memory.residentKiB()
    bench_callgrind_mark("setup")
    let faultsBefore = minorFaultCount()
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
    let faults = minorFaultCount() - faultsBefore
    // Under callgrind: the building alone; the array is freed after the mark, as readAll's is.
    bench_callgrind_mark("\(label) \(count)")
    let arrayKiB = Memory.residentKiB() - residentBefore
    return withExtendedLifetime(objects) { (Double(objects.count) / seconds, faults, arrayKiB) }
}

/// Latency of a `QueryController` over the scan query's matches (100,000 of 1,000,000):
/// from the return of a one-object write (commit done and change set published) to the
/// controller's change set in hand; medians of 101 writes each, for a window of the last
/// 25 and for no window. Half the writes update an object in the window, half insert one
/// that sorts into it.
func measureObserve(_ box: Box<BenchObject>, threshold: Int32) throws -> ObserveResult {
    let query = try box.query { BenchObject.i32 < threshold }.ordered(by: BenchObject.name).build()
    var result = ObserveResult(results: try query.count())
    for (label, window) in [("window -25", -25 as Int?), ("no window", nil)] {
        let setUp = DispatchTime.now().uptimeNanoseconds
        var controller = try QueryController(query, window: window)
        let loadMicros = Double(DispatchTime.now().uptimeNanoseconds - setUp) / 1e3
        var latencies: [Double] = []
        var writes: [Double] = []
        for step in 0..<101 {
            let started = DispatchTime.now().uptimeNanoseconds
            if step % 2 == 0, var object = controller.object(at: controller.count - 1 - step % max(controller.count, 1)) {
                object.d += 1
                try box.put(&object)
            } else {
                var object = BenchObject(name: "zz-\(label)-\(10_000 + step)", i32: 0, i64: 0, d: 0, f: 0, b: false, blob: Data())
                try box.put(&object)
            }
            let committed = DispatchTime.now().uptimeNanoseconds
            let change = try awaitChange(controller)
            let delivered = DispatchTime.now().uptimeNanoseconds
            guard !change.inserted.isEmpty || !change.updated.isEmpty || !change.moved.isEmpty else {
                throw BenchError.wrongResult("observe: a change set without the change")
            }
            writes.append(Double(committed - started) / 1e3)
            latencies.append(Double(delivered - committed) / 1e3)
        }
        // The tasks of awaitChange release the controller after they signal. Wait until
        // they have, so that the controller (100,000 objects without a window) is freed here,
        // not on another thread while the next measurement (remove) runs.
        while !isKnownUniquelyReferenced(&controller) { Thread.sleep(forTimeInterval: 0.001) }
        result.cases.append(ObserveResult.Case(label: label, loadMicros: loadMicros,
                                               medianMicros: median(latencies), p90Micros: percentile(latencies, 0.9),
                                               writeMedianMicros: median(writes)))
    }
    return result
}

/// The controller's next change, waited for from this synchronous code.
func awaitChange(_ controller: QueryController<BenchObject>) throws -> QueryChange<BenchObject> {
    let box = ResultBox()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            var iterator = controller.changes().makeAsyncIterator()
            box.result = try await iterator.next().map { .success($0) } ?? .failure(BenchError.failed("observation ended"))
        } catch {
            box.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

final class ResultBox: @unchecked Sendable {
    var result: Result<QueryChange<BenchObject>, Error>?
}

func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}

/// A document of the full-text workload.
struct TextDocument: Entity {
    var id: Id = 0
    @FullText(.porter) var body: String
}

/// Coffer on the full-text workload.
func runCofferText(_ workload: TextWorkload, directory: String) throws -> TextResult {
    var result = TextResult()
    let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 30))
    let box = store.box(for: TextDocument.self)
    var documents = workload.documents.map { TextDocument(body: $0) }
    let start = DispatchTime.now().uptimeNanoseconds
    try box.put(&documents)
    result.indexing = Double(documents.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    documents = []
    for (name, search) in workload.searches {
        let query = try box.query { TextDocument.body.matches(search) }.build()
        let (rate, found) = try timeSearch(workload.repetitions) { try query.findIds().count }
        result.searchesPerSecond[name] = rate
        result.matches[name] = found
    }
    let rare = workload.searches[0].query
    let scan = try box.query { TextDocument.body.contains(rare) }.build()
    result.containsScan = try timeSearch(3) { try scan.findIds().count }.0
    try store.close()
    return result
}
