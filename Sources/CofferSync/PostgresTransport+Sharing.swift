import PostgresNIO

extension PostgresTransport {
    /// Lets the database role `role` sync through this transport's schema under row-level
    /// security: it may use the schema, read the bookkeeping a pull reads, and read and write
    /// the entity tables as their policies allow; clients, rejections and tombstones are
    /// written only by the sync functions, which check whose client a push uses. Later
    /// installs grant the role the tables they add. The transport must connect as the
    /// schema's owner (the role that installed it).
    ///
    /// ```swift
    /// try await admin.install([Todo.self])
    /// try await admin.grant(to: "app_user")   // then: CREATE POLICY ... USING (owner = coffer.coffer_user_id())
    /// ```
    ///
    /// - Throws: ``SyncTransportError/server(operation:sqlState:message:)`` when the role does
    ///   not exist (42704) or the connecting role does not own the schema (42501).
    public func grant(to role: String) async throws {
        let logger = logger
        let statement = "SELECT \(SQLText.identifier(configuration.schema)).coffer_grant($1)"
        try await perform("grant the use of schema \(configuration.schema) to \(role)") { connection in
            var bindings = PostgresBindings()
            bindings.append(role)
            _ = try await connection.query(PostgresQuery(unsafeSQL: statement, binds: bindings), logger: logger).collect()
        }
    }
}
