@testable import CofferGateway
import CofferSync
import CofferTestSupport
import Foundation
import JWTKit
import PostgresNIO
import Testing

/// The gateway refuses what it must before anything reaches the database (missing, forged,
/// expired tokens: 401; malformed requests: 400; oversized: 413; over the rate: 429), answers
/// health and metrics, and wakes waiting clients after a change.
@Suite(.timeLimit(.minutes(2))) struct GatewayTests {
    static func card(_ id: UUID, title: String) -> String {
        let clock = String(hlcNow(plus: -60_000))
        return #"[{"mid": 1, "entity": "Card", "id": "\#(id.uuidString.lowercased())", "op": "upsert", "create": true, "#
            + #""fields": {"title": "\#(title)", "count": 0, "done": false}, "clocks": {"title": "\#(clock)", "count": "\#(clock)", "done": "\#(clock)"}}]"#
    }

    @Test func refusedRequestsNeverReachTheDatabase() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: s) { gateway in
                let client = UUID().uuidString.lowercased()
                let body = Data(Self.card(UUID(), title: "x").utf8)
                let push = "v1/push?client=\(client)"

                // Tokens: none, a forged one, an expired one, one signed with "none".
                #expect(try await gateway.request("POST", push, token: nil, body: body).0 == 401)
                let forger = JWTKeyCollection()
                await forger.add(hmac: HMACKey(from: String(repeating: "f", count: 48)), digestAlgorithm: .sha256)
                let forged = try await forger.sign(GatewayClaims(sub: .init(value: "mallory"), exp: .init(value: Date().addingTimeInterval(600))))
                #expect(try await gateway.request("POST", push, token: forged, body: body).0 == 401)
                let expired = try await gateway.token(for: "alice", expiresIn: -3600)
                #expect(try await gateway.request("POST", push, token: expired, body: body).0 == 401)
                let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString()
                let claims = Data(#"{"sub":"alice","exp":4102444800}"#.utf8).base64EncodedString()
                #expect(try await gateway.request("POST", push, token: header + "." + claims + ".", body: body).0 == 401)
                #expect(try await gateway.request("POST", push, token: "not a token", body: body).0 == 401)

                // Malformed and oversized requests with a good token.
                let token = try await gateway.token(for: "alice")
                #expect(try await gateway.request("POST", "v1/push?client=nope", token: token, body: body).0 == 400)
                #expect(try await gateway.request("POST", push, token: token, body: Data("{not json".utf8)).0 == 400)
                #expect(try await gateway.request("POST", push, token: token, body: Data(#"{"mid": 1}"#.utf8)).0 == 400)
                #expect(try await gateway.request("GET", "v1/pull?entity=Card&cursor=0&limit=0", token: token).0 == 400)
                var large = Data(repeating: 0x20, count: GatewayConfiguration.Limits.smallestRequestBytes + 2)
                large[0] = UInt8(ascii: "[")
                large[large.count - 1] = UInt8(ascii: "]")
                #expect(try await gateway.request("POST", push, token: token, body: large).0 == 413)
                #expect(try await gateway.request("GET", "v1/nothing", token: token).0 == 404)

                // Nothing of that reached the database.
                #expect(try await connection.value("SELECT count(*)::text FROM \(s).clients") == "0")
                #expect(try await connection.value(#"SELECT count(*)::text FROM \#(s)."Card""#) == "0")

                // A good request goes through; health and metrics answer.
                let (status, reply) = try await gateway.request("POST", push, token: token, body: body)
                #expect(status == 200, "\(reply)")
                #expect(try await connection.value("SELECT user_id FROM \(s).clients") == "alice")
                #expect(try await gateway.request("GET", "health", token: nil).0 == 200)
                let (metricsStatus, metrics) = try await gateway.request("GET", "metrics", token: nil)
                #expect(metricsStatus == 200)
                #expect(metrics.contains(#"coffer_gateway_requests_total{route="push",status="401"} 5"#), "\(metrics)")
            }
        }
    }

    @Test func aUserOverTheRateIsRefusedWhileOthersGoOn() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        var limits = GatewayConfiguration.Limits()
        limits.requestsPerSecond = 0.01
        limits.burst = 3
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: schema.schemaName, limits: limits) { gateway in
                let (alice, bob) = (try await gateway.token(for: "alice"), try await gateway.token(for: "bob"))
                let pull = "v1/pull?entity=Card&cursor=0&limit=10"
                for _ in 0..<3 { #expect(try await gateway.request("GET", pull, token: alice).0 == 200) }
                #expect(try await gateway.request("GET", pull, token: alice).0 == 429)
                #expect(try await gateway.request("GET", pull, token: bob).0 == 200)
            }
        }
    }

    @Test func aWaitingClientIsWokenByAnotherUsersPush() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: schema.schemaName) { gateway in
                let waiter = try await Self.quietWaiter(gateway, user: "alice")
                let pusher = try await gateway.transport(for: "bob")
                let woken = Task { try await waiter.waitForChanges(timeout: .seconds(20)) }
                try await Task.sleep(for: .milliseconds(300))
                let reply = try await pusher.push(client: UUID(), batch: SyncPushBatch(json: Self.card(UUID(), title: "bob's"), count: 1, lastMid: 1))
                #expect(reply.rejected.isEmpty)
                #expect(try await woken.value)
                await waiter.close()
                await pusher.close()
            }
        }
    }

    /// A transport of `user` that has waited until nothing more wakes it: the first wait has
    /// no generation yet and returns at once; once the gateway's LISTEN is up (being
    /// established, it wakes waiters too) and nothing happens, a wait ends at its timeout.
    static func quietWaiter(_ gateway: TestGateway, user: String) async throws -> GatewayTransport {
        let waiter = try await gateway.transport(for: user)
        #expect(try await waiter.waitForChanges(timeout: .seconds(5)))
        var quiet = false
        for _ in 0..<10 where !quiet {
            quiet = try await waiter.waitForChanges(timeout: .seconds(1)) == false
        }
        #expect(quiet)
        return waiter
    }

    /// Cancelling the gateway's task while new connections keep arriving and a client waits
    /// for changes shuts it down gracefully: the task ends without an error (a cancelled
    /// server used to drop a connection accepted in that moment, and swift-nio traps on an
    /// unread connection), the wait is answered as changed instead of holding the shutdown
    /// for its timeout, and afterwards nothing listens.
    @Test func stoppingWhileConnectionsArriveEndsWaitsAndShutsDownCleanly() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        var limits = GatewayConfiguration.Limits()
        limits.requestsPerSecond = 1_000_000
        limits.burst = 1_000_000
        try await withInstalled(schema) { connection in
            try await TestGateway.with(connection, schema: schema.schemaName, limits: limits) { gateway in
                let waiter = try await Self.quietWaiter(gateway, user: "alice")
                // Far longer than the test: only the shutdown ends it early.
                let waiting = Task { try await waiter.waitForChanges(timeout: .seconds(250)) }
                // Clients that open a new connection for every request, until one is refused.
                let token = try await gateway.token(for: "bob")
                let clients = (0..<4).map { _ in
                    Task { () -> (answered: Int, refused: Bool) in
                        var answered = 0
                        for _ in 0..<5_000 {
                            do {
                                _ = try await gateway.request("GET", "v1/last-mid?client=\(UUID())", token: token, closing: true)
                                answered += 1
                            } catch {
                                return (answered, true)
                            }
                        }
                        return (answered, false)
                    }
                }
                try await Task.sleep(for: .milliseconds(500))
                gateway.server.cancel()
                // Ends without an error: the cancellation became a graceful shutdown.
                try await gateway.server.value
                #expect(try await waiting.value)
                for client in clients {
                    let (answered, refused) = await client.value
                    #expect(answered > 0)
                    #expect(refused, "a client still got answers after the shutdown")
                }
                await waiter.close()
            }
        }
    }

    /// With the database unreachable (nothing listens on its port), health and every call are
    /// answered 503 within `limits.connectSeconds` instead of waiting for a connection for ever,
    /// and the transport reports that as transient.
    @Test func anUnreachableDatabaseIsAnswered503InTime() async throws {
        let closedPort = try PostgresCluster.freePort()
        var configuration = GatewayConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.database.host = "127.0.0.1"
        configuration.database.port = closedPort
        configuration.database.user = "nobody"
        configuration.database.database = "nowhere"
        configuration.database.tls = "disable"
        configuration.limits.connectSeconds = 1
        let (test, server) = try await TestGateway.start(configuration, appRole: "app", gatewayRole: "nobody")
        defer { server.cancel() }
        // Each request gives up after 10 s: a gateway waiting for a connection for ever fails them.
        let (health, _) = try await test.request("GET", "health", token: nil)
        #expect(health == 503)
        let token = try await test.token(for: "someone")
        let (pull, body) = try await test.request("GET", "v1/pull?entity=Card&cursor=0&limit=10", token: token)
        #expect(pull == 503, "\(body)")
        #expect(body.contains("08000"))
        let transport = try await test.transport(for: "someone")
        do {
            _ = try await transport.pull(entity: "Card", cursor: "0", limit: 10)
            Issue.record("a pull through a gateway without its database succeeded")
        } catch let error as SyncTransportError {
            #expect(error.isTransient, "\(error)")
        }
        await transport.close()
        server.cancel()
        _ = await server.result
    }
}
