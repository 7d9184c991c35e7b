@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// kill -9 of a replica process at random moments of its passes (taking, pushing,
/// acknowledging, pulling, applying pages), while plain SQL adds rows for it to pull: after
/// each kill, a replica of the same store drains what is left, and every write the child
/// committed is on the server and in the store exactly once, as is every row the server has.
/// The same at named points of a pass, where the child kills itself.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReplicaCrashTests {
    static let role = "sync-replica-crash"

    /// The child: commits card "c<n>" (reporting it once committed) and runs a pass after
    /// every second commit, in small batches and pages so that a kill lands inside one. With
    /// COFFER_CRASH_POINT it kills itself the COFFER_CRASH_HIT-th time it reaches that point.
    @Test func replicaCrashChild() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment[ChildProcess.roleVariable] == Self.role,
              let directory = environment[ChildProcess.directoryVariable],
              let port = environment["COFFER_SYNC_PORT"].flatMap(Int.init),
              let user = environment["COFFER_SYNC_USER"], let database = environment["COFFER_SYNC_DATABASE"],
              let schema = environment["COFFER_SYNC_SCHEMA"]
        else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        let direct = PostgresTransport(configuration: .init(
            host: "127.0.0.1", port: port, username: user, password: nil, database: database, tls: .disable, schema: schema))
        let transport: any SyncTransport = if let point = environment["COFFER_CRASH_POINT"].flatMap(CrashPoint.init(rawValue:)) {
            CrashPoint.dying(at: point, hit: Int(environment["COFFER_CRASH_HIT"] ?? "") ?? 1, through: direct)
        } else {
            direct
        }
        let replica = try SyncReplica(store: store, entities: [Replicated.Card.self], transport: transport,
                                      options: .init(pushBatchSize: 3, pullPageSize: 2))
        let cards = store.box(for: Replicated.Card.self)
        var n = Int(environment["COFFER_SYNC_FIRST"] ?? "") ?? 0
        while true {
            n += 1
            try cards.put(Replicated.Card(title: "c\(n)", count: n))
            ChildProcess.report("committed \(n)")
            if n.isMultiple(of: 2) { try await replica.syncNow() }
        }
    }

    @Test func killedReplicaLosesNoWriteAndDuplicatesNone() async throws {
        guard ProcessInfo.processInfo.environment[ChildProcess.roleVariable] == nil else { return }
        let runs = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_RUNS"] ?? "") ?? 50
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let endpoint = try await PostgresCluster.shared.endpoint()
        let directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
        defer {
            do { try FileManager.default.removeItem(atPath: directory) } catch { Issue.record("removing \(directory): \(error)") }
        }
        try await withInstalled(schema) { connection in
            var random = SplitMix64(state: 0xC4A5_11)
            var committed = Set<Int>()
            var inserted = 0
            var next = 0
            for run in 0..<runs {
                // Rows for the child to pull while it is killed.
                for _ in 0..<4 {
                    inserted += 1
                    try await connection.run("INSERT INTO \(s).\"Card\" (title, count, done) VALUES ('s\(inserted)', \(-inserted), false)")
                }
                let reported = try ChildProcess.killAtRandomMoment(
                    filter: "replicaCrashChild", role: Self.role, directory: directory,
                    environment: ["COFFER_SYNC_PORT": String(endpoint.port), "COFFER_SYNC_USER": endpoint.user,
                                  "COFFER_SYNC_DATABASE": endpoint.database, "COFFER_SYNC_SCHEMA": s,
                                  "COFFER_SYNC_FIRST": String(next)],
                    maximumDelay: 300_000, using: &random)
                committed.formUnion(reported)
                next = max(next, (reported.max() ?? next)) + 1000   // titles stay unique across runs
                try await Self.drainAndCheck(directory: directory, schema: s, connection: connection,
                                             committed: committed, sqlRows: inserted, run: run)
            }
        }
    }

    /// kill -9 at named points of a pass, each reached in turn by a child that dies there by
    /// itself: after the server committed a push and before the replica acknowledged it;
    /// after a page was fetched and before it was applied; between two pages of one pull
    /// (the first applied with its cursor). (A page applied without its cursor cannot
    /// happen: both are written in one transaction.) Runs per point: COFFER_CRASH_POINT_RUNS,
    /// 10 by default.
    @Test(arguments: CrashPoint.allCases)
    func killedAtANamedPointLosesNoWriteAndDuplicatesNone(point: CrashPoint) async throws {
        guard ProcessInfo.processInfo.environment[ChildProcess.roleVariable] == nil else { return }
        let runs = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_POINT_RUNS"] ?? "") ?? 10
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let endpoint = try await PostgresCluster.shared.endpoint()
        let directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
        defer {
            do { try FileManager.default.removeItem(atPath: directory) } catch { Issue.record("removing \(directory): \(error)") }
        }
        try await withInstalled(schema) { connection in
            var committed = Set<Int>()
            var inserted = 0
            var next = 0
            for run in 0..<runs {
                // Rows for the child to pull: more than a page, so that a pull has two.
                for _ in 0..<5 {
                    inserted += 1
                    try await connection.run("INSERT INTO \(s).\"Card\" (title, count, done) VALUES ('s\(inserted)', \(-inserted), false)")
                }
                let child = try ChildProcess.runToEnd(
                    filter: "replicaCrashChild", role: Self.role, directory: directory,
                    environment: ["COFFER_SYNC_PORT": String(endpoint.port), "COFFER_SYNC_USER": endpoint.user,
                                  "COFFER_SYNC_DATABASE": endpoint.database, "COFFER_SYNC_SCHEMA": s,
                                  "COFFER_SYNC_FIRST": String(next), "COFFER_CRASH_POINT": point.rawValue,
                                  "COFFER_CRASH_HIT": String(1 + run % 3)],
                    timeout: 30)
                #expect(child.lines.contains("dying at \(point.rawValue)") && !child.timedOut,
                        "run \(run): the child never reached \(point.rawValue)")
                #expect(child.killed, "run \(run): the child did not die of SIGKILL")
                let reported = ChildProcess.committedNumbers(in: child.lines)
                committed.formUnion(reported)
                next = max(next, (reported.max() ?? next)) + 1000
                try await Self.drainAndCheck(directory: directory, schema: s, connection: connection,
                                             committed: committed, sqlRows: inserted, run: run)
            }
        }
    }

    /// Opens the store the child left, syncs it until in step with the server, and checks that
    /// nothing is lost or doubled on either side.
    static func drainAndCheck(directory: String, schema: String, connection: PostgresConnection,
                              committed: Set<Int>, sqlRows: Int, run: Int) async throws {
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        defer {
            do { try store.close() } catch { Issue.record("closing the store: \(error)") }
        }
        let transport = try await testTransport(schema: schema)
        let replica = try SyncReplica(store: store, entities: [Replicated.Card.self], transport: transport)
        let cards = store.box(for: Replicated.Card.self)
        var serverTitles: [String] = []
        let settled = try await eventually(attempts: 100, seconds: 30) {
            try await replica.syncNow()
            serverTitles = try await connection.rows("SELECT title FROM \(schema).\"Card\"").compactMap { $0.first ?? nil }
            return try store.pendingSyncCount() == 0 && cards.count() == serverTitles.count
        }
        await transport.close()
        #expect(settled, "run \(run): the store did not reach the server's rows")
        let localTitles = try cards.all().map(\.title)
        #expect(Set(serverTitles).count == serverTitles.count, "run \(run): a row is on the server twice")
        #expect(Set(localTitles).count == localTitles.count, "run \(run): an object is in the store twice")
        #expect(Set(localTitles) == Set(serverTitles), "run \(run): the store and the server differ")
        for number in committed {
            #expect(serverTitles.contains("c\(number)"), "run \(run): committed write c\(number) is lost")
        }
        for number in 1...max(1, sqlRows) where sqlRows > 0 {
            #expect(localTitles.contains("s\(number)"), "run \(run): server row s\(number) never arrived")
        }
        let report = try store.verify()
        #expect(report.isIntact, "run \(run): \(report)")
    }
}

