import CofferSync
import Foundation
import Logging
import PostgresNIO

/// The gateway's side of PostgreSQL: a pool of connections as the gateway's login role, and
/// one transaction per call in which the app's role and the token's user are set locally
/// (`SET LOCAL ROLE`, `coffer.user_id`), so the schema's row-level security policies and
/// `coffer_user_id()` see that user. The gateway has no sync logic: each call is one of the
/// schema's SQL functions, and its JSON answer goes back as it is.
final class GatewayDatabase: Sendable {
    let client: PostgresClient
    let configuration: GatewayConfiguration.Database
    let callSeconds: Int
    let connectSeconds: Int
    let logger: Logger

    init(_ configuration: GatewayConfiguration.Database, callSeconds: Int, connectSeconds: Int, logger: Logger) throws {
        var options = PostgresClient.Configuration.Options()
        options.maximumConnections = configuration.connections
        options.minimumConnections = 0
        let client = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.user,
            password: configuration.password, database: configuration.database,
            tls: try Self.tls(configuration.tls))
        var withOptions = client
        withOptions.options = options
        self.client = PostgresClient(configuration: withOptions, backgroundLogger: logger)
        self.configuration = configuration
        self.callSeconds = callSeconds
        self.connectSeconds = connectSeconds
        self.logger = logger
    }

    static func tls(_ mode: String) throws -> PostgresClient.Configuration.TLS {
        switch mode {
        case "disable": return .disable
        default: return .require(.makeClientConfiguration())
        }
    }

    /// The configuration of the one connection that listens for wake-ups.
    var listenConfiguration: PostgresTransport.Configuration {
        get throws {
            PostgresTransport.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.user,
                password: configuration.password, database: configuration.database,
                tls: try PostgresConnection.Configuration.TLS.from(configuration.tls), schema: configuration.schema)
        }
    }

    /// Why a call failed: the server refused it (with its SQLSTATE and message), or the
    /// database could not be reached.
    enum Failure: Error {
        case refused(sqlState: String, message: String)
        case unavailable(String)
    }

    /// Runs `sql` (one SELECT returning one text value; `$1`... bound to `values`) as the
    /// app's role for `user`, in a transaction of its own, and returns the value. The call
    /// runs in a task of its own, which a request's cancellation (its client went away) does
    /// not cancel: a transaction always ends with COMMIT or ROLLBACK before its connection
    /// goes back to the pool (`statement_timeout` bounds it).
    func call(user: String, _ sql: String, _ values: [String]) async throws -> String {
        do {
            return try await withLease { connection in try await self.transaction(on: connection, user: user, sql, values) }
        } catch let failure as Failure {
            throw failure
        } catch let error as PSQLError {
            throw Self.failure(error)
        } catch {
            throw Failure.unavailable("\(error)")
        }
    }

    /// Runs `body` on a pooled connection, in a task of its own: cancelling the caller (a
    /// client that hung up) never cuts a transaction short. The wait for the connection is
    /// bounded by `connectSeconds` (the pool waits for ever while the database is
    /// unreachable): past it the request fails as unavailable, and a connection that comes
    /// later is handed back unused. Once leased, `body` runs to its end.
    func withLease<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let lease = LockedState(Lease.waiting)
        let outcome = LockedState<CheckedContinuation<T, any Error>?>(nil)
        let finish: @Sendable (Result<T, any Error>) -> Void = { result in
            outcome.withLock { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let seconds = connectSeconds
            let leasing = LockedState<Task<Void, Never>?>(nil)
            let watchdog = Task {
                do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
                let abandoned = lease.withLock { state in
                    guard state == .waiting else { return false }
                    state = .abandoned
                    return true
                }
                guard abandoned else { return }
                leasing.withLock { $0 }?.cancel()
                finish(.failure(Failure.unavailable("no database connection within \(seconds) s")))
            }
            let work = Task {
                defer { watchdog.cancel() }
                do {
                    let value = try await self.client.withConnection { connection in
                        let taken = lease.withLock { state in
                            guard state == .waiting else { return false }
                            state = .leased
                            return true
                        }
                        guard taken else { throw Failure.unavailable("the connection came after the request was answered") }
                        return try await body(connection)
                    }
                    finish(.success(value))
                } catch {
                    finish(.failure(error))
                }
            }
            leasing.withLock { $0 = work }
        }
    }

    /// Where a request's wait for a connection stands.
    enum Lease: Sendable { case waiting, leased, abandoned }

    private func transaction(on connection: PostgresConnection, user: String, _ sql: String, _ values: [String]) async throws -> String {
        try await connection.query("BEGIN", logger: logger)
        do {
            let role = "\"" + configuration.role.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL ROLE \(role)"), logger: logger)
            var settings = PostgresBindings()
            settings.append(user)
            settings.append("\(callSeconds)s")
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT set_config('coffer.user_id', $1, true), set_config('statement_timeout', $2, true)",
                binds: settings), logger: logger)
            var binds = PostgresBindings()
            for value in values { binds.append(value) }
            var result: String?
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
                result = try row.decode(String?.self)
            }
            try await connection.query("COMMIT", logger: logger)
            guard let result else { throw Failure.refused(sqlState: "XX000", message: "the call returned nothing") }
            return result
        } catch {
            // A connection whose transaction cannot be ended goes back to the pool closed, never
            // with the role and user still set.
            do {
                try await connection.query("ROLLBACK", logger: logger)
            } catch {
                try? await connection.close()
            }
            throw error
        }
    }

    static func failure(_ error: PSQLError) -> Failure {
        let server = error.code == .server ? error : (error.underlying as? PSQLError).flatMap { $0.code == .server ? $0 : nil }
        if let server {
            return .refused(sqlState: server.serverInfo?[.sqlState] ?? "XX000", message: server.serverInfo?[.message] ?? "no message")
        }
        return .unavailable("\(error.code)")
    }
}

extension PostgresConnection.Configuration.TLS {
    /// The gateway's `database.tls` setting.
    static func from(_ mode: String) throws -> Self {
        mode == "disable" ? .disable : .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
    }
}
