import Foundation
import RawLMDB

/// The same workload in C against LMDB: the floor Coffer is measured against.
func runLMDB(_ workload: Workload, directory: String) throws -> ContenderResult {
    var result = ContenderResult()
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let opened = raw_open(directory)
    guard opened == 0 else { throw BenchError.failed("raw_open failed: \(opened)") }
    defer { raw_close() }
    let n = workload.count
    try measure(.insert, objects: n, into: &result) { raw_insert(n) }
    try measure(.readAll, objects: n, into: &result) { raw_read_all() }
    try measure(.getRandom, objects: n, into: &result) {
        workload.randomIds.withUnsafeBufferPointer { raw_get_random($0.baseAddress, $0.count) }
    }
    try measure(.indexEquality, objects: workload.lookupIds.count, into: &result) {
        workload.lookupIds.withUnsafeBufferPointer { raw_index_equality($0.baseAddress, $0.count) }
    }
    try measure(.scanQuery, objects: n / 10, into: &result) { raw_scan_query(workload.scanThreshold) }
    try measure(.update, objects: n, into: &result) { raw_update() }
    result.fileBytes = directoryBytes(directory)
    try measure(.remove, objects: n, into: &result) { raw_remove(n) }
    result.peakResidentKiB = peakResidentKiB(result)
    return result
}
