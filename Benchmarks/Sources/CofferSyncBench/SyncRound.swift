import Coffer
import CofferSync
import Foundation
import PostgresNIO

/// Where the benchmark's PostgreSQL listens (`Benchmarks/sync.sh` starts a private one).
struct Server: Sendable {
    var host = "127.0.0.1"
    var port = 5432
    var user = "postgres"
    var database = "postgres"

    func transport(schema: String) -> PostgresTransport {
        PostgresTransport(configuration: .init(host: host, port: port, username: user, password: nil,
                                               database: database, tls: .disable, schema: schema))
    }

    func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: nil,
                                                             database: database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1,
                                                              logger: Logger(label: "coffer.sync.bench"))
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// One round's figures. Rates are objects (or rows) per second; latencies milliseconds.
struct RoundResult: Codable {
    /// Creations pushed per second (the push phase of the first pass of a replica holding them).
    var pushCreations = 0.0
    /// Seconds the same pass then spent pulling its own rows back (they carry the server's
    /// transaction ids, which the replica records).
    var echoPullSeconds = 0.0
    /// Seconds for an empty replica's first pass to pull every object.
    var initialSyncSeconds = 0.0
    /// The time the server's pages took (from each pull call to its answer; the replica
    /// applies the previous page meanwhile).
    var initialSyncServerSeconds = 0.0
    /// The time the server's answers to the creations' pushes took (the replica takes and
    /// encodes the next batch meanwhile).
    var pushCreationsServerSeconds = 0.0
    /// One-field updates pushed per second.
    var pushUpdates = 0.0
    /// One-field updates pulled and applied per second by the other replica.
    var pullUpdates = 0.0
    /// Push payload bytes per one-field update (the JSON batch, without PostgreSQL's framing).
    var pushBytesPerUpdate = 0.0
    /// Pull payload bytes per one-field update (the page JSON).
    var pullBytesPerUpdate = 0.0
    /// A change on one running replica seen in the other's store: median and 99th percentile.
    var latencyP50 = 0.0
    var latencyP99 = 0.0
    /// The floors from the same server in the same round: plain `SELECT` of the same rows
    /// decoded by postgres-nio, and plain `INSERT ... SELECT FROM unnest(...)` of the same rows
    /// in batches of the replica's push size.
    var floorSelect = 0.0
    var floorInsert = 0.0
}

/// A fresh directory under the system's temporary directory.
func temporaryDirectory(_ name: String) -> String {
    NSTemporaryDirectory() + "coffer-sync-bench/\(ProcessInfo.processInfo.processIdentifier)/" + name
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}

