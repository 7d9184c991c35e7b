import Foundation
import RawLMDB

/// The operations every contender runs, in this order, with the objects-per-second each reports.
enum Operation: String, CaseIterable {
    case insert, readAll, getRandom, indexEquality, scanQuery, update, remove
}

/// The data and access patterns shared by all contenders, derived from the object number so
/// that C, Coffer and GRDB store exactly the same values.
struct Workload {
    let count: Int
    /// Every id once, in a random order fixed by a seed.
    let randomIds: [UInt64]
    /// count/10 ids whose names the index look-ups search.
    let lookupIds: [UInt64]
    /// `i32 < scanThreshold` matches 10% of the objects.
    let scanThreshold: Int32 = 100

    init(count: Int) {
        self.count = count
        var generator = SeededGenerator(seed: 2026)
        randomIds = (1...UInt64(count)).shuffled(using: &generator)
        lookupIds = Array(randomIds.prefix(max(count / 10, 1)))
    }

    /// `user-` and the number zero-padded to 7 digits, as C's `sprintf("user-%07llu")`; built
    /// in place, because the look-up loops build one per look-up and string concatenation
    /// cost more than the C contender's whole look-up.
    static func name(_ i: UInt64) -> String {
        var width = 1
        var rest = i / 10
        while rest > 0 { width += 1; rest /= 10 }
        width = max(width, 7)
        return String(unsafeUninitializedCapacity: 5 + width) { buffer in
            // "user-", byte by byte (iterating the literal's UTF-8 view cost 380 instructions).
            buffer[0] = 0x75; buffer[1] = 0x73; buffer[2] = 0x65; buffer[3] = 0x72; buffer[4] = 0x2D
            var value = i
            for position in stride(from: 4 + width, through: 5, by: -1) {
                buffer[position] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
            return 5 + width
        }
    }
    static func i32(_ i: UInt64) -> Int32 { Int32(i % 1000) }
    static func i64(_ i: UInt64) -> Int64 { Int64(i) * 1_000_003 }
    static func double(_ i: UInt64) -> Double { Double(i) * 0.5 }
    static func float(_ i: UInt64) -> Float { Float(i) }
    static func bool(_ i: UInt64) -> Bool { i % 2 == 0 }
    static func blob(_ i: UInt64) -> Data { Data((0..<16).map { UInt8(truncatingIfNeeded: i &+ UInt64($0)) }) }
}

/// SplitMix64: the same shuffle on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What one contender measured.
struct ContenderResult: Codable {
    var opsPerSecond: [String: Double] = [:]
    var peakResidentKiB: Int = 0
    /// The process's peak resident memory (KiB) when each operation ended: which operation
    /// set the peak.
    var peakAfter: [String: Int] = [:]
    /// The peak resident memory (KiB) while each operation ran (and while the floor and
    /// observation measurements ran, under their names). In the memory round the heap is
    /// trimmed before each (see `Memory`), so each is the operation's own need.
    var peakDuring: [String: Int] = [:]
    /// Floor only: resident memory (KiB) of the million `BenchObject`s the materialisation
    /// floor builds, the same array readAll returns and insert is given.
    var objectArrayKiB: Int?
    /// Minor page faults per operation (first touches of mapped file pages and of fresh heap
    /// pages): time the instruction counts do not show.
    var minorFaults: [String: Int] = [:]
    var fileBytes: Int = 0
    /// Coffer only: objects per second for building the same Swift values without a store.
    var materializeFloor: Double?
    /// Coffer only: minor page faults while building them.
    var materializeFloorFaults: Int?
    /// Coffer only: the same floor measured first, on the process's fresh heap.
    var materializeFloorFresh: Double?
    var materializeFloorFreshFaults: Int?
    /// Coffer only: query controller latencies.
    var observe: ObserveResult?
}

/// Query controller latencies over the scan query's matches.
struct ObserveResult: Codable {
    struct Case: Codable {
        var label: String
        /// Creating the controller: running the query and loading the window.
        var loadMicros: Double
        /// From a committed one-object write to the change set delivered.
        var medianMicros: Double
        var p90Micros: Double
        /// The write itself (a put in its own transaction, with its commit).
        var writeMedianMicros: Double
    }
    var results: Int
    var cases: [Case] = []
}

/// Times `body`, checks it did `expected` objects of work, and records objects per second.
/// Under callgrind, the instructions of `body` go to a dump of their own labelled
/// `operation objects` (see `Benchmarks/instructions.sh`).
func measure(_ operation: Operation, objects: Int, into result: inout ContenderResult, _ body: () throws -> Int) throws {
    try measure(label: operation.rawValue, objects: objects, into: &result, body)
}

/// `measure` for the single-object writes of the write-cost comparison.
func measure(_ operation: SingleWriteOperation, objects: Int, into result: inout ContenderResult, _ body: () throws -> Int) throws {
    try measure(label: operation.rawValue, objects: objects, into: &result, body)
}

func measure(label: String, objects: Int, into result: inout ContenderResult, _ body: () throws -> Int) throws {
    // The memory bookkeeping stays outside the marks, so callgrind counts the operation alone.
    Memory.beginPhase(&result)
    bench_callgrind_mark("setup")
    defer {
        Memory.endPhase(label, &result)
        result.peakAfter[label] = result.peakResidentKiB
    }
    defer { bench_callgrind_mark("\(label) \(objects)") }
    let faultsBefore = minorFaultCount()
    let start = DispatchTime.now().uptimeNanoseconds
    let done = try body()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    result.minorFaults[label] = minorFaultCount() - faultsBefore
    guard done == objects else {
        throw BenchError.wrongResult("\(label) processed \(done) objects, expected \(objects)")
    }
    result.opsPerSecond[label] = Double(objects) / seconds
}

enum BenchError: Error, CustomStringConvertible {
    case wrongResult(String)
    case failed(String)
    var description: String {
        switch self {
        case .wrongResult(let text), .failed(let text): return text
        }
    }
}

/// Resident memory of this process (Linux's `/proc/self`), for the per-operation peaks.
///
/// `measure` resets the kernel's high-water mark before every operation (outside the clock)
/// and reads it when the operation ends; the process's overall peak is the highest mark seen.
///
/// glibc keeps the memory a process frees (the million objects of an earlier operation) and
/// reuses it, so an operation's peak can include, or hide, what earlier operations left
/// behind. With `--trim-heap` (the orchestrator's memory round) the heap is also trimmed
/// before each operation, so each peak is the operation's own need. The timed rounds do not
/// trim: a trimmed heap makes every later allocation fault in fresh pages (measured: readAll
/// and scanQuery 20-30% slower for Coffer, C unaffected as it allocates nothing), which is
/// not how an application's heap behaves.
enum Memory {
    /// Whether this process trims its heap between operations (`--trim-heap`).
    static let trimsBetweenOperations = CommandLine.arguments.contains("--trim-heap")

