import Foundation
import PostgresNIO

/// The direct transport: talks to PostgreSQL with postgres-nio, calling the sync schema's
/// `coffer_push` and `coffer_pull` functions over one connection (opened when first needed,
/// opened again after any failure), and LISTENing for the schema's change notifications
/// (`<schema>_changes`) on a second, dedicated connection that it re-establishes with backoff
/// whenever it drops.
///
/// Every call has a deadline (``Configuration/requestTimeout``): a stalled network fails the
/// call with ``SyncTransportError/timedOut(operation:after:)`` instead of hanging, and a
/// cancelled call closes its connection at once. Failures are thrown as
/// ``SyncTransportError`` naming what failed; ``SyncReplica`` retries them.
///
/// ```swift
/// let transport = PostgresTransport(configuration: .init(
///     host: "127.0.0.1", port: 5432, username: "app", password: nil, database: "app", tls: .disable))
/// let replica = try SyncReplica(store: store, entities: [Task.self], transport: transport)
/// ```
public actor PostgresTransport: SyncTransport {
    /// Where and how this transport connects.
    ///
    /// ```swift
    /// transport.configuration.schema   // "coffer"
    /// ```
    public nonisolated let configuration: Configuration

    /// The stream cursors are kept under: `postgres://host:port/database#schema`.
    ///
    /// ```swift
    /// transport.stream   // "postgres://127.0.0.1:5432/app#coffer"
    /// ```
    public nonisolated var stream: String { configuration.stream }

    let logger: Logger
    private let schemaSQL: String
    private var connection: PostgresConnection?
    private var connectionCount = 0
    private var isClosed = false
    private let wake = WakeSignal()
    private var listener: Task<Void, Never>?

    /// A transport for `configuration`; it connects when first used.
    ///
    /// ```swift
    /// let transport = PostgresTransport(configuration: configuration, logger: Logger(label: "app.sync"))
    /// ```
    public init(configuration: Configuration, logger: Logger = Logger(label: "coffer.sync")) {
        self.configuration = configuration
        self.logger = logger
        schemaSQL = SQLText.identifier(configuration.schema)
    }

    deinit {
        listener?.cancel()
        if let connection { Self.abandon(connection) }
    }

    /// Calls `coffer_push(client, batch)`.
    ///
    /// ```swift
    /// let reply = try await transport.push(client: clientId, batch: batch)
    /// ```
    public func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply {
        var binds = PostgresBindings()
        binds.append(client.uuidString)
        binds.append(batch.json)
        let query = PostgresQuery(unsafeSQL: "SELECT \(schemaSQL).coffer_push($1::uuid, $2::jsonb)::text", binds: binds)
        return try SyncPushReply(json: try await singleText("push", query))
    }

    /// Calls `coffer_last_mid(client)`: the client's last applied mid (0 when the server never
    /// saw it). A client id another user pushed with first fails with SQLSTATE `CF005`.
    ///
    /// ```swift
    /// let applied = try await transport.lastMutationId(client: clientId)
    /// ```
    public func lastMutationId(client: UUID) async throws -> UInt64 {
        var binds = PostgresBindings()
        binds.append(client.uuidString)
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(schemaSQL).coffer_last_mid($1::uuid)::text",
            binds: binds)
        let text = try await singleText("read the last mutation id", query)
        guard let value = UInt64(text) else {
            throw SyncTransportError.malformedReply(operation: "read the last mutation id", detail: "not a number: \(text.prefix(40))")
        }
        return value
    }

    /// Calls `coffer_pull(entity, cursor, limit)` and returns its JSON text as bytes.
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 500)
    /// ```
    public func pull(entity: String, cursor: String, limit: Int) async throws -> Data {
        var binds = PostgresBindings()
        binds.append(entity)
        binds.append(cursor)
        binds.append(limit)
        let query = PostgresQuery(unsafeSQL: "SELECT \(schemaSQL).coffer_pull($1, $2, $3::integer)::text", binds: binds)
        return Data(try await singleText("pull \(entity)", query).utf8)
    }

    /// Calls `coffer_pull(entity, cursor, limit, bytes)`: a page that also ends after the
    /// change that takes it to about `bytes` bytes.
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 1000, bytes: 4 << 20)
    /// ```
    public func pull(entity: String, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        var binds = PostgresBindings()
        binds.append(entity)
        binds.append(cursor)
        binds.append(limit)
        binds.append(bytes)
        let query = PostgresQuery(unsafeSQL: "SELECT \(schemaSQL).coffer_pull($1, $2, $3::integer, $4::bigint)::text", binds: binds)
        return Data(try await singleText("pull \(entity)", query).utf8)
    }

    /// Calls `coffer_pull(entity, cursor, limit, bytes, scope, parameters)`: a page of the
    /// subscription's scope.
    ///
    /// ```swift
    /// let page = try await transport.pull(subscription: mine, cursor: "0", limit: 1000, bytes: 4 << 20)
    /// ```
    public func pull(subscription: SyncSubscription, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        var binds = PostgresBindings()
        binds.append(subscription.entity)
        binds.append(cursor)
        binds.append(limit)
        binds.append(bytes)
        binds.append(subscription.scope)
        binds.append(subscription.parametersJSON)
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(schemaSQL).coffer_pull($1, $2, $3::integer, $4::bigint, $5, $6::jsonb)::text", binds: binds)
        return Data(try await singleText("pull \(subscription)", query).utf8)
    }

    /// Calls `coffer_scope_ids(entity, subscriptions, after, limit)`.
    ///
    /// ```swift
    /// let listing = try await transport.scopeIds(entity: "Message", subscriptions: [mine], after: nil, limit: 10_000)
    /// ```
    public func scopeIds(entity: String, subscriptions: [SyncSubscription], after: UUID?, limit: Int) async throws -> Data {
        var binds = PostgresBindings()
        binds.append(entity)
        binds.append(SyncSubscription.wireJSON(subscriptions))
        binds.append(after?.uuidString ?? "")
        binds.append(limit)
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(schemaSQL).coffer_scope_ids($1, $2::jsonb, nullif($3, '')::uuid, $4::integer)::text", binds: binds)
        return Data(try await singleText("list the ids of \(entity)'s scopes", query).utf8)
    }

    /// Calls `coffer_fetch(entity, ids)` and returns its JSON text as bytes.
    ///
    /// ```swift
    /// let page = try await transport.fetch(entity: "Task", ids: [id])
    /// ```
    public func fetch(entity: String, ids: [UUID]) async throws -> Data {
        var binds = PostgresBindings()
        binds.append(entity)
        binds.append("{" + ids.map(\.uuidString).joined(separator: ",") + "}")
        let query = PostgresQuery(unsafeSQL: "SELECT \(schemaSQL).coffer_fetch($1, $2::uuid[])::text", binds: binds)
        return Data(try await singleText("fetch \(entity)", query).utf8)
    }

    /// True: a LISTEN on the schema's channel wakes the replica.
    ///
    /// ```swift
    /// transport.notifiesChanges   // true
    /// ```
    nonisolated public var notifiesChanges: Bool { true }

    /// Starts LISTENing (the first time) and waits for a notification of the schema's channel,
    /// a re-established LISTEN (a notification may have been missed while it was down), or
    /// `timeout`.
    ///
    /// ```swift
    /// let woken = try await transport.waitForChanges(timeout: .seconds(30))
    /// ```
    public func waitForChanges(timeout: Duration) async throws -> Bool {
        guard !isClosed else { throw SyncTransportError.closed }
        if listener == nil {
            let (configuration, wake, logger) = (configuration, wake, logger)
            listener = Task.detached {
                await Self.listen(configuration: configuration, wake: wake, logger: logger)
            }
        }
        return await wake.wait(timeout: timeout)
    }

    /// Closes both connections and stops listening.
    ///
    /// ```swift
    /// await transport.close()
    /// ```
    public func close() async {
        isClosed = true
        listener?.cancel()
        listener = nil
        if let connection { Self.abandon(connection) }
        connection = nil
        wake.signal()
    }

    // MARK: Calls

    /// Runs `query` and returns its single text value.
    private func singleText(_ operation: String, _ query: PostgresQuery) async throws -> String {
        let logger = logger
        let value = try await perform(operation) { connection -> String? in
            var value: String?
            do {
                for try await row in try await connection.query(query, logger: logger) {
                    for cell in row { value = try cell.decode(String?.self) }
                }
            } catch let error as PostgresDecodingError {
                throw SyncTransportError.malformedReply(operation: operation, detail: "\(error)")
            }
            return value
        }
        guard let value else { throw SyncTransportError.malformedReply(operation: operation, detail: "no value") }
        return value
    }

    /// Runs `body` on the shared connection within `timeout` (the request deadline unless
    /// given). A failure other than
    /// a refused statement drops the connection (the next call opens a new one).
    func perform<T: Sendable>(_ operation: String, timeout: Duration? = nil,
                              _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        // Every call is idempotent (the server skips pushed mids it applied), so a call that
        // found its idle connection dropped (a server restart, a NAT timeout) is made once
        // more on a new one.
        for attempt in 1...2 {
            guard !isClosed else { throw SyncTransportError.closed }
            let (connection, reused) = try await openConnection(for: operation)
            do {
                return try await Self.withDeadline(timeout ?? configuration.requestTimeout, operation: operation, closing: connection) {
                    try await body(connection)
                }
            } catch {
                let failure = Self.transportError(error, operation: operation)
                // A statement the server refused leaves the connection usable; after anything
                // else (a timeout, a network error, a cancellation) its state is unknown.
                if let failure = failure as? SyncTransportError, failure.keepsConnection, !connection.isClosed {
                    throw failure
                }
                if self.connection === connection { self.connection = nil }
                Self.abandon(connection)
                if attempt == 1, reused, case .unreachable? = failure as? SyncTransportError, !Task.isCancelled { continue }
                throw failure
            }
        }
        throw SyncTransportError.closed
    }

    /// The shared connection (reused: true), or a new one.
    private func openConnection(for operation: String) async throws -> (PostgresConnection, reused: Bool) {
        if let connection, !connection.isClosed { return (connection, true) }
        connection = nil
        connectionCount += 1
        let opened = try await Self.connect(configuration, id: connectionCount, logger: logger, operation: operation)
        // Another call may have connected while this one waited.
        if let connection, !connection.isClosed {
            Self.abandon(opened)
            return (connection, true)
        }
        guard !isClosed else {
            Self.abandon(opened)
            throw SyncTransportError.closed
        }
        connection = opened
        return (opened, false)
    }

    // MARK: Connections, deadlines, errors

    static func connect(_ configuration: Configuration, id: Int, logger: Logger, operation: String) async throws -> PostgresConnection {
        let timeout = configuration.connectTimeout
        let what = "connect (\(operation))"
        do {
            return try await SyncDeadline.run(
                timeout, expired: { SyncTransportError.timedOut(operation: what, after: timeout) }, abandon: { Self.abandon($0) }
            ) {
                try await PostgresConnection.connect(configuration: configuration.connectionConfiguration, id: id, logger: logger)
            }
        } catch {
            throw transportError(error, operation: what)
        }
    }

    /// Runs `body`, closing `connection` (which fails whatever runs on it) when `timeout`
    /// passes or the calling task is cancelled. The caller resumes at the deadline even if
    /// `body` does not end: a query on a connection whose peer went away without a reset
    /// NIO reports may never complete.
    static func withDeadline<T: Sendable>(_ timeout: Duration, operation: String, closing connection: PostgresConnection,
                                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withTaskCancellationHandler {
            try await SyncDeadline.run(
                timeout, expired: { SyncTransportError.timedOut(operation: operation, after: timeout) },
                onExpiry: { Self.abandon(connection) }, body)
        } onCancel: {
            Self.abandon(connection)
        }
    }

    /// Closes a connection without waiting (its failure to close cleanly changes nothing).
    /// The completion holds the connection until it is closed: postgres-nio requires a
    /// connection to be closed before it is released.
    static func abandon(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// `error` as a ``SyncTransportError`` naming `operation` (cancellation stays as it is).
    static func transportError(_ error: any Error, operation: String) -> any Error {
        if error is CancellationError || error is SyncTransportError { return error }
        if let error = error as? PSQLError {
            // postgres-nio closes the connection on some server errors (SQLSTATE class 28) and
            // reports the server's error as the cause.
            let serverError = error.code == .server ? error : (error.underlying as? PSQLError).flatMap { $0.code == .server ? $0 : nil }
            if let error = serverError {
                let state = error.serverInfo?[.sqlState] ?? "XX000"
                let message = error.serverInfo?[.message] ?? "no message"
                if state == "CF001" { return SyncTransportError.schemaBehind(operation: operation, message: message) }
                return SyncTransportError.server(operation: operation, sqlState: state, message: message)
            }
            // A nested PSQLError describes itself generically: only other causes say more.
            let underlying = error.underlying.flatMap { $0 is PSQLError ? nil : ": \($0)" } ?? ""
            return SyncTransportError.unreachable(operation: operation, detail: "\(error.code)\(underlying)")
        }
        return SyncTransportError.unreachable(operation: operation, detail: "\(error)")
    }

    // MARK: LISTEN

    /// Keeps a LISTEN connection on `<schema>_changes` until cancelled: each notification
    /// signals `wake`, and so does each (re)established LISTEN, since notifications sent while
    /// it was down are lost. Waits between attempts double up to the configured longest, with
    /// jitter.
    static func listen(configuration: Configuration, wake: WakeSignal, logger: Logger) async {
        await listen(configuration: configuration, logger: logger) { _ in wake.signal() }
    }

    /// As ``listen(configuration:wake:logger:)``, calling `signal` with each notification's
    /// payload, and with nil for each (re)established LISTEN (the gateway fans them out to its
    /// waiting requests).
    package static func listen(configuration: Configuration, logger: Logger, signal: @escaping @Sendable (String?) -> Void) async {
        let channel = configuration.schema + "_changes"
        var delay = configuration.listenRetry.first
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            let established = LockedState(false)
            do {
                let connection = try await connect(configuration, id: -attempt, logger: logger, operation: "listen")
                try await withTaskCancellationHandler {
                    try await connection.listen(on: channel) { notifications in
                        established.withLock { $0 = true }
                        signal(nil)
                        for try await notification in notifications { signal(notification.payload) }
                    }
                } onCancel: {
                    Self.abandon(connection)
                }
                Self.abandon(connection)
            } catch {
                logger.debug("sync LISTEN on \(channel) dropped", metadata: ["error": "\(transportError(error, operation: "listen"))"])
            }
            if established.withLock({ $0 }) { delay = configuration.listenRetry.first }
            do {
                try await Task.sleep(for: Backoff.jittered(delay))
            } catch {
                return
            }
            delay = min(delay * 2, configuration.listenRetry.longest)
        }
    }
}
