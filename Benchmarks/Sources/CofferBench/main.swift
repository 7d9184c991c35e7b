import Foundation

// coffer-bench [--count N] [--repeat N] [--json] [--no-text] [--no-memory] [--no-sql] [--sql-count N]
// coffer-bench --write-cost [--count N] [--repeat N] [--json]   (the write cost of @Sync; see WriteCostReport.swift)
// Runs Coffer, raw LMDB in C and GRDB on the same workload, each in its own process and
// fresh directory, `--repeat` times (default 3, contenders interleaved so drift hits all
// alike), and prints the median objects per second per operation with the ratios of the
// medians, the medians of the per-round ratios, and each contender's spread ((max - min) /
// median over the runs).

let contenders = ["coffer", "lmdb", "grdb"]

func value(after flag: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: flag), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("coffer-bench: \(message)\n".utf8))
    exit(1)
}

var count = 1_000_000
if let text = value(after: "--count") {
    guard let parsed = Int(text) else { fail("--count needs a positive integer") }
    count = parsed
}
guard count >= 10 else { fail("--count must be at least 10") }

var repeats = 3
if let text = value(after: "--repeat") {
    guard let parsed = Int(text), (1...50).contains(parsed) else { fail("--repeat needs an integer from 1 to 50") }
    repeats = parsed
}

var textCount = 100_000
if let text = value(after: "--text-count") {
    guard let parsed = Int(text), parsed >= 10 else { fail("--text-count needs an integer of at least 10") }
    textCount = parsed
}

var sqlCount = 1_000_000
if let text = value(after: "--sql-count") {
    guard let parsed = Int(text), parsed >= 100 else { fail("--sql-count needs an integer of at least 100") }
    sqlCount = parsed
}