/// Two replicas of one entity through one server: push, initial sync, updates both ways and
/// the latency between two running replicas, then the SQL floors.
func runRound(_ round: Int, server: Server, count: Int, samples: Int) async throws -> RoundResult {
    var result = RoundResult()
    let schemaName = "bench_\(ProcessInfo.processInfo.processIdentifier)_\(round)"
    let schema = try SyncSchema([SyncBenchItem.self], schema: schemaName)
    try await server.withConnection { try await schema.install(on: $0, logger: $0.logger) }
    let directories = [temporaryDirectory("a\(round)"), temporaryDirectory("b\(round)")]
    let options = StoreOptions(initialMapSize: 1 << 30)
    let storeA = try Store(directory: directories[0], options: options)
    let storeB = try Store(directory: directories[1], options: options)
    let boxA = storeA.box(for: SyncBenchItem.self)
    let boxB = storeB.box(for: SyncBenchItem.self)
    let transportA = MeasuringTransport(server.transport(schema: schemaName))
    let transportB = MeasuringTransport(server.transport(schema: schemaName))
    let replicaA = try SyncReplica(store: storeA, entities: [SyncBenchItem.self], transport: transportA)
    let replicaB = try SyncReplica(store: storeB, entities: [SyncBenchItem.self], transport: transportB)

    // Creations: A holds `count` new objects; its first pass pushes them, then pulls them back.
    var items = (0..<count).map(SyncBenchItem.init(number:))
    try boxA.put(&items)
    items = []
    var start = ContinuousClock.now
    _ = try await replicaA.syncNow()
    var end = ContinuousClock.now
    var counts = transportA.take()
    guard let pushEnded = counts.pushEnded, counts.pushedChanges == count else {
        throw BenchFailure(description: "A pushed \(counts.pushedChanges) of \(count) creations")
    }
    result.pushCreations = Double(count) / seconds(pushEnded - start)
    result.pushCreationsServerSeconds = seconds(counts.pushWait)
    result.echoPullSeconds = seconds(end - pushEnded)

    // Initial sync: B is empty.
    _ = transportB.take()
    start = .now
    _ = try await replicaB.syncNow()
    result.initialSyncSeconds = seconds(.now - start)
    result.initialSyncServerSeconds = seconds(transportB.take().pullWait)
    guard try boxB.count() == count else { throw BenchFailure(description: "B holds \(try boxB.count()) of \(count) objects") }

    // One-field updates: A changes `count` of every object; B pulls them.
    try boxA.modifyEach { $0.count += 1 }
    start = .now
    _ = try await replicaA.syncNow()
    counts = transportA.take()
    guard let updatesPushed = counts.pushEnded, counts.pushedChanges == count else {
        throw BenchFailure(description: "A pushed \(counts.pushedChanges) of \(count) updates")
    }
    result.pushUpdates = Double(count) / seconds(updatesPushed - start)
    result.pushBytesPerUpdate = Double(counts.pushedBytes) / Double(count)
    _ = transportB.take()
    start = .now
    _ = try await replicaB.syncNow()
    end = .now
    result.pullUpdates = Double(count) / seconds(end - start)
    result.pullBytesPerUpdate = Double(transportB.take().pulledBytes) / Double(count)

    // Latency: both replicas run; each sample changes one object on one side (alternating)
    // and waits until the other side's store holds the new value.
    let runningA = Task { await replicaA.run() }
    let runningB = Task { await replicaB.run() }
    var latencies: [Double] = []
    do {
        let idsA = Array(try boxA.all().prefix(max(1, min(samples, count))).map(\.id))
        var pairs: [(a: Id, b: Id)] = []
        for idA in idsA {
            guard let syncId = try boxA.syncId(of: idA), let idB = try boxB.id(forSyncId: syncId) else {
                throw BenchFailure(description: "object \(idA) has no counterpart on B")
            }
            pairs.append((idA, idB))
        }
        for sample in 0..<samples {
            let pair = pairs[sample % pairs.count]
            let (writer, writerId, reader, readerId) = sample % 2 == 0
                ? (boxA, pair.a, boxB, pair.b) : (boxB, pair.b, boxA, pair.a)
            let value = -(sample + 1)
            start = .now
            _ = try writer.modify(writerId) { $0.count = value }
            while try reader.get(readerId)?.count != value {
                guard ContinuousClock.now - start < .seconds(10) else {
                    throw BenchFailure(description: "sample \(sample) did not arrive within 10 s")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            latencies.append(seconds(.now - start) * 1000)
            // A pause, so that each change travels on its own rather than with the next.
            try await Task.sleep(for: .milliseconds(10))
        }
    } catch {
        replicaA.stop()
        replicaB.stop()
        await runningA.value
        await runningB.value
        throw error
    }
    replicaA.stop()
    replicaB.stop()
    await runningA.value
    await runningB.value
    latencies.sort()
    result.latencyP50 = percentile(latencies, 0.50)
    result.latencyP99 = percentile(latencies, 0.99)
    await transportA.close()
    await transportB.close()
    try storeA.close()
    try storeB.close()
    for directory in directories { try FileManager.default.removeItem(atPath: directory) }

    // The floors, on the same server, of the same number of rows.
    try await server.withConnection { connection in
        let table = "\"\(schemaName)\".\"SyncBenchItem\""
        start = .now
        var rows = 0
        let query = PostgresQuery(unsafeSQL: "SELECT sync_id, title, count, score, done FROM \(table)")
        for try await (_, _, _, _, _) in try await connection.query(query, logger: connection.logger)
            .decode((UUID, String, Int, Double, Bool).self) {
            rows += 1
        }
        result.floorSelect = Double(rows) / seconds(.now - start)
        guard rows == count else { throw BenchFailure(description: "the floor read \(rows) of \(count) rows") }

        let floorTable = "\"\(schemaName)\".floor"
        try await connection.query(PostgresQuery(unsafeSQL:
            "CREATE TABLE \(floorTable) (id uuid PRIMARY KEY, title text, count bigint, score double precision, done boolean)"),
            logger: connection.logger)
        let batch = SyncReplica.Options().pushBatchSize
        start = .now
        for first in stride(from: 0, to: count, by: batch) {
            let numbers = first..<min(first + batch, count)
            let rows = numbers.map(SyncBenchItem.init(number:))
            var query = PostgresQuery(unsafeSQL: "INSERT INTO \(floorTable) SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::float8[], $5::bool[])")
            query.binds.append(numbers.map { _ in UUID() })
            query.binds.append(rows.map(\.title))
            query.binds.append(rows.map(\.count))
            query.binds.append(rows.map(\.score))
            query.binds.append(rows.map(\.done))
            try await connection.query(query, logger: connection.logger)
        }
        result.floorInsert = Double(count) / seconds(.now - start)
        try await connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \"\(schemaName)\" CASCADE"), logger: connection.logger)
    }
    return result
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The value at fraction `p` of sorted `values` (nearest rank).
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let rank = Int((p * Double(values.count)).rounded(.up)) - 1
    return values[min(max(rank, 0), values.count - 1)]
}
