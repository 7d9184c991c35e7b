import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The pull cursor: transactions commit out of order, and a puller must still see every row.
/// coffer_pull reads only below the visibility horizon (the oldest transaction still running),
/// so a row is delivered once every transaction that might precede it has ended.
@Suite struct CursorTests {
    /// The negative control: a sequence cursor (`id > last`) skips a row whose transaction took
    /// its number first but committed last. The same interleaving through coffer_pull holds the
    /// later row back while the earlier transaction is open, then delivers both.
    @Test func aSequenceCursorLosesARowThatThePullCursorKeeps() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { reader in
            try await reader.run("CREATE TABLE \(s).sequenced (id bigserial PRIMARY KEY, title text)")
            try await withConnection { slow in
                try await withConnection { fast in
                    // The slow transaction takes sequence number 1 and stays open.
                    try await slow.run("BEGIN")
                    try await slow.run("INSERT INTO \(s).sequenced (title) VALUES ('slow')")
                    try await slow.run("INSERT INTO \(s).\"Note\" (title) VALUES ('slow')")
                    // The fast one takes number 2 and commits at once.
                    try await fast.run("INSERT INTO \(s).sequenced (title) VALUES ('fast')")
                    try await fast.run("INSERT INTO \(s).\"Note\" (title) VALUES ('fast')")

                    // Sequence cursor: sees 2, moves past 1 for good.
                    let seen = try await reader.rows("SELECT id::text FROM \(s).sequenced WHERE id > 0 ORDER BY id")
                    #expect(seen.map { $0[0] } == ["2"])
                    // Pull cursor: the horizon is at most the slow transaction, so the fast
                    // row is held back.
                    let stalled = try await reader.pull(s, "Note", cursor: "0", limit: 100)
                    #expect((stalled["changes"] as? [Any])?.isEmpty == true)
                    let stalledCursor = try #require(stalled["cursor"] as? String)

                    try await slow.run("COMMIT")
                    let lost = try await reader.rows("SELECT id::text FROM \(s).sequenced WHERE id > 2 ORDER BY id")
                    #expect(lost.isEmpty, "the sequence cursor never returns row 1")
                    #expect(try await reader.value("SELECT count(*)::text FROM \(s).sequenced") == "2")

                    let after = try await reader.pullAll(s, "Note", cursor: stalledCursor)
                    let titles = after.changes.compactMap { ($0["fields"] as? [String: Any])?["title"] as? String }
                    #expect(Set(titles) == ["slow", "fast"])
                }
            }
        }
    }

    /// Sixteen SQL writers commit in random order (random sleeps before COMMIT), inserting,
    /// updating and deleting, while a puller pages through coffer_pull with a small page. The
    /// pulled state equals the table; a sequence cursor run alongside is reported.
    @Test func concurrentWritersCommittingOutOfOrderLoseNothing() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let writers = 16
        let transactionsPerWriter = 12
        // A bound for a hang, far above the few seconds it takes alone: the whole suite runs at
        // once, and other tests' installs hold the horizon back for a while.
        let deadline = Date().addingTimeInterval(150)
        try await withInstalled(schema) { puller in
            let done = Flag()
            let pulled = try await withThrowingTaskGroup(of: [String: String]?.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        try await withConnection { connection in
                            var generator = SystemRandomNumberGenerator()
                            for transaction in 0..<transactionsPerWriter {
                                try await connection.run("BEGIN")
                                try await connection.run(
                                    "INSERT INTO \(s).\"Note\" (title) VALUES ('w\(writer)-t\(transaction)-a'), ('w\(writer)-t\(transaction)-b')")
                                if transaction % 3 == 2 {
                                    // Move an earlier row of this writer forward, delete another.
                                    try await connection.run(
                                        "UPDATE \(s).\"Note\" SET pinned = NOT coalesce(pinned, false) WHERE title = 'w\(writer)-t\(transaction - 1)-a'")
                                    try await connection.run("DELETE FROM \(s).\"Note\" WHERE title = 'w\(writer)-t\(transaction - 2)-b'")
                                }
                                try await Task.sleep(for: .milliseconds(Int.random(in: 0...25, using: &generator)))
                                try await connection.run("COMMIT")
                            }
                        }
                        return nil
                    }
                }
                group.addTask {
                    var changes: [[String: Any]] = []
                    var cursor = "0"
                    // Every writer's transaction id is below `target`, read once they are all
                    // done; the puller is through when its cursor reaches it. (Other suites'
                    // open transactions can hold the horizon back for a while: the horizon is
                    // the cluster's.)
                    var target: UInt64?
                    for _ in 0..<100_000 {
                        guard Date() < deadline else { Issue.record("puller timed out"); break }
                        if target == nil, await done.isSet {
                            target = UInt64(try await puller.value("SELECT pg_snapshot_xmax(pg_current_snapshot())::text") ?? "")
                        }
                        let page = try await puller.pull(s, "Note", cursor: cursor, limit: 7)
                        let got = page["changes"] as? [[String: Any]] ?? []
                        changes += got
                        cursor = try #require(page["cursor"] as? String)
                        let more = page["more"] as? Bool == true
                        if let target, !more, let reached = UInt64(cursor), reached >= target { break }
                        if got.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                    }
                    // What the puller ends with, as "title|pinned" per sync id.
                    return replay(changes).mapValues { fields in
                        let pinned = (fields["pinned"] as? Bool).map { "\($0)" } ?? "null"
                        return "\(fields["title"] as? String ?? "-")|\(pinned)"
                    }
                }
                var result: [String: String] = [:]
                var writersLeft = writers
                while let next = try await group.next() {
                    if let changes = next { result = changes } else {
                        writersLeft -= 1
                        if writersLeft == 0 { await done.set() }
                    }
                }
                return result
            }
            let rows = try await puller.rows("SELECT sync_id::text, title || '|' || coalesce(pinned::text, 'null') FROM \(s).\"Note\"")
            #expect(rows.count == writers * transactionsPerWriter * 2 - writers * (transactionsPerWriter / 3))
            let table = Dictionary(uniqueKeysWithValues: rows.map { ($0[0] ?? "", $0[1] ?? "") })
            #expect(pulled == table)
        }
    }
}

/// A one-way switch shared between tasks.
actor Flag {
    private(set) var isSet = false
    func set() { isSet = true }
}
