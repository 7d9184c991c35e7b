// The entity schemas are read through `_cofferSchema`, which Coffer keeps behind the
// CofferGenerated SPI (it is generated code's surface, not the app's). CofferSync is part of
// Coffer's own package, so it imports that SPI rather than widening Coffer's public API.
@_spi(CofferGenerated) @_spi(CofferSync) import Coffer
import Foundation
import PostgresNIO

/// The PostgreSQL side of sync, generated from the model: one typed table per synced entity
/// plus the bookkeeping tables and the `coffer_push` / `coffer_pull` functions, all in a
/// schema of their own (`coffer` unless you choose another).
///
/// Installing is idempotent and additive: run it at every deployment; a property added to
/// the model adds a column (existing rows keep their data), and an install from an older
/// model never drops or narrows what a newer one installed.
///
/// ```swift
/// let schema = try SyncSchema([Person.self, Order.self])
/// try await schema.install(on: connection, logger: logger)   // or run schema.installSQL in psql
/// ```
public struct SyncSchema: Sendable {
    /// The PostgreSQL schema everything is installed in.
    ///
    /// ```swift
    /// try SyncSchema([Person.self], schema: "sync").schemaName   // "sync"
    /// ```
    public let schemaName: String

    /// The tables, one per entity, in the order the entities were given.
    ///
    /// ```swift
    /// try SyncSchema([Person.self]).tables[0].entity   // "Person"
    /// ```
    public let tables: [SyncTable]

    /// The scopes installed with the tables (partial replication), in the order given.
    ///
    /// ```swift
    /// try SyncSchema([Message.self], scopes: [byConversation]).scopes.count   // 1
    /// ```
    public let scopes: [SyncScope]

    /// Names the server uses for its own tables in the schema: no entity may be stored under
    /// one of them.
    ///
    /// ```swift
    /// SyncSchema.reservedTableNames.contains("tombstones")   // true
    /// ```
    public static let reservedTableNames: Set<String> = ["meta", "entities", "fields", "tombstones", "clients", "rejections", "scopes", "moves"]

    /// Builds the server schema of `entities` (their stored names become table names, their
    /// stored property names column names).
    ///
    /// Throws ``SyncSchemaError`` when a name cannot be a PostgreSQL identifier as it is
    /// (longer than 63 bytes, or taken by the server's own tables and columns), or when two
    /// entities share a stored name.
    ///
    /// `scopes` are defined after the tables (see ``SyncScope``); an install redefines them.
    ///
    /// ```swift
    /// let schema = try SyncSchema([Person.self], schema: "coffer")
    /// ```
    public init(_ entities: [any Entity.Type], schema: String = "coffer", scopes: [SyncScope] = []) throws {
        try self.init(schemas: entities.map { $0._cofferSchema }, schema: schema, scopes: scopes)
    }

    /// Builds the server schema of the entities `store`'s catalog marks as synced (`@Sync`
    /// in some build that wrote it), from their stored properties: no Swift types needed.
    /// This is what `coffer sync install` installs.
    ///
    /// ```swift
    /// let schema = try SyncSchema(syncedEntitiesOf: store)
    /// try await schema.install(on: connection, logger: logger)
    /// ```
    public init(syncedEntitiesOf store: Store, schema: String = "coffer") throws {
        try self.init(schemas: try store.syncedEntitySchemas(), schema: schema)
    }

    /// Builds the server schema of entity schemas, as a store's catalog or the generated
    /// code describes them (what `coffer sync install` uses: it has no Swift types).
    ///
    /// ```swift
    /// let schema = try SyncSchema(schemas: [Person._cofferSchema], schema: "coffer")
    /// ```
    public init(schemas entities: [EntitySchema], schema: String = "coffer", scopes: [SyncScope] = []) throws {
        try Self.checkIdentifier(schema, what: "schema")
        // The wake-up channel `<schema>_changes` must fit in a PostgreSQL name too.
        guard schema.utf8.count + "_changes".utf8.count <= 63 else {
            throw SyncSchemaError.invalidName(schema, what: "schema (at most 55 bytes: its channel is <schema>_changes)")
        }
        var seen = Set<String>()
        var tables: [SyncTable] = []
        for entity in entities {
            let table = try SyncTable(entity)
            guard seen.insert(table.entity).inserted else {
                throw SyncSchemaError.duplicateEntity(table.entity)
            }
            tables.append(table)
        }
        for scope in scopes where !seen.contains(scope.entity) {
            throw SyncSchemaError.scopeOfUnknownEntity(scope: scope.name, entity: scope.entity)
        }
        schemaName = schema
        self.tables = tables
        self.scopes = scopes
    }

