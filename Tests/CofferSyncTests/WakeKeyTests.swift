@_spi(CofferSync) import Coffer
@testable import CofferGateway
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Wake keys: a gateway wakes a wait that names keys only for changes that concern them (a
/// key, its entity's broadcast, a re-established LISTEN), never misses one, and forgets old
/// keys without missing one either. Checked on the hub alone against a plain model, then
/// through a gateway and a replica.
@Suite struct WakeKeyTests {
    /// Waits until `hub` holds `count` waits (each a task started just before).
    static func waitUntil(_ hub: GatewayWakeHub, holds count: Int) async throws {
        for _ in 0..<2000 where hub.waiting != count { try await Task.sleep(for: .milliseconds(5)) }
        #expect(hub.waiting == count)
    }

    @Test func aWaitWakesForItsKeysItsEntityAndAReconnectOnly() async throws {
        let hub = GatewayWakeHub(limit: 10)
        let start = hub.generation
        let keyed = Task { await hub.wait(after: start, keys: ["Post/a", "Topic/"], timeout: .seconds(120)) }
        let any = Task { await hub.wait(after: start, keys: nil, timeout: .seconds(120)) }
        try await Self.waitUntil(hub, holds: 2)
        hub.signal("Post/b")
        #expect(await any.value?.changed == true)
        hub.signal("Topic/x")
        hub.signal("Note")
        hub.signal("Post/")
        try await Self.waitUntil(hub, holds: 1)
        hub.signal("Topic/")
        let first = await keyed.value
        #expect(first?.changed == true)

        // The entity's broadcast wakes a wait for any of its keys; a reconnect wakes all.
        let generation = try #require(first?.generation)
        let broadcast = Task { await hub.wait(after: generation, keys: ["Post/a"], timeout: .seconds(120)) }
        try await Self.waitUntil(hub, holds: 1)
        hub.signal("Postal")
        #expect(hub.waiting == 1)
        hub.signal("Post")
        let second = try #require(await broadcast.value)
        #expect(second.changed)
        let reconnect = Task { await hub.wait(after: second.generation, keys: ["Post/a"], timeout: .seconds(120)) }
        try await Self.waitUntil(hub, holds: 1)
        hub.signal()
        let third = try #require(await reconnect.value)
        #expect(third.changed)

        // A change between two waits is not missed; one of other keys does not count.
        hub.signal("Post/a")
        #expect(await hub.wait(after: third.generation, keys: ["Post/a"], timeout: .zero)?.changed == true)
        #expect(await hub.wait(after: third.generation, keys: ["Post/b"], timeout: .zero)?.changed == false)
        // Another run's generation, or none, is answered at once.
        #expect(await hub.wait(after: "1-0", keys: ["Post/b"], timeout: .seconds(120))?.changed == true)
        #expect(await hub.wait(after: nil, keys: ["Post/b"], timeout: .seconds(120))?.changed == true)
        #expect(hub.waiting == 0)
    }

    /// Waits that time out, are cancelled or are woken at about the same moment leave nothing
    /// behind in the hub once they returned (a timer that fired as its wait was woken used to
    /// leave the wait's id in the hub for good).
    @Test func everyWaitsBookkeepingGoesWhenItReturns() async throws {
        let hub = GatewayWakeHub(limit: 10_000)
        var random = SplitMix64(state: 42)
        let signals = Task {
            while !Task.isCancelled {
                hub.signal("Post/")
                try? await Task.sleep(for: .microseconds(200))
            }
        }
        for _ in 0..<20 {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    let timeout = Duration.microseconds(Int64(random.next() % 2000))
                    let cancelAfter = random.next() % 3 == 0 ? Duration.microseconds(Int64(random.next() % 2000)) : nil
                    let wait = Task { _ = await hub.wait(after: hub.generation, keys: ["Post/"], timeout: timeout) }
                    group.addTask {
                        if let cancelAfter {
                            try? await Task.sleep(for: cancelAfter)
                            wait.cancel()
                        }
                        await wait.value
                    }
                }
            }
        }
        signals.cancel()
        // A timer that lost the race to a wake-up may still run for a moment after its wait returned.
        for _ in 0..<400 where hub.tracked != 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(hub.tracked == 0)
    }

    /// A wait that names its owner ends the owner's earlier wait (false, at once) and no
    /// one else's; the owners' bookkeeping goes with their waits.
    @Test func anOwnersNewWaitEndsItsEarlierOneOnly() async throws {
        let hub = GatewayWakeHub(limit: 2)
        let start = hub.generation
        let first = Task { await hub.wait(after: start, keys: ["Post/a"], timeout: .seconds(120), owner: ("alice", 1)) }
        let other = Task { await hub.wait(after: start, keys: ["Post/a"], timeout: .seconds(120), owner: ("bob", 1)) }
        try await Self.waitUntil(hub, holds: 2)
        // At the limit, the owner's next wait is still taken: its earlier one makes room.
        let second = Task { await hub.wait(after: start, keys: ["Post/a"], timeout: .seconds(120), owner: ("alice", 3)) }
        #expect(await first.value?.changed == false)
        try await Self.waitUntil(hub, holds: 2)
        // A wait that arrives after a later one of its owner returns at once.
        #expect(await hub.wait(after: start, keys: ["Post/a"], timeout: .seconds(120), owner: ("alice", 2))?.changed == false)
        #expect(hub.waiting == 2)
        hub.signal("Post/a")
        #expect(await second.value?.changed == true)
        #expect(await other.value?.changed == true)
        #expect(hub.tracked == 0)
    }

    /// Many owners each starting waits that overlap at random (as transports whose replicas
    /// leave waits for local changes do): at most one wait per owner stays, every wait
    /// returns, and nothing is left behind.
    @Test func overlappingWaitsOfRandomOwnersLeaveOnePerOwner() async throws {
        let hub = GatewayWakeHub(limit: 10_000)
        var random = SplitMix64(state: 7)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<600 {
                let owner = ("user/\(random.next() % 20)", random.next() % 1000)
                let after = hub.generation
                group.addTask { _ = await hub.wait(after: after, keys: ["Post/"], timeout: .seconds(120), owner: owner) }
                if random.next() % 50 == 0 { hub.signal("Post/") }
                if random.next() % 4 == 0 { await Task.yield() }
            }
            // Let every wait register, then check the bound and wake the rest.
            for _ in 0..<400 where hub.waiting > 20 { try? await Task.sleep(for: .milliseconds(5)) }
            try? await Task.sleep(for: .milliseconds(50))
            #expect(hub.waiting <= 20)
            hub.signal("Post/")
        }
        #expect(hub.tracked == 0)
    }

    /// Random notifications and waits from random earlier generations, against a log of
    /// every notification: a wait returns at once exactly when a logged notification after
    /// its generation concerns it; with a small key limit, at least then.
    @Test(arguments: [1000, 2]) func waitsMatchALogOfNotifications(keyLimit: Int) async throws {
        var random = SplitMix64(state: UInt64(keyLimit) &* 7919)
        let hub = GatewayWakeHub(limit: 10, keyLimit: keyLimit)
        let keys = ["Post/", "Post/1", "Post/2", "Topic/", "Topic/1"]
        let payloads: [String?] = keys + ["Post", "Topic", "Other/", nil]
        var log: [(count: UInt64, payload: String?)] = []
        var generations = [hub.generation]
        func concerns(_ payload: String?, _ wanted: Set<String>?) -> Bool {
            guard let payload, let wanted else { return true }
            if payload.contains("/") { return wanted.contains(payload) }
            return wanted.contains { GatewayWakeHub.entity(of: $0) == payload }
        }
        for _ in 0..<600 {
            if random.next() % 3 == 0 {
                let payload = payloads[Int(random.next() % UInt64(payloads.count))]
                hub.signal(payload)
                let count = UInt64(hub.generation.split(separator: "-")[1]) ?? 0
                log.append((count, payload))
                generations.append(hub.generation)
                continue
            }
            let after = generations[Int(random.next() % UInt64(generations.count))]
            let since = UInt64(after.split(separator: "-")[1]) ?? 0
            let wanted: Set<String>? = random.next() % 5 == 0 ? nil : Set(keys.filter { _ in random.next() % 3 == 0 })
            let expected = log.contains { $0.count > since && concerns($0.payload, wanted) }
            let answer = try #require(await hub.wait(after: after, keys: wanted, timeout: .zero))
            if keyLimit >= payloads.count {
                #expect(answer.changed == expected, "after \(since), keys \(wanted.map { $0.sorted() } ?? ["any"]), log \(log.suffix(8))")
            } else if expected {
                #expect(answer.changed, "a wake-up missed after \(since), keys \(wanted.map { $0.sorted() } ?? ["any"])")
            }
            #expect(hub.rememberedKeys <= keyLimit)
        }
        #expect(hub.waiting == 0)
    }

    /// Through a gateway: a replica's waits name the key of its room, from its pull pages; a
    /// post in another room does not wake it, one in its room does; malformed keys are 400.
    @Test func aReplicaWaitsForItsRoomsKeyThroughTheGateway() async throws {
        let schema = try SyncSchema([Scoped.Topic.self, Scoped.Post.self], schema: uniqueSchemaName(), scopes: Scoped.scopes)
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await ScopeTests.setUp(connection, schema: s)
            try await ScopeTests.member(connection, s, "alice", of: "a", true)
            try await ScopeTests.member(connection, s, "alice", of: "b", true)
            try await TestGateway.with(connection, schema: s) { gateway in
                let store = try TemporaryStore()
                defer { store.cleanUp() }
                let transport = try await gateway.transport(for: "alice")
                let replica = try SyncReplica(store: store.store, entities: [Scoped.Post.self], transport: transport)
                try await replica.subscribe(Scoped.room("a"))
                #expect(replica.wakeKeys() == nil)
                _ = try await replica.syncNow()
                let key = try await WakeUpTests.roomKey(connection, s, "a")
                #expect(replica.wakeKeys() == [key])

                // The first wait has no generation: it returns at once. Then, once the
                // gateway's LISTEN is up (being established, it wakes waiters too), a quiet
                // wait ends at its timeout.
                #expect(try await transport.waitForChanges(timeout: .seconds(5), keys: [key]))
                var quiet = false
                for _ in 0..<10 where !quiet {
                    quiet = try await transport.waitForChanges(timeout: .seconds(1), keys: [key]) == false
                }
                #expect(quiet)
                let notWoken = Task { try await transport.waitForChanges(timeout: .seconds(3), keys: [key]) }
                try await Task.sleep(for: .milliseconds(300))
                try await ScopeTests.post(connection, s, room: "b", body: "elsewhere")
                #expect(try await notWoken.value == false)
                let woken = Task { try await transport.waitForChanges(timeout: .seconds(30), keys: [key]) }
                try await Task.sleep(for: .milliseconds(300))
                try await ScopeTests.post(connection, s, room: "a", body: "here")
                #expect(try await woken.value)
                // Another test's open transaction can hold the pull's horizon below the post
                // for a while: pull until it arrives.
                let arrived = try await eventually(attempts: 600, seconds: 60) {
                    _ = try await replica.syncNow()
                    return try ScopeTests.bodies(store.store) == ["here"]
                }
                let held = try ScopeTests.bodies(store.store)
                #expect(arrived, "holds \(held)")

                let token = try await gateway.token(for: "alice")
                for body in [#"["Post"]"#, #"[7]"#, #"{"keys": []}"#, "[\"Post/\\u0001\"]", "not json"] {
                    #expect(try await gateway.request("POST", "v1/wait?timeout=1", token: token, body: Data(body.utf8)).0 == 400, "\(body)")
                }
                await transport.close()
            }
        }
    }
}