/// When this process is a child started with `flag` (`--contender X --directory D`): runs
/// the contender `run` names, prints its result as one JSON line and exits.
@MainActor func serveChild<Result: Encodable>(_ flag: String, _ what: String, _ run: (String, String) throws -> Result?) {
    guard let contender = value(after: flag) else { return }
    guard let directory = value(after: "--directory") else { fail("\(flag) needs --directory") }
    do {
        guard let result = try run(contender, directory) else { fail("unknown \(what)contender \(contender)") }
        print(String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
    } catch {
        fail("\(contender) (\(what.isEmpty ? "main" : what)workload): \(error)")
    }
    exit(0)
}

serveChild("--text-contender", "text ") { contender, directory -> TextResult? in
    let workload = TextWorkload(count: textCount)
    switch contender {
    case "coffer": return try runCofferText(workload, directory: directory)
    case "grdb": return try runGRDBText(workload, directory: directory)
    default: return nil
    }
}
serveChild("--sql-contender", "SQL ") { contender, directory -> SQLResult? in
    let workload = SQLWorkload(count: sqlCount)
    switch contender {
    case "coffer": return try runCofferSQL(workload, directory: directory)
    case "grdb": return try runGRDBSQL(workload, directory: directory)
    default: return nil
    }
}
serveChild("--contender", "") { contender, directory -> ContenderResult? in
    let workload = Workload(count: count)
    switch contender {
    case "coffer": return try runCoffer(workload, directory: directory)
    case "coffer-plain": return try runWriteCost(BenchObject.self, workload, directory: directory)
    case "coffer-synced": return try runWriteCost(SyncedBenchObject.self, workload, directory: directory)
    case "lmdb": return try runLMDB(workload, directory: directory)
    case "grdb": return try runGRDB(workload, directory: directory)
    case "floor": return runFloor(workload)
    default: return nil
    }
}

let json = CommandLine.arguments.contains("--json")
let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
/// Runs this program again as a child with `arguments` plus a fresh `--directory` (removed
/// afterwards) and decodes the JSON line it prints last.
func runChild<Result: Decodable>(_ arguments: [String], label: String, as type: Result.Type) -> Result {
    let directory = NSTemporaryDirectory() + "coffer-bench-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    FileHandle.standardError.write(Data("running \(label)...\n".utf8))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments + ["--directory", directory]
    let output = Pipe()
    process.standardOutput = output
    do { try process.run() } catch { fail("cannot start \(label): \(error)") }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0,
          let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
          let result = try? JSONDecoder().decode(Result.self, from: Data(line.utf8)) else {
        fail("\(label) failed (exit status \(process.terminationStatus))")
    }
    return result
}

if CommandLine.arguments.contains("--write-cost") {
    reportWriteCost(count: count, repeats: repeats, json: CommandLine.arguments.contains("--json")) { arguments, label in
        runChild(arguments, label: label, as: ContenderResult.self)
    }
    exit(0)
}

var runs: [String: [ContenderResult]] = [:]
for round in 1...repeats {
    for contender in contenders {
        runs[contender, default: []].append(runChild(["--contender", contender, "--count", String(count)],
                                                     label: "\(contender) with \(count) objects (run \(round) of \(repeats))",
                                                     as: ContenderResult.self))
    }
    // The materialisation floor on a fresh heap, in its own process.
    runs["floor", default: []].append(runChild(["--contender", "floor", "--count", String(count)],
                                               label: "the materialisation floor (run \(round) of \(repeats))", as: ContenderResult.self))
}
/// The memory round: each contender once more, its heap trimmed before every operation, for
/// the per-operation peaks (see `Memory`); its times are not used.
var memoryRuns: [String: ContenderResult] = [:]
if !CommandLine.arguments.contains("--no-memory") {
    for contender in contenders {
        memoryRuns[contender] = runChild(["--contender", contender, "--count", String(count), "--trim-heap"],
                                         label: "\(contender) with \(count) objects, heap trimmed between operations (memory round)",
                                         as: ContenderResult.self)
    }
}

/// (max - min) / median, as a percentage.
func spread(_ values: [Double]) -> Double {
    let middle = median(values)
    guard middle > 0, let low = values.min(), let high = values.max() else { return 0 }
    return (high - low) / middle * 100
}

/// Each contender's medians (the controller latencies of its median-insert run).
var results: [String: ContenderResult] = [:]
for (contender, list) in runs {
    var combined = ContenderResult()
    for key in Set(list.flatMap { $0.opsPerSecond.keys }) {
        combined.opsPerSecond[key] = median(list.compactMap { $0.opsPerSecond[key] })
    }
    combined.peakResidentKiB = Int(median(list.map { Double($0.peakResidentKiB) }))
    combined.fileBytes = Int(median(list.map { Double($0.fileBytes) }))
    let floors = list.compactMap(\.materializeFloor)
    combined.materializeFloor = floors.isEmpty ? nil : median(floors)
    for key in Set(list.flatMap { $0.minorFaults.keys }) {
        combined.minorFaults[key] = Int(median(list.compactMap { $0.minorFaults[key].map(Double.init) }))
    }
    let arrays = list.compactMap(\.objectArrayKiB)
    combined.objectArrayKiB = arrays.isEmpty ? nil : Int(median(arrays.map(Double.init)))
    combined.observe = list.sorted { ($0.opsPerSecond["insert"] ?? 0) < ($1.opsPerSecond["insert"] ?? 0) }[list.count / 2].observe
    results[contender] = combined
}

/// The Smart SQL workload, each contender `repeats` times (interleaved); medians of the
/// per-run medians.
var sqlRuns: [String: [SQLResult]] = [:]
if !CommandLine.arguments.contains("--no-sql") {
    for round in 1...repeats {
        for contender in ["coffer", "grdb"] {
            sqlRuns[contender, default: []].append(runChild(["--sql-contender", contender, "--sql-count", String(sqlCount)],
                                                            label: "\(contender) on \(sqlCount) employees, SQL (run \(round) of \(repeats))",
                                                            as: SQLResult.self))
        }
    }
}

var textResults: [String: TextResult] = [:]
for contender in ["coffer", "grdb"] where !CommandLine.arguments.contains("--no-text") {
    textResults[contender] = runChild(["--text-contender", contender, "--text-count", String(textCount)],
                                      label: "\(contender) on \(textCount) text documents", as: TextResult.self)
}

func formatRate(_ value: Double) -> String {
    value >= 1e6 ? String(format: "%.2fM", value / 1e6) : String(format: "%.0fk", value / 1e3)
}

func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }

print("coffer-bench: \(count) objects, medians of \(repeats) run\(repeats == 1 ? "" : "s") per contender, objects per second (higher is better)")
/// The median over rounds of `contender`'s rate divided by `other`'s in the same round: the
/// runs of one round are adjacent in time, so a drift of the machine cancels out of each
/// ratio, where the ratio of two medians can pair a fast run with a slow one.
@MainActor func roundRatio(_ contender: String, _ other: String, _ key: String) -> Double {
    let mine = runs[contender] ?? [], theirs = runs[other] ?? []
    return median(zip(mine, theirs).compactMap { a, b in
        guard let x = a.opsPerSecond[key], let y = b.opsPerSecond[key], y > 0 else { return nil }
        return x / y
    })
}

print(pad("operation", 14) + pad("Coffer", 10) + pad("LMDB (C)", 10) + pad("GRDB", 10) + pad("Coffer/C", 10) + pad("Coffer/GRDB", 13)
      + pad("per round /C /GRDB", 20) + pad("spread Coffer/C/GRDB", 24))
for operation in Operation.allCases {
    let key = operation.rawValue
    let coffer = results["coffer"]?.opsPerSecond[key] ?? 0
    let lmdb = results["lmdb"]?.opsPerSecond[key] ?? 0
    let grdb = results["grdb"]?.opsPerSecond[key] ?? 0
    let spreads = contenders.map { contender in String(format: "%.0f%%", spread((runs[contender] ?? []).compactMap { $0.opsPerSecond[key] })) }
    let perRound = String(format: "%.2f / %.1f", roundRatio("coffer", "lmdb", key), roundRatio("coffer", "grdb", key))
    print(pad(key, 14) + pad(formatRate(coffer), 10) + pad(formatRate(lmdb), 10) + pad(formatRate(grdb), 10)
          + pad(String(format: "%.2f", coffer / lmdb), 10) + pad(String(format: "%.1f", coffer / grdb), 13)
          + pad(perRound, 20) + pad(spreads.joined(separator: "/"), 24))
}
print(pad("peak RSS MiB", 14) + contenders.map { pad(String((results[$0]?.peakResidentKiB ?? 0) / 1024), 10) }.joined())
print(pad("file MiB", 14) + contenders.map { pad(String((results[$0]?.fileBytes ?? 0) >> 20), 10) }.joined())
if !memoryRuns.isEmpty {
    print("Memory round (each contender once more, the heap trimmed and the peak reset before each operation), peak resident MiB:")
    for operation in Operation.allCases {
        print(pad(operation.rawValue, 14) + contenders.map { pad(String((memoryRuns[$0]?.peakDuring[operation.rawValue] ?? 0) / 1024), 10) }.joined())
    }
    print(pad("process peak", 14) + contenders.map { pad(String((memoryRuns[$0]?.peakResidentKiB ?? 0) / 1024), 10) }.joined())
    if let during = memoryRuns["coffer"]?.peakDuring, let floor = during["floor"], let observe = during["observe"] {
        print("Coffer's process between its operations: \(floor / 1024) MiB building the floor's array, \(observe / 1024) MiB measuring query controllers")
    }
}
if let arrayKiB = results["floor"]?.objectArrayKiB {
    print("\(count) BenchObjects in a Swift array take \(arrayKiB / 1024) MiB: the array Coffer's and GRDB's insert are given"
          + " and their readAll returns; C's program holds no objects")
}
let freshFloors = (runs["floor"] ?? []).compactMap(\.materializeFloorFresh)
if !freshFloors.isEmpty { results["coffer"]?.materializeFloorFresh = median(freshFloors) }
if let floor = results["coffer"]?.materializeFloor, let fresh = results["coffer"]?.materializeFloorFresh,
   let readAll = results["coffer"]?.opsPerSecond["readAll"] {
    print("Building the same [BenchObject] in Swift without any store: \(formatRate(fresh)) objects/s on the fresh heap"
          + " (readAll at \(String(format: "%.2f", readAll / fresh)) of it), \(formatRate(floor)) on a warm heap"
          + " (readAll at \(String(format: "%.2f", readAll / floor)))")
}
print(pad("page faults", 14) + contenders.map { contender in
    pad(String(results[contender]?.minorFaults["readAll"] ?? 0), 10)
}.joined() + "   (minor faults during readAll: first touches of heap and mapped pages)")

if let observe = results["coffer"]?.observe {
    print("Query controller over \(observe.results) results (Coffer only; C and GRDB have none), commit -> change set delivered:")
    for item in observe.cases {
        print("  \(item.label): median \(String(format: "%.0f", item.medianMicros)) µs, p90 \(String(format: "%.0f", item.p90Micros)) µs"
              + " (the one-object write itself: \(String(format: "%.0f", item.writeMedianMicros)) µs; creating the controller: \(String(format: "%.1f", item.loadMicros / 1000)) ms)")
    }
}

