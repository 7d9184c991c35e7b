import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A measuring harness, not a test: pushes creations and then one-field updates of
/// `COFFER_PUSH_BENCH` objects (e.g. 100000) in batches of `COFFER_PUSH_BATCH` (1000) from one
/// client over one connection, and prints changes per second, set-based and one by one.
/// Runs only when `COFFER_PUSH_BENCH` is set; it asserts nothing about time.
///
///     COFFER_PUSH_BENCH=100000 swift test --filter PushThroughputTests
@Suite struct PushThroughputTests {
    static let count = Int(ProcessInfo.processInfo.environment["COFFER_PUSH_BENCH"] ?? "") ?? 0

    @Test(.enabled(if: count > 0)) func pushThroughput() async throws {
        let batchSize = max(1, Int(ProcessInfo.processInfo.environment["COFFER_PUSH_BATCH"] ?? "") ?? 1000)
        for oneByOne in [false, true] {
            let schema = try SyncSchema([BenchItem.self], schema: uniqueSchemaName("bench"))
            let ids = (0..<Self.count).map { _ in UUID() }
            let client = UUID()
            let clock = hlcNow(plus: -60_000)
            func batches(update: Bool) -> [String] {
                stride(from: 0, to: ids.count, by: batchSize).map { start in
                    let changes = (start..<min(start + batchSize, ids.count)).map { i in
                        let mid = update ? ids.count + i + 1 : i + 1
                        let id = ids[i].uuidString
                        if update {
                            return #"{"mid": \#(mid), "entity": "BenchItem", "id": "\#(id)", "op": "upsert", "fields": {"count": \#(i * 2)}, "clocks": {"count": "\#(clock + 1)"}}"#
                        }
                        return #"{"mid": \#(mid), "entity": "BenchItem", "id": "\#(id)", "op": "upsert", "create": true, "fields": {"title": "item \#(i)", "count": \#(i), "score": \#(Double(i) / 7), "done": \#(i % 2 == 0)}, "clocks": {"title": "\#(clock)", "count": "\#(clock)", "score": "\#(clock)", "done": "\#(clock)"}}"#
                    }
                    return "[" + changes.joined(separator: ",") + "]"
                }
            }
            let creations = batches(update: false)
            let updates = batches(update: true)
            try await withInstalled(schema) { connection in
                if oneByOne { try await connection.run("SET coffer.push_one_by_one = on") }
                for (label, list) in [("creations", creations), ("one-field updates", updates)] {
                    let start = ContinuousClock.now
                    for batch in list {
                        let reply = try await connection.push(schema.schemaName, client: client, json: batch)
                        #expect((reply["rejected"] as? [Any])?.isEmpty == true)
                    }
                    let seconds = (ContinuousClock.now - start) / .seconds(1)
                    let path = oneByOne ? "one by one" : "set-based"
                    print("coffer_push \(path): \(Self.count) \(label) in batches of \(batchSize): "
                          + "\(Int(Double(Self.count) / seconds)) changes/s")
                }
                #expect(try await connection.value("SELECT count(*)::text FROM \(schema.schemaName).\"BenchItem\" WHERE count = 0") == "1")
            }
        }
    }
}