    /// Starts a phase whose peak is recorded: keeps the process's peak so far, trims the heap
    /// and resets the high-water mark.
    static func beginPhase(_ result: inout ContenderResult) {
        result.peakResidentKiB = max(result.peakResidentKiB, peakKiB())
        if trimsBetweenOperations { trimHeap() }
        resetPeak()
    }

    /// Records the peak of the phase `label` (an operation, or the floor and observation
    /// measurements, which run between operations).
    static func endPhase(_ label: String, _ result: inout ContenderResult) {
        let peak = peakKiB()
        result.peakDuring[label] = peak
        result.peakResidentKiB = max(result.peakResidentKiB, peak)
    }

    /// Gives the heap's free pages back to the system (glibc's `malloc_trim`).
    static func trimHeap() { _ = mallocTrim(0) }

    /// Resets the peak resident set size to the current one (writing 5 to `clear_refs`,
    /// Linux 4.0 and later). A failure leaves the process's peak in place, which only makes
    /// the per-operation peaks larger.
    static func resetPeak() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }

    /// The peak resident set size since the last reset, in KiB (`VmHWM`).
    static func peakKiB() -> Int { statusField("VmHWM:") }

    /// The resident set size now, in KiB (`VmRSS`).
    static func residentKiB() -> Int { statusField("VmRSS:") }

    private static func statusField(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
        // "VmHWM:\t  123456 kB"
        return Int(line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
    }
}

@_silgen_name("malloc_trim") private func mallocTrim(_ pad: Int) -> Int32

/// The process's peak resident memory so far, in KiB: the highest of the marks `measure`
/// read and the current one.
func peakResidentKiB(_ result: ContenderResult) -> Int {
    max(result.peakResidentKiB, Memory.peakKiB())
}

/// Minor page faults of this process so far.
func minorFaultCount() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_minflt)
}

/// Bytes of all files in a directory.
func directoryBytes(_ path: String) -> Int {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return files.reduce(0) { total, file in
        total + ((try? FileManager.default.attributesOfItem(atPath: path + "/" + file)[.size] as? Int) ?? 0)
    }
}
