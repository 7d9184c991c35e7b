/// The statements that let database roles sync under row-level security (the README's
/// "Sharing: roles and row-level security").
extension SyncSchema {
    /// The statement that lets `role` sync through this schema: use it, read the bookkeeping
    /// a pull reads, and read and write every entity table within the tables' row-level
    /// security policies. Clients, rejections and tombstones stay the sync functions' to write.
    /// The role is recorded: every later install grants it the tables it adds. Run it as the
    /// schema's owner (the role that installed it), after ``install(on:logger:)``.
    ///
    /// ```swift
    /// try await connection.query(PostgresQuery(unsafeSQL: schema.grantStatement(to: "app_user")), logger: logger)
    /// // psql: SELECT coffer.coffer_grant('app_user');
    /// ```
    public func grantStatement(to role: String) -> String {
        "SELECT \(SQLText.identifier(schemaName)).coffer_grant(\(SQLText.literal(role)))"
    }

    /// The statement that makes the members of `role` trusted gateways: a session that logs
    /// in as one names the user it acts for with `SET LOCAL coffer.user_id = '...'`, and
    /// `coffer_user_id()` (which policies call) returns that user instead of the login role.
    /// Other roles cannot name a user that way. `nil` trusts no gateway. Run it as the
    /// schema's owner.
    ///
    /// ```swift
    /// let sql = schema.trustGatewayStatement(role: "coffer_gateway")
    /// // psql: SELECT coffer.coffer_trust_gateway('coffer_gateway');
    /// ```
    public func trustGatewayStatement(role: String?) -> String {
        "SELECT \(SQLText.identifier(schemaName)).coffer_trust_gateway(\(role.map(SQLText.literal) ?? "NULL"))"
    }
}
