import CofferSync
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The gateway for public apps: stateless HTTP in front of the sync schema's SQL functions.
/// Per request it checks the bearer token (a JWT), applies the user's rate limit, and calls
/// one function in a transaction of its own as the configured app role for the token's
/// user, so the schema's row-level security decides what the user sees and changes. It has
/// no sync logic of its own: a replica with a ``GatewayTransport`` behaves as one with a
/// `PostgresTransport`. One LISTEN connection wakes the requests waiting for changes.
///
/// Routes (all but `/health` and `/metrics` need `Authorization: Bearer <jwt>`):
/// - `POST /v1/push?client=<uuid>`, body: the batch (`coffer_push`'s JSON array)
/// - `GET /v1/pull?entity=<name>&cursor=<cursor>&limit=<n>[&bytes=<n>][&scope=<name>&parameters=<json>]`
///   (`coffer_pull`)
/// - `POST /v1/fetch?entity=<name>`, body: a JSON array of sync ids (`coffer_fetch`)
/// - `POST /v1/scope-ids?entity=<name>&limit=<n>[&after=<uuid>]`, body: a JSON array of
///   subscriptions (`coffer_scope_ids`)
/// - `GET /v1/last-mid?client=<uuid>` (`coffer_last_mid`): `{"lastMid": "<n>"}`
/// - `GET /v1/wait?timeout=<seconds>[&after=<generation>]`: `{"changed": true, "generation"}`
///   at once when a change came after the generation the last wait returned (or none was
///   given), else after the next change, or `{"changed": false, ...}` at the timeout
/// - `POST /v1/wait?timeout=<seconds>[&after=<generation>]`, body: a JSON array of wake keys
///   (the `"wake"` of pull pages): as `GET`, for changes that concern one of the keys
/// - `GET /health`: 200 when the database answers, else 503; `GET /metrics`: Prometheus text
///
/// Answers: 200 with the function's JSON; 400 for a malformed request, 401 for a missing,
/// forged or expired token, 413 for a body over the limit, 429 over the rate limit (none of
/// these reach the database); 403, 409 or 422 with `{"error", "sqlState", "message"}` when
/// the database refused the call (403: the user may not: CF005, CF006, 42501, class 28; 409:
/// the schema lacks the model, CF001); 503 when it is unavailable (connection, resources,
/// serialization: try again).
///
/// ```swift
/// let gateway = try await Gateway(configuration: GatewayConfiguration(file: "gateway.json", environment: [:]))
/// try await gateway.run { port in print("listening on \(port)") }
/// ```
public final class Gateway: Sendable {
    let configuration: GatewayConfiguration
    let database: GatewayDatabase
    let authenticator: GatewayAuthenticator
    let limiter: GatewayRateLimiter
    let hub: GatewayWakeHub
    let metrics = GatewayMetrics()
    let logger: Logger
    let schemaSQL: String

    /// A gateway for `configuration` (checked; nothing is opened until ``run(onListening:)``).
    ///
    /// ```swift
    /// let gateway = try await Gateway(configuration: configuration, logger: Logger(label: "gateway"))
    /// ```
    ///
    /// - Throws: ``GatewayConfigurationError`` when a setting is wrong or the token key cannot
    ///   be read.
    public init(configuration: GatewayConfiguration, logger: Logger = Logger(label: "coffer.gateway")) async throws {
        try configuration.check()
        self.configuration = configuration
        self.logger = logger
        database = try GatewayDatabase(configuration.database, callSeconds: configuration.limits.callSeconds,
                                       connectSeconds: configuration.limits.connectSeconds, logger: logger)
        authenticator = try await GatewayAuthenticator.make(configuration.token)
        limiter = GatewayRateLimiter(rate: configuration.limits.requestsPerSecond, burst: configuration.limits.burst)
        hub = GatewayWakeHub(limit: configuration.limits.waiters)
        schemaSQL = "\"" + configuration.database.schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Serves until the task is cancelled: the HTTP server, the connection pool and the LISTEN
    /// connection. `onListening` gets the port once the server accepts connections.
    ///
    /// Cancelling shuts the server down gracefully: it stops accepting connections, ends the
    /// waits for changes (answered as changed), lets the requests in flight finish (those
    /// still running `limits.callSeconds` plus 5 s later are cancelled), closes idle
    /// connections, and only then closes the database connections.
    ///
    /// ```swift
    /// let task = Task { try await gateway.run { port in print(port) } }
    /// task.cancel()   // stops it
    /// ```
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let router = Router()
        addRoutes(to: router)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        var lifecycle = ServiceGroupConfiguration(services: [app], logger: logger)
        // Requests still running this long after the shutdown began are cancelled.
        lifecycle.maximumGracefulShutdownDuration = .seconds(configuration.limits.callSeconds + 5)
        let server = ServiceGroup(configuration: lifecycle)
        let listen = try database.listenConfiguration
        let (client, hub, logger) = (database.client, hub, logger)
        // Each part runs in a task of its own, which this task's cancellation does not reach:
        // cancelled, the server would stop reading accepted connections at once (a connection
        // accepted in that moment is dropped unread, and swift-nio traps on it), and the
        // connection pool would close under the requests still in flight. Cancellation asks
        // for the graceful shutdown instead; the pool and the LISTEN connection close after
        // the server has stopped.
        let pool = Task { await client.run() }
        let listener = Task { await PostgresTransport.listen(configuration: listen, logger: logger, signal: { hub.signal($0) }) }
        let serving = Task { try await server.run() }
        let served = await withTaskCancellationHandler {
            await serving.result
        } onCancel: {
            hub.close()
            Task { await server.triggerGracefulShutdown() }
        }
        // The server ends first (shut down, or it failed): the rest follows it.
        listener.cancel()
        pool.cancel()
        await listener.value
        await pool.value
        try served.get()
    }
}
