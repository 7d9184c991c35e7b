import Foundation
import PostgresNIO

extension PostgresTransport {
    /// Where the server is, who connects, which schema holds the sync tables, and how long
    /// to wait before a call counts as failed.
    ///
    /// ```swift
    /// let configuration = PostgresTransport.Configuration(
    ///     host: "db.internal", port: 5432, username: "app", password: secret, database: "app",
    ///     tls: .require(try NIOSSLContext(configuration: .makeClientConfiguration())))
    /// ```
    public struct Configuration: Sendable {
        /// The server's host name or address.
        ///
        /// ```swift
        /// configuration.host   // "127.0.0.1"
        /// ```
        public var host: String
        /// The server's port.
        ///
        /// ```swift
        /// configuration.port   // 5432
        /// ```
        public var port: Int
        /// The role to connect as.
        ///
        /// ```swift
        /// configuration.username   // "app"
        /// ```
        public var username: String
        /// The role's password (nil for trust or peer authentication).
        ///
        /// ```swift
        /// configuration.password = ProcessInfo.processInfo.environment["PGPASSWORD"]
        /// ```
        public var password: String?
        /// The database the sync schema is installed in.
        ///
        /// ```swift
        /// configuration.database   // "app"
        /// ```
        public var database: String
        /// TLS: `.disable` is for a server on loopback (or a private socket) only; use
        /// `.require(context)` over any network.
        ///
        /// ```swift
        /// configuration.tls = .disable   // 127.0.0.1
        /// ```
        public var tls: PostgresConnection.Configuration.TLS
        /// The schema ``SyncSchema/install(on:logger:)`` installed (`coffer` by default).
        ///
        /// ```swift
        /// configuration.schema = "sync"
        /// ```
        public var schema: String
        /// How long a push, pull or query may take before its connection is closed and the
        /// call fails with ``SyncTransportError/timedOut(operation:after:)``. A stalled network
        /// gives no error of its own: this is what notices it.
        ///
        /// ```swift
        /// configuration.requestTimeout = .seconds(60)   // very large batches on a slow link
        /// ```
        public var requestTimeout: Duration
        /// How long connecting (TCP, TLS and authentication) may take.
        ///
        /// ```swift
        /// configuration.connectTimeout = .seconds(5)
        /// ```
        public var connectTimeout: Duration
        /// The shortest and longest waits between attempts to re-establish the LISTEN
        /// connection after it dropped (doubling, with jitter).
        ///
        /// ```swift
        /// configuration.listenRetry = (.milliseconds(100), .seconds(10))
        /// ```
        public var listenRetry: (first: Duration, longest: Duration)

        /// A configuration with the defaults: schema `coffer`, 30 s per request, 10 s to
        /// connect, LISTEN retried from 200 ms up to 30 s.
        ///
        /// ```swift
        /// let local = PostgresTransport.Configuration(host: "127.0.0.1", username: "app", password: nil,
        ///                                             database: "app", tls: .disable)
        /// ```
        public init(host: String, port: Int = 5432, username: String, password: String?, database: String,
                    tls: PostgresConnection.Configuration.TLS, schema: String = "coffer",
                    requestTimeout: Duration = .seconds(30), connectTimeout: Duration = .seconds(10),
                    listenRetry: (first: Duration, longest: Duration) = (.milliseconds(200), .seconds(30))) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            self.tls = tls
            self.schema = schema
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
            self.listenRetry = listenRetry
        }

        /// The stream name cursors are kept under: `postgres://host:port/database#schema`.
        ///
        /// ```swift
        /// configuration.stream   // "postgres://127.0.0.1:5432/app#coffer"
        /// ```
        public var stream: String { "postgres://\(host):\(port)/\(database)#\(schema)" }

        var connectionConfiguration: PostgresConnection.Configuration {
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: tls)
            // Saturated: a very long timeout ("never") must not trap in the conversion.
            let (seconds, attoseconds) = connectTimeout.components
            let (nanoseconds, overflow) = max(seconds, 0).multipliedReportingOverflow(by: 1_000_000_000)
            configuration.options.connectTimeout = .nanoseconds(overflow ? .max : nanoseconds &+ max(attoseconds, 0) / 1_000_000_000)
            return configuration
        }
    }
}
