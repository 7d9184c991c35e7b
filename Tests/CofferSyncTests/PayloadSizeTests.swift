@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The entity of the size tests: a name to find an object by, and two values that can be
/// large (text travels as escaped JSON, bytes as base64).
@Sync
struct SizedBlob: Entity {
    var id: Id = 0
    var name = ""
    var body = ""
    var data = Data()
    var doc: JSONValue = [:]
}

/// Sync must never wedge on size: push batches are cut by bytes as well as by count, a
/// change too large for any push is refused locally and recorded, pull pages end once their
/// rows pass a byte budget, and a row too large to send goes as a marker the replica
/// reports, while the rest of the entity's rows arrive.
@Suite(.timeLimit(.minutes(3))) struct PayloadSizeTests {
    /// Text of `count` scalars with quotes, backslashes, control characters and non-ASCII
    /// letters, so that its JSON is longer than the text.
    static func text(_ count: Int, using random: inout some RandomNumberGenerator) -> String {
        let alphabet = Array("abcdefghij \"\\\n\t\u{1}é中🙂")
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
    }

    static func bytes(_ count: Int, using random: inout some RandomNumberGenerator) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        return Data(bytes)
    }

    /// Two replicas of a fresh schema, the first pushing through `transport`'s hook.
    static func replicas(_ schema: String, options: SyncReplica.Options,
                         hook: @escaping @Sendable (InterceptingTransport.Event) -> Void) async throws
        -> (a: TemporaryStore, b: TemporaryStore, replicaA: SyncReplica, replicaB: SyncReplica)
    {
        let (a, b) = (try TemporaryStore(), try TemporaryStore())
        let transport = InterceptingTransport(try await testTransport(schema: schema, timeout: .seconds(30)), hook: hook)
        let replicaA = try SyncReplica(store: a.store, entities: [SizedBlob.self], transport: transport, options: options)
        let replicaB = try SyncReplica(store: b.store, entities: [SizedBlob.self],
                                       transport: try await testTransport(schema: schema, timeout: .seconds(30)))
        return (a, b, replicaA, replicaB)
    }

    @Test func batchesAreCutByBytesAndEverythingArrivesBitForBit() async throws {
        let schema = try SyncSchema([SizedBlob.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let batches = LockedState<[(count: Int, bytes: Int)]>([])
            var options = SyncReplica.Options()
            options.pushBatchBytes = 64 << 10
            let (a, b, replicaA, replicaB) = try await Self.replicas(s, options: options) { event in
                if case .beforePush(_, let batch) = event { batches.withLock { $0.append((batch.count, batch.json.utf8.count)) } }
            }
            defer { a.cleanUp(); b.cleanUp() }
            var random = SystemRandomNumberGenerator()
            var written: [String: SizedBlob] = [:]
            let blobs = a.store.box(for: SizedBlob.self)
            for index in 0..<40 {
                var blob = SizedBlob(name: "blob \(index)", body: Self.text(3000 + index * 100, using: &random),
                                     data: Self.bytes(5000 + index, using: &random))
                try blobs.put(&blob)
                written[blob.name] = blob
            }
            // One change larger than a batch's budget goes alone.
            var large = SizedBlob(name: "large", body: Self.text(10, using: &random), data: Self.bytes(200 << 10, using: &random))
            try blobs.put(&large)
            written[large.name] = large

            let pushed = try await replicaA.syncNow()
            #expect(try a.store.pendingSyncCount() == 0)
            #expect(pushed.rejectedCount == 0, "\(pushed.rejections.prefix(3))")
            let sent = batches.withLock { $0 }
            #expect(sent.count > 10, "the bytes demand more than one batch: \(sent)")
            #expect(sent.reduce(0) { $0 + $1.count } == written.count)
            for batch in sent where batch.count > 1 {
                #expect(batch.bytes <= options.pushBatchBytes, "a batch of \(batch.count) changes takes \(batch.bytes) bytes")
            }
            #expect(sent.contains { $0.count == 1 && $0.bytes > options.pushBatchBytes }, "the large change goes alone")
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"SizedBlob\"") == "\(written.count)")

            // (The horizon is the cluster's: other suites' open transactions may hold it back.)
            #expect(try await eventually {
                try await replicaB.syncNow()
                return try b.store.box(for: SizedBlob.self).count() == written.count
            })
            let pulled = try b.store.box(for: SizedBlob.self).all()
            #expect(pulled.count == written.count)
            for blob in pulled {
                let original = try #require(written[blob.name])
                #expect(blob.body == original.body && blob.data == original.data, "\(blob.name) arrives bit for bit")
            }
            await replicaA.transport.close()
            await replicaB.transport.close()
        }
    }

    /// A change larger than a push ever sends is refused before sending, as a change holding
    /// U+0000 is: recorded with a reason naming the entity, the object and the size, counted
    /// in status, the server's state of the object taken; the rest of the queue drains. (The
    /// limit is lowered for the test; without the refusal the server would take it.)
    @Test func aChangeTooLargeToSendIsARejectionAndTheQueueGoesOn() async throws {
        let schema = try SyncSchema([SizedBlob.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            var options = SyncReplica.Options()
            options.largestChange = 50_000
            options.pushBatchBytes = 20_000
            let (a, b, replicaA, replicaB) = try await Self.replicas(s, options: options) { _ in }
            defer { a.cleanUp(); b.cleanUp() }
            let blobs = a.store.box(for: SizedBlob.self)
            var known = SizedBlob(name: "known", body: "small")
            try blobs.put(&known)
            try await replicaA.syncNow()

            var before = SizedBlob(name: "before", body: String(repeating: "b", count: 15_000))
            try blobs.put(&before)
            var huge = SizedBlob(name: "huge", body: String(repeating: "h", count: 60_000))
            try blobs.put(&huge)
            known.body = String(repeating: "k", count: 70_000)
            try blobs.put(&known)
            var after = SizedBlob(name: "after", body: "small")
            try blobs.put(&after)

            let hugeId = try #require(try blobs.syncId(of: huge.id)).uuidString.lowercased()
            let knownId = try #require(try blobs.syncId(of: known.id)).uuidString.lowercased()
            let status = try await replicaA.syncNow()
            #expect(try a.store.pendingSyncCount() == 0, "the outbox drains")
            #expect(status.rejectedCount == 2)
            let rejections = try a.store.syncRejections()
            #expect(rejections.map(\.kind) == [.creation, .update])
            let reasons = rejections.map(\.reason)
            #expect(reasons.allSatisfy { $0.contains("SizedBlob") && $0.contains("bytes") && $0.contains("50000") }, "\(reasons)")
            #expect(reasons.first?.contains(hugeId) == true && reasons.last?.contains(knownId) == true, "\(reasons)")
            #expect(status.rejections.map(\.reason) == reasons)
            // The server's state is taken: the refused creation goes, the refused edit is undone.
            #expect(try blobs.get(huge.id) == nil)
            #expect(try blobs.get(known.id)?.body == "small")
            #expect(try await connection.value("SELECT string_agg(name, ',' ORDER BY name) FROM \(s).\"SizedBlob\"") == "after,before,known")
            // (The horizon is the cluster's: other suites' open transactions may hold it back.)
            #expect(try await eventually {
                try await replicaB.syncNow()
                return try b.store.box(for: SizedBlob.self).all().map(\.name).sorted() == ["after", "before", "known"]
            })

            // And the queue goes on.
            var later = SizedBlob(name: "later")
            try blobs.put(&later)
            try await replicaA.syncNow()
            #expect(try a.store.pendingSyncCount() == 0)
            #expect(try await connection.value("SELECT count(*)::text FROM \(s).\"SizedBlob\" WHERE name = 'later'") == "1")
            await replicaA.transport.close()
            await replicaB.transport.close()
        }
    }

    /// Values of tens of MB travel both ways within the limits, bit for bit.
    @Test func aValueOfTensOfMegabytesTravelsBothWays() async throws {
        let schema = try SyncSchema([SizedBlob.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let (a, b, replicaA, replicaB) = try await Self.replicas(s, options: SyncReplica.Options()) { _ in }
            defer { a.cleanUp(); b.cleanUp() }
            var random = SystemRandomNumberGenerator()
            var big = SizedBlob(name: "big", body: "", data: Self.bytes(16 << 20, using: &random))
            var small = SizedBlob(name: "small", body: "s")
            try a.store.box(for: SizedBlob.self).put(&big)
            try a.store.box(for: SizedBlob.self).put(&small)
            let pushed = try await replicaA.syncNow()
            #expect(try a.store.pendingSyncCount() == 0)
            #expect(pushed.rejectedCount == 0, "\(pushed.rejections)")
            #expect(try await connection.value("SELECT octet_length(data)::text FROM \(s).\"SizedBlob\" WHERE name = 'big'") == "\(16 << 20)")
            var status = SyncStatus()
            #expect(try await eventually {
                status = try await replicaB.syncNow()
                return try b.store.box(for: SizedBlob.self).count() == 2
            })
            let pulled = try b.store.box(for: SizedBlob.self).all().sorted { $0.name < $1.name }
            #expect(pulled.map(\.name) == ["big", "small"])
            #expect(pulled.first?.data == big.data)
            #expect(status.oversizedRows.isEmpty && status.pullFailures.isEmpty)
            await replicaA.transport.close()
            await replicaB.transport.close()
        }
    }

    /// Plain-SQL writers commit rows of about 20 KB out of order while a replica pulls with a
    /// budget of 50 KB a page: every page ends by bytes (a few rows each), the cursor skips
    /// nothing, and the replica ends with exactly the table.
    @Test func pagesAreCutByBytesAndSkipNothingWhileWritersCommit() async throws {
        let schema = try SyncSchema([SizedBlob.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let pages = LockedState<[(changes: Int, bytes: Int)]>([])
            let transport = InterceptingTransport(try await testTransport(schema: s, timeout: .seconds(30))) { event in
                if case .afterPull(_, _, let page) = event,
                   let object = try? JSONSerialization.jsonObject(with: page) as? [String: Any],
                   let changes = object["changes"] as? [Any] {
                    pages.withLock { $0.append((changes.count, page.count)) }
                }
            }
            var options = SyncReplica.Options()
            options.pullPageBytes = 50_000
            let store = try TemporaryStore()
            defer { store.cleanUp() }
            let replica = try SyncReplica(store: store.store, entities: [SizedBlob.self], transport: transport, options: options)
            let writers = 6
            let transactions = 8
            let done = Flag()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        try await withConnection { sql in
                            var random = SystemRandomNumberGenerator()
                            for transaction in 0..<transactions {
                                try await sql.run("BEGIN")
                                try await sql.run("""
                                    INSERT INTO \(s)."SizedBlob" (name, body, data)
                                    SELECT 'w\(writer)-t\(transaction)-' || i, repeat(md5(random()::text), 600),
                                           decode(repeat(md5(random()::text), 40), 'hex')
                                    FROM generate_series(1, 3) i
                                    """)
                                if transaction >= 2 {
                                    try await sql.run("""
                                        UPDATE \(s)."SizedBlob" SET body = body || 'x' WHERE name = 'w\(writer)-t\(transaction - 1)-1'
                                        """)
                                    try await sql.run("DELETE FROM \(s).\"SizedBlob\" WHERE name = 'w\(writer)-t\(transaction - 2)-2'")
                                }
                                try await Task.sleep(for: .milliseconds(Int.random(in: 0...30, using: &random)))
                                try await sql.run("COMMIT")
                            }
                        }
                    }
                }
                group.addTask {
                    while !(await done.isSet) {
                        try await replica.syncNow()
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                for _ in 0..<writers { try await group.next() }
                await done.set()
                try await group.waitForAll()
            }
            let table = try await connection.rows("SELECT name, body, encode(data, 'hex') FROM \(s).\"SizedBlob\"")
            #expect(table.count == writers * transactions * 3 - writers * (transactions - 2))
            let expected = Set(table.map { "\($0[0] ?? "")|\($0[1] ?? "")|\($0[2] ?? "")" })
            let blobs = store.store.box(for: SizedBlob.self)
            #expect(try await eventually {
                try await replica.syncNow()
                let held = Set(try blobs.all().map { "\($0.name)|\($0.body)|\($0.data.map { String(format: "%02x", $0) }.joined())" })
                return held == expected
            }, "the replica ends with exactly the table")
            let seen = pages.withLock { $0 }
            #expect(seen.filter { $0.changes > 1 }.count > 5, "pages hold several rows: \(seen.prefix(20))")
            // A row is about 20 KB on the wire: no page holds more than the budget and one row.
            #expect(seen.allSatisfy { $0.changes <= 1 || $0.bytes < 50_000 + 30_000 }, "\(seen.map(\.bytes).max() ?? 0) bytes")
            await transport.close()
        }
    }

    /// A row written by plain SQL that is too large to send (here a 100 MB text, above the
    /// 64 MiB a pull sends; and, with the limit lowered for the test, a 200 KB one) goes as
    /// a marker: the replica reports it in status, the rows around it arrive, and the pull
    /// goes on with later writes. A fetch of such an object (after a refused push) is a
    /// marker too, and leaves the local object alone.
    @Test func aRowTooLargeToSendDoesNotWedgeThePull() async throws {
        let schema = try SyncSchema([SizedBlob.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let store = try TemporaryStore()
            defer { store.cleanUp() }
            let replica = try SyncReplica(store: store.store, entities: [SizedBlob.self],
                                          transport: try await testTransport(schema: s, timeout: .seconds(60)))
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, body) VALUES ('first', 'a')")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, body) VALUES ('huge', repeat('ab', 50000000))")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, body) VALUES ('second', 'b')")
            let hugeId = try #require(UUID(uuidString: try await connection.value(
                "SELECT sync_id::text FROM \(s).\"SizedBlob\" WHERE name = 'huge'") ?? ""))

            let blobs = store.store.box(for: SizedBlob.self)
            var status = SyncStatus()
            // (The horizon is the cluster's: other suites' open transactions may hold it back.)
            func pull(until names: [String]) async throws -> Bool {
                try await eventually {
                    status = try await replica.syncNow()
                    return try blobs.all().map(\.name).sorted() == names
                }
            }
            #expect(try await pull(until: ["first", "second"]))
            #expect(status.pullFailures.isEmpty)
            #expect(status.oversizedCount == 1)
            #expect(status.oversizedRows.first?.syncId == hugeId && status.oversizedRows.first?.entity == "SizedBlob")
            #expect((status.oversizedRows.first?.bytes ?? 0) >= 100_000_000)

            // With the limit lowered, a smaller row is one too; later rows arrive.
            try await connection.run("INSERT INTO \(s).meta (key, value) VALUES ('largest_row', '100000')")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, body) VALUES ('large', repeat('c', 200000))")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, body) VALUES ('third', 'c')")
            #expect(try await pull(until: ["first", "second", "third"]))
            #expect(status.oversizedCount == 2 && status.pullFailures.isEmpty)
            #expect(status.oversizedRows.last.map { $0.bytes > 200_000 } == true)

            // The row shrinks: it arrives.
            try await connection.run("UPDATE \(s).\"SizedBlob\" SET body = 'small now' WHERE name = 'huge'")
            #expect(try await pull(until: ["first", "huge", "second", "third"]))
            #expect(try blobs.all().first { $0.name == "huge" }?.body == "small now")

            // A local edit the server refuses fetches the object's state: a marker leaves the
            // local object alone (and the pull passes the row again, as a marker).
            try await connection.run("ALTER TABLE \(s).\"SizedBlob\" ADD CONSTRAINT no_triple CHECK (data <> '\\x010203'::bytea)")
            try await connection.run("UPDATE \(s).\"SizedBlob\" SET body = repeat('d', 200000) WHERE name = 'huge'")
            var edited = try #require(try blobs.all().first { $0.name == "huge" })
            edited.data = Data([1, 2, 3])
            try blobs.put(&edited)
            #expect(try await eventually {
                status = try await replica.syncNow()
                return status.oversizedCount == 4
            })
            #expect(status.rejectedCount == 1 && status.pullFailures.isEmpty && status.lastError == nil)
            #expect(try store.store.pendingSyncCount() == 0)
            #expect(try store.store.syncObjectsAwaitingServerState(entity: "SizedBlob").isEmpty)
            #expect(status.oversizedCount == 4, "the fetch and the pull each met the row: \(status.oversizedRows)")
            #expect(status.oversizedRows.suffix(2).allSatisfy { $0.syncId == hugeId })
            #expect(try blobs.get(edited.id)?.body == "small now")
            #expect(try blobs.all().map(\.name).sorted() == ["first", "huge", "second", "third"])
            await replica.transport.close()
        }
    }

    /// A document is sized by its stored length, which is its compressed one: a page that
    /// comes out far larger than sized (above twice the largest row) is made of its first
    /// change alone, and that change, still too large, goes as a marker. (The limit is
    /// lowered for the test: a 1 MB document compressed to a few KB.)
    @Test func aDocumentLargerThanItsStoredSizeDoesNotWedgeThePull() async throws {
        let schema = try SyncSchema([SizedBlob.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let store = try TemporaryStore()
            defer { store.cleanUp() }
            let replica = try SyncReplica(store: store.store, entities: [SizedBlob.self],
                                          transport: try await testTransport(schema: s, timeout: .seconds(30)))
            try await connection.run("INSERT INTO \(s).meta (key, value) VALUES ('largest_row', '100000')")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name) VALUES ('first')")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, doc) VALUES ('doc', jsonb_build_object('k', repeat('x', 1000000)))")
            try await connection.run("INSERT INTO \(s).\"SizedBlob\" (name, doc) VALUES ('small doc', '{\"k\": 1}')")
            #expect(try await connection.value("SELECT (pg_column_size(doc) < 100000)::text FROM \(s).\"SizedBlob\" WHERE name = 'doc'") == "true")
            let docId = try #require(UUID(uuidString: try await connection.value(
                "SELECT sync_id::text FROM \(s).\"SizedBlob\" WHERE name = 'doc'") ?? ""))
            let blobs = store.store.box(for: SizedBlob.self)
            var status = SyncStatus()
            #expect(try await eventually {
                status = try await replica.syncNow()
                return try blobs.all().map(\.name).sorted() == ["first", "small doc"]
            })
            #expect(status.pullFailures.isEmpty && status.oversizedRows.map(\.syncId) == [docId])
            await replica.transport.close()
        }
    }

    /// The server's cost of a whole pull: `COFFER_PULL_BENCH` rows (e.g. 100000) of a 4-field
    /// entity written by plain SQL, pulled in pages of 1000 by `coffer_pull` inside the server
    /// (each page also turned into its text, as the transport asks for it), timed by the
    /// server's clock, best of 5. Runs only when `COFFER_PULL_BENCH` is set; asserts nothing
    /// about time.
    ///
    ///     COFFER_PULL_BENCH=100000 swift test --filter PayloadSizeTests/pullCost
    @Test(.enabled(if: (Int(ProcessInfo.processInfo.environment["COFFER_PULL_BENCH"] ?? "") ?? 0) > 0))
    func pullCost() async throws {
        let count = Int(ProcessInfo.processInfo.environment["COFFER_PULL_BENCH"] ?? "") ?? 0
        let schema = try SyncSchema([BenchItem.self], schema: uniqueSchemaName("bench"))
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await connection.run("""
                INSERT INTO \(s)."BenchItem" (title, count, score, done)
                SELECT 'item ' || i, i, i * 0.5, i % 2 = 0 FROM generate_series(1, \(count)) i
                """)
            try await connection.run("ANALYZE \(s).\"BenchItem\"")
            try await connection.run("""
                CREATE FUNCTION \(s).bench_pull() RETURNS text LANGUAGE plpgsql AS $$
                DECLARE c text := '0'; p jsonb; n bigint := 0; bytes bigint := 0; t0 timestamptz := clock_timestamp();
                BEGIN
                    LOOP
                        p := \(s).coffer_pull('BenchItem', c, 1000);
                        n := n + jsonb_array_length(p -> 'changes');
                        bytes := bytes + octet_length(p::text);
                        c := p ->> 'cursor';
                        EXIT WHEN NOT (p ->> 'more')::boolean;
                    END LOOP;
                    RETURN n || ' rows, ' || bytes || ' bytes, ' || round(extract(epoch FROM clock_timestamp() - t0) * 1000) || ' ms';
                END
                $$
                """)
            var runs: [String] = []
            for _ in 0..<5 { runs.append(try await connection.value("SELECT \(s).bench_pull()") ?? "") }
            print("pull cost (\(count) rows, pages of 1000):", runs.joined(separator: "; "))
        }
    }
}
