@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Installing the server schema: idempotent, additive across model versions, typed columns.
@Suite struct InstallTests {
    @Test func installingTwiceChangesNothing() async throws {
        let schema = try SyncSchema([Sample.self, Owner.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            let catalog = """
                SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, column_name)
                FROM information_schema.columns WHERE table_schema = '\(schema.schemaName)'
                """
            let before = try await connection.value(catalog)
            try await connection.run("INSERT INTO \(schema.schemaName).\"Owner\" (name) VALUES ('kept')")
            try await schema.install(on: connection, logger: connection.logger)
            #expect(try await connection.value(catalog) == before)
            #expect(try await connection.value("SELECT name FROM \(schema.schemaName).\"Owner\"") == "kept")
        }
    }

    @Test func columnsHaveTheMappedTypes() async throws {
        let schema = try SyncSchema([Sample.self, Owner.self], schema: uniqueSchemaName())
        try await withInstalled(schema) { connection in
            let rows = try await connection.rows("""
                SELECT column_name, format_type(atttypid, atttypmod) FROM information_schema.columns c
                JOIN pg_attribute a ON a.attrelid = ('\(schema.schemaName)."Sample"')::regclass AND a.attname = c.column_name
                WHERE c.table_schema = '\(schema.schemaName)' AND c.table_name = 'Sample'
                """)
            let types = Dictionary(uniqueKeysWithValues: rows.map { ($0[0] ?? "", $0[1] ?? "") })
            #expect(types["sync_id"] == "uuid")
            #expect(types["_txid"] == "xid8")
            #expect(types["_clocks"] == "jsonb")
            #expect(types["id"] == nil)
            #expect(types["flag"] == "boolean")
            #expect(types["int8"] == "bigint")
            #expect(types["uint64"] == "numeric(20,0)")
            #expect(types["uint"] == "numeric(20,0)")
            #expect(types["float"] == "double precision")
            #expect(types["date"] == "double precision")
            #expect(types["data"] == "bytea")
            #expect(types["bytes"] == "bytea")
            #expect(types["uuid"] == "uuid")
            #expect(types["strings"] == "text[]")
            #expect(types["uint64s"] == "numeric(20,0)[]")
            #expect(types["dates"] == "double precision[]")
            #expect(types["document"] == "jsonb")
            #expect(types["counts"] == "jsonb")
            #expect(types["home"] == "boolean")
            #expect(types["home.city"] == "text")
            #expect(types["owner"] == "uuid")
            #expect(types["friends"] == "uuid[]")
            #expect(types.count == SyncTable.syncColumns.count + schema.tables[0].columns.count)
        }
    }

    @Test func theTransportInstallsInItsOwnSchemaIdempotently() async throws {
        let name = uniqueSchemaName()
        let transport = try await testTransport(schema: name)
        try await transport.install([Chore.self])
        try await transport.install([Chore.self])
        let local = try TemporaryStore()
        defer { local.cleanUp() }
        var chore = Chore(title: "water the plants")
        try local.store.box(for: Chore.self).put(&chore)
        let replica = try SyncReplica(store: local.store, entities: [Chore.self], transport: transport)
        try await replica.syncNow()
        await transport.close()
        try await withConnection { connection in
            #expect(try await connection.value("SELECT title FROM \(name).\"Chore\"") == "water the plants")
            try await connection.run("DROP SCHEMA \(name) CASCADE")
        }
    }

    @Test func aPropertyStoredUnderAServerWorkingColumnIsRefused() throws {
        #expect(throws: SyncSchemaError.reservedName("_coffer_bytes", entity: "WorkingColumnClash")) {
            try SyncSchema([WorkingColumnClash.self])
        }
    }

    @Test func aModelThatCannotBeInstalledSendsNothing() async throws {
        let name = uniqueSchemaName()
        let transport = try await testTransport(schema: name)
        await #expect(throws: SyncSchemaError.self) { try await transport.install([Owner.self, Owner.self]) }
        await transport.close()
        let schemas = try await withConnection { connection in
            try await connection.value("SELECT count(*)::text FROM pg_namespace WHERE nspname = '\(name)'")
        }
        #expect(schemas == "0")
    }
}