    /// The statements that install the schema, in order. Run them in one transaction (as
    /// ``install(on:logger:)`` does); each is one SQL statement without a trailing semicolon.
    ///
    /// ```swift
    /// for statement in schema.installStatements { print(statement + ";") }
    /// ```
    public var installStatements: [String] {
        let quoted = SQLText.identifier(schemaName)
        let literal = SQLText.literal(schemaName)
        let substitute = { (text: String) in
            text.replacingOccurrences(of: "@SL@", with: literal).replacingOccurrences(of: "@S@", with: quoted)
        }
        var statements = [
            // Serializes concurrent installs (CREATE ... IF NOT EXISTS is not safe against a
            // concurrent CREATE of the same name).
            "SELECT pg_advisory_xact_lock(hashtext('coffer.install'), hashtext(\(literal)))",
            "CREATE SCHEMA IF NOT EXISTS \(quoted)",
        ]
        statements += SyncServerSQL.statements.map(substitute)
        for table in tables {
            statements += table.installStatements(schema: quoted, schemaLiteral: literal)
        }
        statements += scopes.map { $0.defineStatement(schema: quoted) }
        // Roles granted the use of the schema get the tables this install added.
        statements.append("""
            SELECT \(quoted).coffer_grant(substr(m.key, 9)) FROM \(quoted).meta m
            WHERE m.key LIKE 'grantee:%' AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = substr(m.key, 9))
            ORDER BY m.key
            """)
        return statements
    }

    /// The whole install as one script for `psql`, wrapped in a transaction.
    ///
    /// ```swift
    /// try schema.installSQL.write(toFile: "install.sql", atomically: true, encoding: .utf8)
    /// // psql -v ON_ERROR_STOP=1 -f install.sql
    /// ```
    public var installSQL: String {
        (["BEGIN"] + installStatements + ["COMMIT"]).map { $0 + ";\n" }.joined()
    }

    /// Installs (or updates) the schema over `connection`, in one transaction: either all of
    /// it is installed or nothing changes.
    ///
    /// ```swift
    /// try await SyncSchema([Person.self]).install(on: connection, logger: Logger(label: "sync"))
    /// ```
    public func install(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            for statement in installStatements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await connection.query("COMMIT", logger: logger)
        } catch {
            // The install's own error is the one to report; a failed ROLLBACK leaves nothing
            // behind either (the server rolls back when the connection goes).
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    static func checkIdentifier(_ name: String, what: String) throws {
        guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0) else {
            throw SyncSchemaError.invalidName(name, what: what)
        }
    }
}

/// Why a model cannot be installed as it is.
///
/// ```swift
/// do { _ = try SyncSchema([Person.self]) } catch let error as SyncSchemaError { print(error) }
/// ```
public enum SyncSchemaError: Error, Equatable, CustomStringConvertible {
    /// A schema, table or column name PostgreSQL cannot hold as it is: empty, longer than 63
    /// bytes (PostgreSQL would cut it), or containing NUL.
    ///
    /// ```swift
    /// SyncSchemaError.invalidName(String(repeating: "x", count: 64), what: "column")
    /// ```
    case invalidName(String, what: String)
    /// An entity stored under a name the server uses for its own tables
    /// (``SyncSchema/reservedTableNames``); give it another with `@StoredAs`.
    ///
    /// ```swift
    /// SyncSchemaError.reservedName("clients", entity: "clients")
    /// ```
    case reservedName(String, entity: String)
    /// Two entity types of the list are stored under one name.
    ///
    /// ```swift
    /// SyncSchemaError.duplicateEntity("Person")
    /// ```
    case duplicateEntity(String)
    /// A scope names an entity the schema does not hold.
    ///
    /// ```swift
    /// SyncSchemaError.scopeOfUnknownEntity(scope: "conversation", entity: "Message")
    /// ```
    case scopeOfUnknownEntity(scope: String, entity: String)

    /// The message, naming the entity or property and the way out.
    ///
    /// ```swift
    /// print(SyncSchemaError.duplicateEntity("Person").description)
    /// ```
    public var description: String {
        switch self {
        case .invalidName(let name, let what):
            return "the \(what) name \"\(name)\" cannot be a PostgreSQL identifier (1 to 63 bytes, no NUL)"
        case .reservedName(let name, let entity):
            return "\"\(name)\" in \(entity) is reserved by the sync schema; store it under another name (@StoredAs or @Name)"
        case .duplicateEntity(let name):
            return "two entities are stored as \"\(name)\"; sync them through one type"
        case .scopeOfUnknownEntity(let scope, let entity):
            return "scope \"\(scope)\" is of \(entity), which this schema does not hold; add the entity or drop the scope"
        }
    }
}
