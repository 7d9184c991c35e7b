@_spi(CofferGenerated) import Coffer
import Foundation
import PostgresNIO

extension PostgresTransport {
    /// Installs (or updates) the server side for `entities` in this transport's schema
    /// (``Configuration/schema``): the tables, triggers and functions ``SyncSchema`` generates,
    /// in one transaction over the transport's connection. Installing is idempotent: an
    /// installed schema is left as it is, a new property adds a column, and nothing is dropped.
    /// `timeout` bounds the whole install (creating a unique index on a large table takes
    /// time; the request deadline is meant for sync calls); when it passes, the connection is
    /// closed and the server rolls the install back.
    ///
    /// The connecting role needs the right to create the schema (or to own it once created).
    /// Apps whose replicas connect with a role that may not change the schema install it once
    /// with an administrator's transport or with `coffer sync install`.
    ///
    /// ```swift
    /// let transport = PostgresTransport(configuration: .init(host: "127.0.0.1", username: "app", password: nil,
    ///                                                        database: "app", tls: .disable))
    /// try await transport.install([Todo.self, Folder.self])
    /// let replica = try SyncReplica(store: store, entities: [Todo.self, Folder.self], transport: transport)
    /// ```
    ///
    /// - Throws: ``SyncSchemaError`` when the model cannot be installed as it is (nothing is
    ///   sent), ``SyncTransportError`` when the server cannot be reached, refuses a statement
    ///   or does not finish within `timeout` (nothing is changed: the transaction is rolled
    ///   back).
    public func install(_ entities: [any Entity.Type], timeout: Duration = .seconds(600)) async throws {
        let schema = try SyncSchema(entities, schema: configuration.schema)
        let logger = logger
        try await perform("install the schema \(configuration.schema)", timeout: timeout) { connection in
            try await schema.install(on: connection, logger: logger)
        }
    }
}
