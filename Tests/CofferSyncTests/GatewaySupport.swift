@testable import CofferGateway
import CofferSync
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JWTKit
import PostgresNIO
import Testing

/// How a test's replicas reach the server: PostgreSQL directly, or through a gateway.
enum TransportMode: String, CaseIterable, Sendable { case direct, gateway }

/// A `coffer-gateway` running in the test process in front of the test cluster, for one
/// installed schema: a login role it connects as (trusted as the schema's gateway), an app
/// role every request runs as (granted the schema), and tokens signed with its secret.
struct TestGateway {
    let port: Int
    let appRole: String
    let gatewayRole: String
    let keys: JWTKeyCollection
    /// The task the gateway runs in: cancelling it shuts the gateway down gracefully.
    let server: Task<Void, any Error>
    /// This gateway's own session: a shared one would keep connections to the port of a
    /// gateway that stopped, which a later gateway may get, and send a request on a
    /// connection the stopped server had closed ("empty reply from server").
    let session: URLSession
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A token for `user` that expires `expiresIn` from now (negative: expired).
    func token(for user: String, expiresIn: TimeInterval = 600) async throws -> String {
        try await keys.sign(GatewayClaims(sub: .init(value: user), exp: .init(value: Date().addingTimeInterval(expiresIn))))
    }

    /// A transport to this gateway as `user`. The deadline is long by default: on two cores
    /// beside the whole suite (crash tests start a test process per run) a call can wait
    /// seconds for the CPU; tests of deadlines pass their own.
    func transport(for user: String, timeout: Duration = .seconds(30)) async throws -> GatewayTransport {
        let token = try await token(for: user)
        return GatewayTransport(url: url, requestTimeout: timeout) { token }
    }

    /// Runs `body` with a gateway for schema `s` (installed over `connection`, which owns
    /// it), then stops the gateway and drops its roles.
    static func with(_ connection: PostgresConnection, schema s: String,
                     limits: GatewayConfiguration.Limits = .init(), connections: Int = 4,
                     _ body: (TestGateway) async throws -> Void) async throws {
        try await RowLevelSecurityTests.withRoles(connection, schema: s, ["gateway", "app"], login: true) { roles in
            let (gatewayRole, appRole) = (roles[0], roles[1])
            try await connection.run("ALTER ROLE \(appRole) NOLOGIN")
            try await connection.run("GRANT \(appRole) TO \(gatewayRole)")
            try await connection.run("SELECT \(s).coffer_trust_gateway('\(gatewayRole)')")
            // A member of the gateway role is a gateway: the test role, which pushes directly
            // in some tests, must not be one while the gateway runs.
            try await connection.run("REVOKE \(gatewayRole) FROM current_user")
            let endpoint = try await PostgresCluster.shared.endpoint()
            var configuration = GatewayConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.database.host = "127.0.0.1"
            configuration.database.port = endpoint.port
            configuration.database.user = gatewayRole
            configuration.database.database = endpoint.database
            configuration.database.schema = s
            configuration.database.role = appRole
            configuration.database.tls = "disable"
            configuration.database.connections = connections
            configuration.limits = limits
            let (test, server) = try await start(configuration, appRole: appRole, gatewayRole: gatewayRole)
            // Its pooled connections are gone before its role is dropped.
            func stop() async throws {
                test.session.invalidateAndCancel()
                server.cancel()
                _ = await server.result
                // Membership again: to end its connections and drop what it owns.
                try await connection.run("GRANT \(gatewayRole) TO current_user")
                _ = try await connection.rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(gatewayRole)'")
            }
            do {
                try await body(test)
            } catch {
                try await stop()
                throw error
            }
            try await stop()
        }
    }

    /// Starts a gateway with `configuration` and a random token secret; returns it and the
    /// task it runs in (cancel it to stop the gateway).
    static func start(_ configuration: GatewayConfiguration, appRole: String, gatewayRole: String) async throws
        -> (TestGateway, Task<Void, any Error>)
    {
        var configuration = configuration
        let secret = (0..<48).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }.map(String.init).joined()
        configuration.token.hmacSecret = secret
        let gateway = try await Gateway(configuration: configuration)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = Task { try await gateway.run { port in _ = portContinuation.yield(port) } }
        var port = 0
        for await value in ports {
            port = value
            break
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let session = URLSession(configuration: .ephemeral)
        return (TestGateway(port: port, appRole: appRole, gatewayRole: gatewayRole, keys: keys, server: server, session: session), server)
    }

    /// A raw request to the gateway: the status and the body.
    func request(_ method: String, _ path: String, token: String?, body: Data? = nil,
                 closing: Bool = false) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/\(path)")!)
        request.httpMethod = method
        // The server closes the connection after the answer: the next request opens a new one.
        if closing { request.setValue("close", forHTTPHeaderField: "Connection") }
        if let token { request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        request.httpBody = body
        request.timeoutInterval = 10
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}
