@_spi(CofferSync) import Coffer
@testable import CofferSync
import CofferGateway
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
        // Through the parent's gateway when it runs one, else to PostgreSQL directly.
        let direct: any SyncTransport
        if let gateway = environment["COFFER_SYNC_GATEWAY"].flatMap(URL.init(string:)), let token = environment["COFFER_SYNC_TOKEN"] {
            direct = GatewayTransport(url: gateway, requestTimeout: .seconds(5)) { token }
        } else {
            direct = PostgresTransport(configuration: .init(
                host: "127.0.0.1", port: port, username: user, password: nil, database: database, tls: .disable, schema: schema))
        }
        let hit = Int(environment["COFFER_CRASH_HIT"] ?? "") ?? 1
        let failPushes = environment["COFFER_FAIL_PUSHES"] != nil
        let transport: any SyncTransport = if let point = environment["COFFER_CRASH_POINT"].flatMap(CrashPoint.init(rawValue:)) {
            CrashPoint.dying(at: point, hit: hit, through: direct)
        } else if let point = environment["COFFER_CRASH_POINT"].flatMap(ResyncCrashPoint.init(rawValue:)) {
            ResyncCrashPoint.dying(at: point, hit: hit, through: failPushes ? Self.failingPushes(direct) : direct) {
                (try? store.isResyncing(entity: "Card", stream: direct.stream)) ?? false
            }
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
            guard n.isMultiple(of: 2) else { continue }
            if failPushes {
                // The push fails, the pull (and the resync in it) runs: the pass throws.
                do { try await replica.syncNow() } catch {}
            } else {
                try await replica.syncNow()
            }
        }
    }

    /// `transport`, whose pushes fail as an unreachable server's do (the pull still runs).
    static func failingPushes(_ transport: any SyncTransport) -> ScriptedTransport {
        let scripted = ScriptedTransport(transport)
        scripted.script.withLock { $0.failPushes = true }
        return scripted
    }

    /// Directly to PostgreSQL, and through a gateway (as a user with a token; fewer runs,
    /// each call crossing HTTP too).
    @Test(arguments: TransportMode.allCases)
    func killedReplicaLosesNoWriteAndDuplicatesNone(mode: TransportMode) async throws {
        var random = SplitMix64(state: 0xC4A5_11)
        try await Self.forEachRun(runsVariable: "COFFER_CRASH_RUNS", byDefault: mode == .direct ? 50 : 10, mode: mode) { crash, run, progress in
            // Rows for the child to pull while it is killed.
            try await crash.insertServerRows(4, counting: &progress.inserted)
            progress.record(try await ChildProcess.killAtRandomMoment(
                filter: "replicaCrashChild", role: Self.role, directory: crash.directory,
                environment: crash.childEnvironment(first: progress.next),
                maximumDelay: 300_000, using: &random))
            try await crash.drainAndCheck(progress, sqlRows: progress.inserted, run: run)
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
        try await Self.forEachRun(runsVariable: "COFFER_CRASH_POINT_RUNS", byDefault: 10) { crash, run, progress in
            // Rows for the child to pull: more than a page, so that a pull has two.
            try await crash.insertServerRows(5, counting: &progress.inserted)
            progress.record(try await crash.runChildToItsDeath(at: point.rawValue, first: progress.next, run: run,
                                                         environment: ["COFFER_CRASH_HIT": String(1 + run % 3)]))
            try await crash.drainAndCheck(progress, sqlRows: progress.inserted, run: run)
        }
    }

    /// kill -9 inside a resync, at each named point in turn, of a replica that was offline
    /// while the server deleted objects it holds and collected their tombstones (CF004): a
    /// replica of the same store then finishes the resync and holds exactly the server's
    /// objects (no ghost of a deleted one, none of its local changes lost). Its pushes fail
    /// in the child, so the resync runs with local changes unacknowledged: cards it created,
    /// and an edit (made offline) of a card the server deleted, which the server refuses once
    /// pushed. Runs per point: COFFER_CRASH_POINT_RUNS, 10 by default.
    @Test(arguments: ResyncCrashPoint.allCases)
    func killedInAResyncEndsWithTheServersObjects(point: ResyncCrashPoint) async throws {
        var deleted = Set<String>()
        try await Self.forEachRun(runsVariable: "COFFER_CRASH_POINT_RUNS", byDefault: 10) { crash, run, progress in
            // Rows the store gets before it goes offline: more than a resync page or two.
            try await crash.insertServerRows(5, counting: &progress.inserted)
            let ghosts = try await Self.goOffline(directory: crash.directory, schema: crash.schema, connection: crash.connection, run: run)
            deleted.formUnion(ghosts)
            progress.record(try await crash.runChildToItsDeath(
                at: point.rawValue, first: progress.next, run: run,
                environment: ["COFFER_CRASH_HIT": String(point == .betweenResyncPages ? 1 + run % 2 : 1), "COFFER_FAIL_PUSHES": "1"]))
            let sqlRows = Set((1...progress.inserted).map { "s\($0)" }).subtracting(deleted)
            try await crash.drainAndCheck(progress, sqlRows: 0, run: run)
            let store = try Store(directory: crash.directory, options: StoreOptions(durability: .noSync))
            let local = Set(try store.box(for: Replicated.Card.self).all().map(\.title))
            let stream = try await testTransport(schema: crash.schema).stream   // (never connects)
            #expect(try store.isResyncing(entity: "Card", stream: stream) == false, "run \(run): the resync did not end")
            try store.close()
            #expect(local.isDisjoint(with: deleted), "run \(run): ghosts left: \(local.intersection(deleted).sorted())")
            #expect(sqlRows.isSubset(of: local), "run \(run): rows lost: \(sqlRows.subtracting(local).sorted())")
        }
    }

    /// A crash test's fixture: a fresh schema of cards on the test cluster, and the directory
    /// of the child's store (removed at the end).
    struct ChildSchema {
        let connection: PostgresConnection
        let schema: String
        let directory: String
        let endpoint: PostgresCluster.Endpoint
        /// The gateway the child syncs through, and the token of its user (nil: directly).
        var gateway: (server: TestGateway, user: String, token: String)?

        /// A transport as the child's user: through the gateway, or directly.
        func transport() async throws -> any SyncTransport {
            if let gateway { return try await gateway.server.transport(for: gateway.user) }
            return try await testTransport(schema: schema)
        }

        /// Inserts `count` cards by plain SQL ("s<n>", count -n), numbered on from `inserted`.
        func insertServerRows(_ count: Int, counting inserted: inout Int) async throws {
            for _ in 0..<count {
                inserted += 1
                try await connection.run("INSERT INTO \(schema).\"Card\" (title, count, done) VALUES ('s\(inserted)', \(-inserted), false)")
            }
        }

        /// The child's environment: the cluster, the schema, and its first card number.
        func childEnvironment(first: Int) -> [String: String] {
            var environment = ["COFFER_SYNC_PORT": String(endpoint.port), "COFFER_SYNC_USER": endpoint.user,
                               "COFFER_SYNC_DATABASE": endpoint.database, "COFFER_SYNC_SCHEMA": schema, "COFFER_SYNC_FIRST": String(first)]
            if let gateway {
                environment["COFFER_SYNC_GATEWAY"] = gateway.server.url.absoluteString
                environment["COFFER_SYNC_TOKEN"] = gateway.token
            }
            return environment
        }

        /// Runs the child until it kills itself at the named `point` (with `environment`
        /// added), expects it to have died there of SIGKILL, and returns the card numbers it
        /// reported committed.
        func runChildToItsDeath(at point: String, first: Int, run: Int, environment: [String: String]) async throws -> Set<Int> {
            let child = try await ChildProcess.runToEnd(
                filter: "replicaCrashChild", role: ReplicaCrashTests.role, directory: directory,
                environment: childEnvironment(first: first).merging(["COFFER_CRASH_POINT": point]) { $1 }.merging(environment) { $1 },
                timeout: 30)
            #expect(child.lines.contains("dying at \(point)") && !child.timedOut, "run \(run): the child never reached \(point)")
            #expect(child.killed, "run \(run): the child did not die of SIGKILL")
            return ChildProcess.committedNumbers(in: child.lines)
        }

        /// ``ReplicaCrashTests/drainAndCheck(directory:schema:connection:committed:sqlRows:run:transport:)`` of the child's store.
        func drainAndCheck(_ progress: Progress, sqlRows: Int, run: Int) async throws {
            try await ReplicaCrashTests.drainAndCheck(directory: directory, schema: schema, connection: connection,
                                                      committed: progress.committed, sqlRows: sqlRows, run: run, transport: transport)
        }
    }

    /// What the runs of one crash test did so far: the card numbers the children reported
    /// committed, the cards SQL inserted, and the first number of the next child.
    struct Progress {
        var committed = Set<Int>()
        var inserted = 0
        var next = 0

        /// Adds a child's reported numbers; the next child numbers on past them (titles stay
        /// unique across runs).
        mutating func record(_ reported: Set<Int>) {
            committed.formUnion(reported)
            next = max(next, reported.max() ?? next) + 1000
        }
    }

    /// In the parent only (a child returns at once): runs `body` as many times as the
    /// environment variable `runsVariable` says (`byDefault` without it), on one fresh schema
    /// of cards with one child store, with the progress of the runs so far.
    static func forEachRun(runsVariable: String, byDefault: Int, mode: TransportMode = .direct,
                           _ body: (ChildSchema, Int, inout Progress) async throws -> Void) async throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment[ChildProcess.roleVariable] == nil else { return }
        let runs = Int(environment[runsVariable] ?? "") ?? byDefault
        try await withChildSchema(mode: mode) { crash in
            var progress = Progress()
            for run in 0..<runs { try await body(crash, run, &progress) }
        }
    }

    /// Runs `body` with a fresh schema of cards installed and a directory for the child's store.
    static func withChildSchema(mode: TransportMode = .direct, _ body: (ChildSchema) async throws -> Void) async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let endpoint = try await PostgresCluster.shared.endpoint()
        let directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
        defer {
            do { try FileManager.default.removeItem(atPath: directory) } catch { Issue.record("removing \(directory): \(error)") }
        }
        try await withInstalled(schema) { connection in
            var crash = ChildSchema(connection: connection, schema: schema.schemaName, directory: directory, endpoint: endpoint)
            switch mode {
            case .direct:
                try await body(crash)
            case .gateway:
                // The child syncs after every second write, faster than a device should: the
                // user's rate limit is raised so that it is never what stops a run.
                var limits = GatewayConfiguration.Limits()
                limits.requestsPerSecond = 10_000
                limits.burst = 10_000
                try await TestGateway.with(connection, schema: schema.schemaName, limits: limits) { gateway in
                    let user = "crash_" + schema.schemaName
                    crash.gateway = (gateway, user, try await gateway.token(for: user))
                    try await body(crash)
                }
            }
        }
    }

    /// Brings the store in `directory` to the server's rows, then, as if it went offline:
    /// the server deletes two of the rows it holds and collects every tombstone (so the
    /// store's cursor is below the floor), and the store edits one of those rows locally
    /// (unacknowledged; the server refuses it once pushed). Returns the deleted titles.
    static func goOffline(directory: String, schema s: String, connection: PostgresConnection, run: Int) async throws -> Set<String> {
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        defer {
            do { try store.close() } catch { Issue.record("closing the store: \(error)") }
        }
        let cards = store.box(for: Replicated.Card.self)
        let (settled, _) = try await syncUntilInStep(store, schema: s, connection: connection)
        #expect(settled, "run \(run): the store did not reach the server's rows before going offline")
        let doomed = try cards.all().filter { $0.title.hasPrefix("s") }.sorted { $0.count > $1.count }.prefix(2)
        for card in doomed {
            let syncId = try #require(try cards.syncId(of: card.id))
            try await connection.run("DELETE FROM \(s).\"Card\" WHERE sync_id = '\(syncId.uuidString)'")
        }
        let collected = try decodeObject(try await connection.value("SELECT \(s).coffer_gc(interval '0')::text"))
        #expect(collected["removed"] as? Int ?? 0 >= doomed.count, "run \(run): \(collected)")
        if var edited = doomed.first {
            edited.note = "edited offline in run \(run)"
            try cards.put(&edited)
        }
        // Another test's open transaction may hold the pull horizon back: wait until it
        // passes the deletes, so the resync's pull does not return the deleted rows.
        _ = try await connection.pullAll(s, "Card")
        return Set(doomed.map(\.title))
    }

    /// Syncs `store` until nothing is pending and it holds as many cards as the server;
    /// returns whether it got there, and the server's titles at the last look.
    static func syncUntilInStep(_ store: Store, schema: String, connection: PostgresConnection,
                                transport makeTransport: (() async throws -> any SyncTransport)? = nil) async throws
        -> (settled: Bool, serverTitles: [String])
    {
        let transport: any SyncTransport = if let makeTransport { try await makeTransport() } else { try await testTransport(schema: schema) }
        let replica = try SyncReplica(store: store, entities: [Replicated.Card.self], transport: transport)
        let cards = store.box(for: Replicated.Card.self)
        var serverTitles: [String] = []
        let settled = try await eventually(attempts: 100, seconds: 30) {
            do {
                try await replica.syncNow()
            } catch let error as SyncTransportError where error.isTransient {
                return false   // a call the loaded machine timed out: the next pass retries it, as run() would
            }
            serverTitles = try await connection.rows("SELECT title FROM \(schema).\"Card\"").compactMap { $0.first ?? nil }
            return try store.pendingSyncCount() == 0 && cards.count() == serverTitles.count
        }
        await transport.close()
        return (settled, serverTitles)
    }

    /// Opens the store the child left, syncs it until in step with the server, and checks that
    /// nothing is lost or doubled on either side.
    static func drainAndCheck(directory: String, schema: String, connection: PostgresConnection,
                              committed: Set<Int>, sqlRows: Int, run: Int,
                              transport: @escaping () async throws -> any SyncTransport) async throws {
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        defer {
            do { try store.close() } catch { Issue.record("closing the store: \(error)") }
        }
        let cards = store.box(for: Replicated.Card.self)
        let (settled, serverTitles) = try await syncUntilInStep(store, schema: schema, connection: connection, transport: transport)
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

/// A named moment inside a resync (the server collected tombstones past the entity's
/// cursor) where the crash child kills itself. (The fetched state of the unseen objects is
/// applied and the resync's marker cleared in one transaction: there is no moment between.)
enum ResyncCrashPoint: String, CaseIterable, Sendable {
    /// The server answered CF004; the resync has not begun (no marker, the cursor unchanged).
    case resyncNeeded = "CF004 answered, resync not begun"
    /// A resync page was applied with its cursor and the sync ids it brought; the next page
    /// is not fetched.
    case betweenResyncPages = "between resync pages"
    /// Every resync page was applied; the state of the objects they did not bring is not
    /// fetched yet.
    case beforeUnseenFetch = "resync pages applied, unseen objects not fetched"
    /// The server answered the fetch of the unseen objects; nothing of it is applied and
    /// the marker is still there.
    case unseenFetchedNotApplied = "unseen objects fetched, not applied"

    /// `transport`, with a hook that kills the process the `hit`-th time `point` is reached;
    /// `resyncing` reads the store's resync marker.
    static func dying(at point: ResyncCrashPoint, hit: Int, through transport: any SyncTransport,
                      resyncing: @escaping @Sendable () -> Bool) -> InterceptingTransport {
        let hits = LockedState(0)
        return InterceptingTransport(transport) { event in
            var reached = false
            switch (point, event) {
            case (.resyncNeeded, .pullFailed(_, _, let error)):
                reached = (error as? SyncTransportError)?.requiresResync ?? false
            case (.betweenResyncPages, .beforePull(_, let cursor)):
                reached = cursor != "0" && resyncing()
            case (.beforeUnseenFetch, .beforeFetch):
                reached = resyncing()
            case (.unseenFetchedNotApplied, .afterFetch):
                reached = resyncing()
            default:
                break
            }
            guard reached, hits.withLock({ hits in hits += 1; return hits == hit }) else { return }
            ChildProcess.report("dying at \(point.rawValue)")
            kill(getpid(), SIGKILL)
        }
    }
}