if let coffer = textResults["coffer"], let fts = textResults["grdb"] {
    print("\nFull-text: \(textCount) documents of 50-70 Zipf-distributed words, Porter stemming (Coffer @FullText(.porter), SQLite FTS5 'porter unicode61' via GRDB)")
    print(pad("operation", 16) + pad("Coffer", 10) + pad("FTS5", 10) + pad("Coffer/FTS5", 13) + pad("matches", 12))
    print(pad("indexing docs/s", 16) + pad(formatRate(coffer.indexing), 10) + pad(formatRate(fts.indexing), 10)
          + pad(String(format: "%.2f", coffer.indexing / fts.indexing), 13))
    for (name, _) in TextWorkload(count: 10).searches {
        let a = coffer.searchesPerSecond[name] ?? 0, b = fts.searchesPerSecond[name] ?? 0
        let agree = coffer.matches[name] == fts.matches[name] ? "\(coffer.matches[name] ?? 0)" : "\(coffer.matches[name] ?? 0)!=\(fts.matches[name] ?? 0)"
        print(pad(name + " q/s", 16) + pad(String(format: "%.0f", a), 10) + pad(String(format: "%.0f", b), 10)
              + pad(String(format: "%.2f", a / b), 13) + pad(agree, 12))
    }
    if let scan = coffer.containsScan {
        print("Coffer contains() scan for the rare term: \(String(format: "%.1f", scan)) q/s (with the index: \(String(format: "%.0f", coffer.searchesPerSecond["rare term"] ?? 0)) q/s)")
    }
}

if let cofferRuns = sqlRuns["coffer"], let sqliteRuns = sqlRuns["grdb"] {
    print("\nSmart SQL: \(sqlCount) employees in 100 departments, milliseconds per statement (lower is better), medians of \(repeats) runs of medians of 5")
    print(pad("statement", 20) + pad("Coffer", 10) + pad("SQLite", 10) + pad("SQLite/Coffer", 15) + pad("same rows", 11))
    for statement in SQLWorkload(count: 10).statements {
        let coffer = median(cofferRuns.compactMap { $0.milliseconds[statement.name] })
        let sqlite = median(sqliteRuns.compactMap { $0.milliseconds[statement.name] })
        let agree = zip(cofferRuns, sqliteRuns).allSatisfy { $0.rows[statement.name] == $1.rows[statement.name] }
        print(pad(statement.name, 20) + pad(String(format: "%.1f", coffer), 10) + pad(String(format: "%.1f", sqlite), 10)
              + pad(String(format: "%.2f", sqlite / coffer), 15) + pad(agree ? "yes" : "NO", 11))
    }
}

if json {
    var object: [String: [String: Double]] = [:]
    for contender in contenders {
        var ops = results[contender]?.opsPerSecond ?? [:]
        ops["peakResidentKiB"] = Double(results[contender]?.peakResidentKiB ?? 0)
        ops["fileBytes"] = Double(results[contender]?.fileBytes ?? 0)
        if let floor = results[contender]?.materializeFloor { ops["materializeFloor"] = floor }
        if let fresh = results[contender]?.materializeFloorFresh { ops["materializeFloorFresh"] = fresh }
        if contender != "lmdb" {
            for operation in Operation.allCases { ops["perRoundRatioToC \(operation.rawValue)"] = roundRatio(contender, "lmdb", operation.rawValue) }
        }
        for (operation, faults) in results[contender]?.minorFaults ?? [:] { ops["minorFaults \(operation)"] = Double(faults) }
        for (operation, peak) in memoryRuns[contender]?.peakDuring ?? [:] { ops["trimmedPeakDuringKiB \(operation)"] = Double(peak) }
        if let memory = memoryRuns[contender] { ops["trimmedPeakResidentKiB"] = Double(memory.peakResidentKiB) }
        if let arrayKiB = results["floor"]?.objectArrayKiB, contender == "coffer" { ops["objectArrayKiB"] = Double(arrayKiB) }
        for item in results[contender]?.observe?.cases ?? [] { ops["observe \(item.label) medianMicros"] = item.medianMicros }
        object[contender] = ops
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(object), as: UTF8.self))
}
