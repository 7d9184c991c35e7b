import Foundation

/// `coffer-bench --write-cost`: what `@Sync` costs a write, in time. Runs `coffer-plain` and
/// `coffer-synced` (the same writes on the same entity without and with `@Sync`, see
/// `runWriteCost`) `repeats` times each, alternately, each run in a fresh process and
/// directory, and prints per operation the median objects per second of each and the time
/// ratio synced / plain: of the medians, and the median of the per-round ratios (a round's two
/// runs are adjacent in time, so a drift of the machine cancels out of its ratio).
@MainActor func reportWriteCost(count: Int, repeats: Int, json: Bool, run: ([String], String) -> ContenderResult) {
    var plain: [ContenderResult] = [], synced: [ContenderResult] = []
    for round in 1...repeats {
        for (contender, into) in [("coffer-plain", 0), ("coffer-synced", 1)] {
            let result = run(["--contender", contender, "--count", String(count)], "\(contender) with \(count) objects (run \(round) of \(repeats))")
            if into == 0 { plain.append(result) } else { synced.append(result) }
        }
    }
    let operations = [Operation.insert.rawValue, Operation.update.rawValue, Operation.remove.rawValue]
        + SingleWriteOperation.allCases.map(\.rawValue)
    func rates(_ runs: [ContenderResult], _ key: String) -> [Double] { runs.compactMap { $0.opsPerSecond[key] } }
    print("coffer-bench --write-cost: \(count) objects in one transaction per operation, then \(singleWriteCount(count)) objects"
          + " one per transaction (default durability); medians of \(repeats) runs, objects per second")
    print(pad("operation", 12) + pad("plain", 10) + pad("@Sync", 10) + pad("time ratio", 12) + pad("per round", 11)
          + pad("spread plain/@Sync", 20))
    var figures: [String: Double] = [:]
    for key in operations {
        let a = median(rates(plain, key)), b = median(rates(synced, key))
        let perRound = median(zip(rates(plain, key), rates(synced, key)).compactMap { x, y in y > 0 ? x / y : nil })
        let spreads = String(format: "%.0f%%/%.0f%%", spread(rates(plain, key)), spread(rates(synced, key)))
        print(pad(key, 12) + pad(formatRate(a), 10) + pad(formatRate(b), 10) + pad(String(format: "%.2fx", b > 0 ? a / b : 0), 12)
              + pad(String(format: "%.2fx", perRound), 11) + pad(spreads, 20))
        figures["plain \(key)"] = a
        figures["synced \(key)"] = b
        figures["timeRatio \(key)"] = perRound
    }
    if json, let data = try? JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys]) {
        print(String(decoding: data, as: UTF8.self))
    }
}