/// A named moment of a pass where the crash child kills itself (SIGKILL), from the
/// transport's side of the replica: the engine around it runs as in production.
enum CrashPoint: String, CaseIterable, Sendable {
    /// `coffer_push` returned (the server committed the batch), the replica has not
    /// acknowledged it: the restarted replica sends it again, and the server skips it.
    case serverCommittedNotAcknowledged = "server committed, not acknowledged"
    /// A page with changes came back, the replica has not applied it (nor stored its cursor).
    case pageFetchedNotApplied = "page fetched, not applied"
    /// A page that said more follow came back and the next is being asked for (the replica
    /// asks for the next page before it applies a page, so that page may be applied with its
    /// cursor or not yet).
    case betweenPages = "between pages"

    /// `transport`, with a hook that kills the process at the `hit`-th time `point` is reached.
    static func dying(at point: CrashPoint, hit: Int, through transport: any SyncTransport) -> InterceptingTransport {
        let seen = LockedState((hits: 0, lastPageHadMore: false))
        return InterceptingTransport(transport) { event in
            let reached = seen.withLock { seen -> Bool in
                var reached = false
                switch (point, event) {
                case (.serverCommittedNotAcknowledged, .afterPush):
                    reached = true
                case (.pageFetchedNotApplied, .afterPull(_, _, let page)):
                    reached = !(Self.changes(of: page)?.isEmpty ?? true)
                case (.betweenPages, .beforePull):
                    reached = seen.lastPageHadMore
                default:
                    break
                }
                if case .afterPull(_, _, let page) = event { seen.lastPageHadMore = Self.more(of: page) }
                if reached { seen.hits += 1 }
                return reached && seen.hits == hit
            }
            if reached {
                ChildProcess.report("dying at \(point.rawValue)")
                kill(getpid(), SIGKILL)
            }
        }
    }

    /// The page as JSON; nil for one that is not (the replica then fails on it, which the
    /// hook need not know).
    private static func page(_ data: Data) -> [String: Any]? {
        do {
            return try JSONSerialization.jsonObject(with: data) as? [String: Any]
        } catch {
            return nil
        }
    }

    static func changes(of page: Data) -> [Any]? { Self.page(page)?["changes"] as? [Any] }
    static func more(of page: Data) -> Bool { Self.page(page)?["more"] as? Bool ?? false }
}
