@_spi(CofferSync) import Coffer
@testable import CofferGateway
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Many devices, each a replica with its own store and token, through one gateway and one
/// PostgreSQL on loopback: each subscribes to its room (ten members each, row-level security
/// by membership), writes posts at random moments while every replica runs, and must end
/// holding exactly its room's posts, with nothing pending. The suite runs 8 devices;
/// `Benchmarks/gateway-load.sh` runs it at a measured size (1,000 devices by default), which
/// prints throughput and latencies: speed is reported, never asserted.
@Suite(.timeLimit(.minutes(10))) struct GatewayLoadTests {
    struct Device {
        let user: String
        let room: String
        let store: TemporaryStore
        let replica: SyncReplica
    }

    @Test func devicesConvergeToExactlyTheirScopesThroughOneGateway() async throws {
        let environment = ProcessInfo.processInfo.environment
        // The suite's size is small: the test runs beside the whole suite on two cores.
        let deviceCount = max(2, Int(environment["COFFER_GATEWAY_LOAD"] ?? "") ?? 8)
        let postsPerDevice = max(1, Int(environment["COFFER_GATEWAY_LOAD_POSTS"] ?? "") ?? (deviceCount > 100 ? 2 : 1))
        let window = Double(environment["COFFER_GATEWAY_LOAD_SECONDS"] ?? "") ?? (deviceCount > 100 ? 20 : 1)
        // The replicas' longest poll: the safety net between wake-ups (each ends in a pass
        // that pulls). 5 s keeps the suite's run short; measured sizes pass the default, 60 s.
        let longestPoll = Double(environment["COFFER_GATEWAY_LOAD_POLL"] ?? "") ?? 5
        let roomSize = 10
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await ScopeTests.setUp(connection, schema: s)
            let users = (0..<deviceCount).map { "u\($0)_\(s)" }
            let rooms = (0..<deviceCount).map { "room\($0 / roomSize)" }
            try await connection.run("""
                INSERT INTO \(s).members SELECT 'room' || (i / \(roomSize)), 'u' || i || '_\(s)' FROM generate_series(0, \(deviceCount - 1)) i
                """)
            var limits = GatewayConfiguration.Limits()
            limits.requestsPerSecond = 200
            limits.burst = 400
            try await TestGateway.with(connection, schema: s, limits: limits, connections: 16) { gateway in
                var devices: [Device] = []
                defer { for device in devices { device.store.cleanUp() } }
                for index in 0..<deviceCount {
                    let store = try TemporaryStore()
                    let replica = try SyncReplica(store: store.store, entities: [Scoped.Post.self],
                                                  transport: try await gateway.transport(for: users[index], timeout: .seconds(30)),
                                                  options: .init(poll: (.milliseconds(200), .seconds(longestPoll)), retry: (.milliseconds(100), .seconds(2))))
                    try await replica.subscribe(Scoped.room(rooms[index]))
                    devices.append(Device(user: users[index], room: rooms[index], store: store, replica: replica))
                }
                try await Self.exercise(devices, postsPerDevice: postsPerDevice, window: window, roomSize: roomSize, connection: connection, schema: s)
            }
        }
    }

    /// The initial sync, then the writes while every replica runs, then the checks.
    static func exercise(_ devices: [Device], postsPerDevice: Int, window: Double, roomSize: Int,
                         connection: PostgresConnection, schema s: String) async throws {
        let clock = ContinuousClock()
        let started = clock.now
        try await forEach(devices, concurrently: 64) { device in _ = try await device.replica.syncNow() }
        let initialSync = clock.now - started

        // Arrivals: the moment each post reaches each device, from the store's change stream.
        let arrivals = LockedState<[String: [(user: String, at: ContinuousClock.Instant)]]>([:])
        let readFailures = LockedState<[String]>([])
        let written = LockedState<[String: (room: String, writer: String, at: ContinuousClock.Instant)]>([:])
        // Observation starts when iteration does: every observer iterates before any write.
        let observing = LockedState(0)
        let observers = devices.map { device in
            Task {
                let posts = device.store.store.box(for: Scoped.Post.self)
                var changes = posts.changes().makeAsyncIterator()
                observing.withLock { $0 += 1 }
                while let change = await changes.next() {
                    let now = clock.now
                    let objects: [Scoped.Post?]
                    do {
                        objects = try posts.get(change.inserted)
                    } catch {
                        readFailures.withLock { $0.append("\(device.user): \(error)") }
                        continue
                    }
                    arrivals.withLock { arrivals in
                        for post in objects.compactMap({ $0 }) { arrivals[post.body, default: []].append((device.user, now)) }
                    }
                }
            }
        }
        #expect(try await eventually(attempts: 1200, seconds: 120) { observing.withLock { $0 } == devices.count })
        let runs = devices.map { device in Task { await device.replica.run() } }
        let writing = clock.now
        try await forEach(Array(devices.enumerated()), concurrently: devices.count) { index, device in
            var random = SystemRandomNumberGenerator()
            for number in 0..<postsPerDevice {
                try await Task.sleep(for: .seconds(Double.random(in: 0...window, using: &random) / Double(postsPerDevice)))
                let body = "d\(index)-\(number)"
                var post = Scoped.Post(room: device.room, body: body)
                try device.store.store.box(for: Scoped.Post.self).put(&post)
                written.withLock { $0[body] = (device.room, device.user, clock.now) }
            }
        }
        // Every post reaches every member of its room (the writer counts its own insert).
        let membersOf = Dictionary(grouping: devices, by: \.room).mapValues(\.count)
        let delivered = try await eventually(attempts: 2400, seconds: 240) {
            let (posts, seen) = (written.withLock { $0 }, arrivals.withLock { $0 })
            return posts.allSatisfy { body, post in (seen[body]?.count ?? 0) >= membersOf[post.room] ?? 0 }
        }
        let deliveredAt = clock.now
        for device in devices { device.replica.stop() }
        for run in runs { await run.value }
        for observer in observers { observer.cancel() }
        #expect(delivered, "not every post reached every member of its room within 240 seconds")
        #expect(readFailures.withLock { $0 }.isEmpty)

        // Every replica holds exactly its room's posts, and nothing is pending.
        try await forEach(devices, concurrently: 64) { device in _ = try await device.replica.syncNow() }
        let posts = written.withLock { $0 }
        for device in devices {
            let held = Set(try device.store.store.box(for: Scoped.Post.self).all().map(\.body))
            let expected = Set(posts.filter { $0.value.room == device.room }.keys)
            #expect(held == expected, "\(device.user) holds \(held.count) posts, its room has \(expected.count)")
            #expect(try device.store.store.pendingSyncCount() == 0)
        }
        let rows = try await connection.rows(#"SELECT count(*)::text FROM \#(s)."Post""#).first?.first ?? nil
        #expect(rows == String(posts.count))
        for device in devices { await device.replica.transport.close() }

        // The figures: each post's latency to each other member (the writer's own insert is
        // not a delivery), and throughput.
        let seen = arrivals.withLock { $0 }
        var latencies: [Double] = []
        for (body, post) in posts {
            for arrival in seen[body] ?? [] where arrival.user != post.writer {
                latencies.append(max(0, (arrival.at - post.at) / .milliseconds(1)))
            }
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double { latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        let span = (deliveredAt - writing) / .seconds(1)
        let roomCount = Set(devices.map(\.room)).count
        print("""
            gateway load: \(devices.count) devices, \(roomCount) rooms of \(roomSize), \(posts.count) posts over \(window) s
            initial sync of every device: \(initialSync)
            deliveries to other members: \(latencies.count) in \(String(format: "%.1f", span)) s (\(String(format: "%.0f", Double(latencies.count) / span))/s), writes \(String(format: "%.0f", Double(posts.count) / span))/s
            change latency to another member: p50 \(String(format: "%.0f", percentile(0.5))) ms, p99 \(String(format: "%.0f", percentile(0.99))) ms, max \(String(format: "%.0f", latencies.last ?? 0)) ms
            """)
    }

    /// Runs `body` for each element, at most `limit` at once.
    static func forEach<T: Sendable>(_ items: [T], concurrently limit: Int, _ body: @escaping @Sendable (T) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(limit, items.count) {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
            while try await group.next() != nil {
                if next < items.count {
                    let item = items[next]
                    group.addTask { try await body(item) }
                    next += 1
                }
            }
        }
    }
}