extension WakeKeyTests {
    /// Waits cancelled at random moments around their reply (a write wakes them as they are
    /// cancelled): every one ends, woken or cancelled, and the transport goes on working. With
    /// `URLSession.data(for:)`, such a cancellation could stop the test process for good.
    /// The transport never cancels an HTTP request (see `GatewayTransport.perform`): a wait
    /// its caller gave up on is ended on the gateway by the transport's next wait, so waits
    /// left for local changes do not pile up there until they time out.
    @Test(.timeLimit(.minutes(3))) func waitsLeftByTheirCallerEndWhenTheNextBegins() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: s) { gateway in
                let waiter = try await gateway.transport(for: "alice")
                _ = try await waiter.waitForChanges(timeout: .seconds(5))
                func waiting() async throws -> Int {
                    let (_, metrics) = try await gateway.request("GET", "metrics", token: nil)
                    return metrics.split(separator: "\n").first { $0.hasPrefix("coffer_gateway_waiting ") }
                        .flatMap { Int($0.split(separator: " ")[1]) } ?? -1
                }
                // The gateway's LISTEN is up (its first start wakes every wait): a change wakes a wait.
                #expect(try await eventually {
                    let wait = Task { try await waiter.waitForChanges(timeout: .seconds(2), keys: ["Card/"]) }
                    try await Task.sleep(for: .milliseconds(50))
                    try await connection.run(#"INSERT INTO \#(s)."Card" (title) VALUES ('listening')"#)
                    return try await wait.value
                })
                for _ in 0..<10 {
                    let task = Task { try await waiter.waitForChanges(timeout: .seconds(25), keys: ["Card/"]) }
                    var seen = try await waiting()
                    for _ in 0..<500 where seen == 0 {
                        try await Task.sleep(for: .milliseconds(10))
                        seen = try await waiting()
                    }
                    task.cancel()
                    // Cancelled, or woken just before (nothing here changes, but a wake-up
                    // too many is allowed).
                    do { _ = try await task.value } catch is CancellationError {}
                }
                // Ten waits left: at most the latest one still waits (without the transport's
                // waiter, all ten would until they timed out).
                for _ in 0..<20 {
                    #expect(try await waiting() <= 1)
                    try await Task.sleep(for: .milliseconds(20))
                }
                let last = Task { try await waiter.waitForChanges(timeout: .seconds(25), keys: ["Card/"]) }
                try await Task.sleep(for: .milliseconds(100))
                #expect(try await waiting() <= 1)
                try await connection.run(#"INSERT INTO \#(s)."Card" (title) VALUES ('wake')"#)
                #expect(try await last.value)
                var left = try await waiting()
                for _ in 0..<500 where left != 0 {
                    try await Task.sleep(for: .milliseconds(10))
                    left = try await waiting()
                }
                #expect(left == 0)
                await waiter.close()
            }
        }
    }

    /// Closing the transport ends a wait in flight at once with `.closed` (its HTTP request is
    /// never cancelled), and later calls fail the same way.
    @Test(.timeLimit(.minutes(1))) func closingEndsAWaitInFlight() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: schema.schemaName) { gateway in
                let waiter = try await gateway.transport(for: "alice")
                _ = try await waiter.waitForChanges(timeout: .seconds(5))
                let wait = Task { try await waiter.waitForChanges(timeout: .seconds(25), keys: ["Card/"]) }
                try await Task.sleep(for: .milliseconds(200))
                await waiter.close()
                do {
                    _ = try await wait.value
                    // Woken just before the close (a wake-up too many is allowed).
                } catch SyncTransportError.closed {}
                await #expect(throws: SyncTransportError.self) { _ = try await waiter.lastMutationId(client: UUID()) }
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func waitsCancelledAsTheirRepliesArriveAllEnd() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        var limits = GatewayConfiguration.Limits()
        limits.requestsPerSecond = 1000
        limits.burst = 1000
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: s, limits: limits) { gateway in
                let waiter = try await gateway.transport(for: "alice")
                _ = try await waiter.waitForChanges(timeout: .seconds(5))
                var random = SplitMix64(state: 42)
                var (woken, cancelled) = (0, 0)
                for round in 0..<150 {
                    let task = Task { try await waiter.waitForChanges(timeout: .seconds(25), keys: ["Card/"]) }
                    try await connection.run(#"INSERT INTO \#(s)."Card" (title) VALUES ('\#(round)')"#)
                    try await Task.sleep(for: .microseconds(Int(random.next() % 4000)))
                    task.cancel()
                    switch await task.result {
                    case .success: woken += 1
                    case .failure(let error) where error is CancellationError: cancelled += 1
                    case .failure(let error): Issue.record("round \(round): \(error)")
                    }
                }
                #expect(woken + cancelled == 150)
                #expect(try await waiter.lastMutationId(client: UUID()) == 0)
                await waiter.close()
            }
        }
    }
}
