import Foundation

// coffer-sync-bench --port P [--host H] [--user U] [--database D] [--count N] [--repeat R]
//                   [--samples S] [--json]
// Two replicas of one synced entity through one PostgreSQL server (Benchmarks/sync.sh starts a
// private one): creations pushed, the initial sync of an empty replica, one-field updates
// pushed and pulled with the payload bytes per update, and the latency of a change between two
// running replicas; with the floors of plain SQL on the same server in the same round. Each
// round uses a fresh schema and fresh stores; the report gives the medians over the rounds.

func value(after flag: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: flag), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("coffer-sync-bench: \(message)\n".utf8))
    exit(1)
}

func integer(_ flag: String, default fallback: Int, range: ClosedRange<Int>) -> Int {
    guard let text = value(after: flag) else { return fallback }
    guard let parsed = Int(text), range.contains(parsed) else { fail("\(flag) needs an integer from \(range.lowerBound) to \(range.upperBound)") }
    return parsed
}

var server = Server()
server.host = value(after: "--host") ?? server.host
server.port = integer("--port", default: server.port, range: 1...65535)
server.user = value(after: "--user") ?? server.user
server.database = value(after: "--database") ?? server.database
let count = integer("--count", default: 100_000, range: 10...10_000_000)
let repeats = integer("--repeat", default: 3, range: 1...20)
let samples = integer("--samples", default: 200, range: 1...100_000)

var rounds: [RoundResult] = []
for round in 1...repeats {
    do {
        rounds.append(try await runRound(round, server: server, count: count, samples: samples))
    } catch {
        fail("round \(round): \(error)")
    }
    FileHandle.standardError.write(Data("round \(round) of \(repeats) done\n".utf8))
}

@MainActor func median(_ key: KeyPath<RoundResult, Double>) -> Double {
    let values = rounds.map { $0[keyPath: key] }.sorted()
    return values.count % 2 == 1 ? values[values.count / 2] : (values[values.count / 2 - 1] + values[values.count / 2]) / 2
}

if CommandLine.arguments.contains("--json") {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(rounds), as: UTF8.self))
    exit(0)
}

func rate(_ value: Double) -> String { String(format: "%10.0f /s", value) }
func ms(_ value: Double) -> String { String(format: "%10.1f ms", value) }
func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2fx", a / b) }

print("coffer-sync-bench: \(count) objects, \(samples) latency samples, medians of \(repeats) rounds")
print("")
print("| measure | Coffer sync | floor (plain SQL) | Coffer / floor | target |")
print("|---|---:|---:|---:|---:|")
print("| push, creations | \(rate(median(\.pushCreations))) | \(rate(median(\.floorInsert))) | \(ratio(median(\.pushCreations), median(\.floorInsert))) | >= 20000 /s |")
print("| server's time for the batches (overlaps the replica's) | \(String(format: "%8.2f s", median(\.pushCreationsServerSeconds))) of \(String(format: "%.2f s", Double(count) / median(\.pushCreations))) | | | |")
print("| push, one-field updates | \(rate(median(\.pushUpdates))) | | | >= 20000 /s |")
let initial = median(\.initialSyncSeconds)
print("| initial sync of \(count) | \(String(format: "%8.2f s", initial)) (\(rate(Double(count) / initial))) | \(rate(median(\.floorSelect))) | \(ratio(Double(count) / initial, median(\.floorSelect))) | <= 5 s for 100000 |")
print("| server's time for the pages (overlaps the replica's) | \(String(format: "%8.2f s", median(\.initialSyncServerSeconds))) | | | |")
print("| pull, one-field updates | \(rate(median(\.pullUpdates))) | | | |")
print("| echo pull after pushing creations | \(String(format: "%8.2f s", median(\.echoPullSeconds))) | | | |")
print("| change seen by the other replica, p50 | \(ms(median(\.latencyP50))) | | | <= 100 ms |")
print("| change seen by the other replica, p99 | \(ms(median(\.latencyP99))) | | | <= 500 ms |")
print("| bytes pushed per one-field update | \(String(format: "%10.0f", median(\.pushBytesPerUpdate))) | | | |")
print("| bytes pulled per one-field update | \(String(format: "%10.0f", median(\.pullBytesPerUpdate))) | | | |")
