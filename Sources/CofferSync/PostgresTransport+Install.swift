@_spi(CofferGenerated) import Coffer
import Foundation
import PostgresNIO

extension PostgresTransport {
    /// Installs (or updates) the server side for `entities` in this transport's schema
    /// (``Configuration/schema``): the tables, triggers and functions ``SyncSchema`` generates,
    /// in one transaction over the transport's connection, within its request deadline.
    /// Installing is idempotent: an installed schema is left as it is, a new property adds a
    /// column, and nothing is dropped.
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
    ///   sent), ``SyncTransportError`` when the server cannot be reached or refuses a statement
    ///   (nothing is changed: the transaction is rolled back).
    public func install(_ entities: [any Entity.Type]) async throws {
        let schema = try SyncSchema(entities, schema: configuration.schema)
        let logger = logger
        try await perform("install the schema \(configuration.schema)") { connection in
            try await schema.install(on: connection, logger: logger)
        }
    }
}
