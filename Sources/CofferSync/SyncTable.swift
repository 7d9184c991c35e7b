@_spi(CofferGenerated) import Coffer
import Foundation

/// The server table of one synced entity: `sync_id uuid` (the object's global id), one typed
/// column per stored property (named by its stored name; embedded values' leaves by their
/// path, e.g. `home.city`), and the sync columns `_txid`, `_hlc`, `_origin`, `_clocks`.
///
/// The local `id` is not a column (local ids stay local), nor is a `@Backlink` (computed from
/// the other side).
///
/// ```swift
/// let table = try SyncSchema([Person.self]).tables[0]
/// table.columns.map(\.name)   // ["firstName", "age", ...]
/// ```
public struct SyncTable: Sendable {
    /// The entity's stored name, which is the table's name.
    ///
    /// ```swift
    /// table.entity   // "Person"
    /// ```
    public let entity: String

    /// The property columns, in the entity's declaration order.
    ///
    /// ```swift
    /// table.columns.first?.sqlType   // "text"
    /// ```
    public let columns: [SyncColumn]

    /// Columns every synced table has besides its properties'.
    ///
    /// ```swift
    /// SyncTable.syncColumns   // ["sync_id", "_txid", "_hlc", "_origin", "_clocks"]
    /// ```
    public static let syncColumns = ["sync_id", "_txid", "_hlc", "_origin", "_clocks"]

    init(_ schema: EntitySchema) throws {
        try SyncSchema.checkIdentifier(schema.storedName, what: "table")
        guard !SyncSchema.reservedTableNames.contains(schema.storedName) else {
            throw SyncSchemaError.reservedName(schema.storedName, entity: schema.name)
        }
        entity = schema.storedName
        columns = try schema.properties.compactMap { property in
            guard let column = SyncColumn(property) else { return nil }
            try SyncSchema.checkIdentifier(column.name, what: "column")
            // `_coffer…` names are the server functions' own working columns (a page's
            // running byte sums): a property stored under one would make them ambiguous.
            guard !Self.syncColumns.contains(column.name), !column.name.hasPrefix("_coffer") else {
                throw SyncSchemaError.reservedName(column.name, entity: schema.name)
            }
            return column
        }
    }

    func installStatements(schema: String, schemaLiteral: String) -> [String] {
        let table = schema + "." + SQLText.identifier(entity)
        var statements = [
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                sync_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                _txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                _hlc bigint NOT NULL DEFAULT 0,
                _origin uuid,
                _clocks jsonb NOT NULL DEFAULT '{}'
            )
            """,
            "INSERT INTO \(schema).entities (entity) VALUES (\(SQLText.literal(entity))) ON CONFLICT DO NOTHING",
            "CREATE INDEX IF NOT EXISTS \(SQLText.identifier(indexName)) ON \(table) (_txid, sync_id)",
            "CREATE OR REPLACE TRIGGER coffer_stamp BEFORE INSERT OR UPDATE ON \(table) FOR EACH ROW EXECUTE FUNCTION \(schema)._stamp()",
            "CREATE OR REPLACE TRIGGER coffer_tombstone AFTER DELETE ON \(table) FOR EACH ROW EXECUTE FUNCTION \(schema)._tombstone()",
            "CREATE OR REPLACE TRIGGER coffer_no_truncate BEFORE TRUNCATE ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION \(schema)._refuse_truncate()",
            // Wake-ups (channel `<schema>_changes`, payload the entity): once per statement.
            "CREATE OR REPLACE TRIGGER coffer_notify AFTER INSERT OR UPDATE OR DELETE ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION \(schema)._notify()",
        ]
        for column in columns {
            statements.append(
                "SELECT \(schema)._install_field(\(SQLText.literal(entity)), \(SQLText.literal(column.name)), "
                    + "\(SQLText.literal(column.kind.rawValue)), \(SQLText.literal(column.cofferType)), "
                    + "\(SQLText.literal(column.columnDefinition)))"
            )
        }
        // A unique property is unique on the server too: a push that collides is rejected
        // (naming the property and the value), and so is a plain-SQL write.
        for column in columns where column.isUnique {
            let name = Self.shortName(entity + "_" + column.name, suffix: "_unique")
            statements.append(
                "CREATE UNIQUE INDEX IF NOT EXISTS \(SQLText.identifier(name)) ON \(table) (\(SQLText.identifier(column.name)))"
            )
        }
        return statements
    }

    /// `<entity>_cursor`, shortened with a hash of the whole name when that would pass 63 bytes.
    private var indexName: String { Self.shortName(entity, suffix: "_cursor") }

    /// `base + suffix`, or, when that would pass 63 bytes, a prefix of `base` and a hash of
    /// all of it before the suffix.
    private static func shortName(_ base: String, suffix: String) -> String {
        let plain = base + suffix
        if plain.utf8.count <= 63 { return plain }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in base.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        var prefix = ""
        for character in base where (prefix + String(character)).utf8.count <= 40 {
            prefix.append(character)
        }
        return prefix + "_" + String(hash, radix: 16) + suffix
    }
}

/// One property's column in a ``SyncTable``.
///
/// ```swift
/// let age = table.columns.first { $0.name == "age" }
/// age?.sqlType   // "bigint"
/// ```
public struct SyncColumn: Sendable, Equatable {
    /// The column name: the property's stored name.
    ///
    /// ```swift
    /// column.name   // "firstName"
    /// ```
    public let name: String

    /// How values travel and are decoded on the server.
    ///
    /// ```swift
    /// column.kind   // .bigint
    /// ```
    public let kind: SyncValueKind

    /// The Coffer type (`PropertyType` raw value, `link` for a `ToOne`, `links` for a
    /// many-to-many `ToMany`).
    ///
    /// ```swift
    /// column.cofferType   // "int8"
    /// ```
    public let cofferType: String

    /// The PostgreSQL type of the column.
    ///
    /// ```swift
    /// column.sqlType   // "numeric(20,0)" for a UInt64
    /// ```
    public let sqlType: String

    /// The range a smaller integer type allows (checked by the column, so that a plain-SQL
    /// writer cannot store a value the replicas cannot read back), or nil.
    ///
    /// ```swift
    /// column.range   // -128...127 for an Int8
    /// ```
    public let range: ClosedRange<Decimal>?

    /// Whether the property is `@Unique`: the column gets a unique index on the server, so
    /// a push that collides is rejected (`unique: Key (code)=(A7) already exists.`).
    ///
    /// ```swift
    /// column.isUnique   // true for `@Unique var email: String`
    /// ```
    public let isUnique: Bool

    /// The column's definition after its name in `ADD COLUMN`: the type and its range check.
    ///
    /// ```swift
    /// column.columnDefinition   // "bigint CHECK (\"level\" BETWEEN -128 AND 127)"
    /// ```
    public var columnDefinition: String {
        guard let range else { return sqlType }
        let quoted = SQLText.identifier(name)
        let bounds = "\(range.lowerBound) AND \(range.upperBound)"
        if kind.isArray {
            return "\(sqlType) CHECK (\(range.lowerBound) <= ALL(\(quoted)) AND \(range.upperBound) >= ALL(\(quoted)))"
        }
        return "\(sqlType) CHECK (\(quoted) BETWEEN \(bounds))"
    }

    /// The column of `property`, or nil when it has none (the local id, a backlink).
    init?(_ property: PropertySchema) {
        if property.flags.contains(.id) || property.flags.contains(.backlink) { return nil }
        name = property.storedName
        isUnique = property.flags.contains(.unique)
        if property.flags.contains(.toMany) {
            (kind, cofferType, range) = (.uuidArray, "links", nil)
        } else if property.flags.contains(.relation) {
            (kind, cofferType, range) = (.uuid, "link", nil)
        } else {
            cofferType = property.type.rawValue
            (kind, range) = Self.mapping(property.type)
        }
        sqlType = kind.sqlType
    }

    private static func mapping(_ type: PropertyType) -> (SyncValueKind, ClosedRange<Decimal>?) {
        switch type {
        case .bool: return (.bool, nil)
        case .int8: return (.bigint, -128...127)
        case .int16: return (.bigint, -32768...32767)
        case .int32: return (.bigint, -2_147_483_648...2_147_483_647)
        case .int64, .int: return (.bigint, nil)
        case .uint8: return (.bigint, 0...255)
        case .uint16: return (.bigint, 0...65535)
        case .uint32: return (.bigint, 0...4_294_967_295)
        case .uint64, .uint: return (.uint64, 0...Decimal(UInt64.max))
        case .float, .double, .date: return (.double, nil)
        case .string: return (.text, nil)
        case .data, .uint8Array: return (.bytea, nil)
        case .uuid: return (.uuid, nil)
        case .stringArray: return (.textArray, nil)
        case .intArray, .int64Array: return (.bigintArray, nil)
        case .int8Array: return (.bigintArray, -128...127)
        case .int16Array: return (.bigintArray, -32768...32767)
        case .int32Array: return (.bigintArray, -2_147_483_648...2_147_483_647)
        case .uint16Array: return (.bigintArray, 0...65535)
        case .uint32Array: return (.bigintArray, 0...4_294_967_295)
        case .uintArray, .uint64Array: return (.uint64Array, 0...Decimal(UInt64.max))
        case .doubleArray, .floatArray, .dateArray: return (.doubleArray, nil)
        case .boolArray: return (.boolArray, nil)
        case .uuidArray: return (.uuidArray, nil)
        case .json, .stringDictionary, .intDictionary, .doubleDictionary, .boolDictionary: return (.jsonb, nil)
        }
    }
}

/// How a value travels in a push batch or a pull page (JSON), and the column type it lands
/// in. JSON `null` is SQL `NULL` for every kind.
///
/// ```swift
/// SyncValueKind.uint64.sqlType   // "numeric(20,0)"
/// ```
public enum SyncValueKind: String, Sendable, CaseIterable {
    /// `boolean`; JSON `true`/`false`.
    ///
    /// ```swift
    /// SyncValueKind.bool
    /// ```
    case bool
    /// `bigint`; a JSON integer (or a decimal string).
    ///
    /// ```swift
    /// SyncValueKind.bigint
    /// ```
    case bigint
    /// `numeric(20,0)` holding 0...2^64-1; pushed as a JSON integer or decimal string, pulled
    /// as a decimal string (exact through any JSON parser).
    ///
    /// ```swift
    /// SyncValueKind.uint64
    /// ```
    case uint64
    /// `double precision`; a JSON number (the shortest decimal that round-trips), or the
    /// strings `"NaN"`, `"Infinity"`, `"-Infinity"`, `"-0"`.
    ///
    /// ```swift
    /// SyncValueKind.double
    /// ```
    case double
    /// `text`; a JSON string. Text cannot hold U+0000.
    ///
    /// ```swift
    /// SyncValueKind.text
    /// ```
    case text
    /// `bytea`; a base64 string.
    ///
    /// ```swift
    /// SyncValueKind.bytea
    /// ```
    case bytea
    /// `uuid`; a UUID string.
    ///
    /// ```swift
    /// SyncValueKind.uuid
    /// ```
    case uuid
    /// `jsonb`; any JSON value.
    ///
    /// ```swift
    /// SyncValueKind.jsonb
    /// ```
    case jsonb
    /// `boolean[]`.
    ///
    /// ```swift
    /// SyncValueKind.boolArray
    /// ```
    case boolArray = "bool[]"
    /// `bigint[]`.
    ///
    /// ```swift
    /// SyncValueKind.bigintArray
    /// ```
    case bigintArray = "bigint[]"
    /// `numeric(20,0)[]`.
    ///
    /// ```swift
    /// SyncValueKind.uint64Array
    /// ```
    case uint64Array = "uint64[]"
    /// `double precision[]`.
    ///
    /// ```swift
    /// SyncValueKind.doubleArray
    /// ```
    case doubleArray = "double[]"
    /// `text[]`.
    ///
    /// ```swift
    /// SyncValueKind.textArray
    /// ```
    case textArray = "text[]"
    /// `uuid[]`.
    ///
    /// ```swift
    /// SyncValueKind.uuidArray
    /// ```
    case uuidArray = "uuid[]"

    /// The PostgreSQL column type.
    ///
    /// ```swift
    /// SyncValueKind.doubleArray.sqlType   // "double precision[]"
    /// ```
    public var sqlType: String {
        switch self {
        case .bool: return "boolean"
        case .bigint: return "bigint"
        case .uint64: return "numeric(20,0)"
        case .double: return "double precision"
        case .text: return "text"
        case .bytea: return "bytea"
        case .uuid: return "uuid"
        case .jsonb: return "jsonb"
        case .boolArray: return "boolean[]"
        case .bigintArray: return "bigint[]"
        case .uint64Array: return "numeric(20,0)[]"
        case .doubleArray: return "double precision[]"
        case .textArray: return "text[]"
        case .uuidArray: return "uuid[]"
        }
    }

    /// Whether the column is an array.
    ///
    /// ```swift
    /// SyncValueKind.textArray.isArray   // true
    /// ```
    public var isArray: Bool { rawValue.hasSuffix("[]") }
}
