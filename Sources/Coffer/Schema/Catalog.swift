import CLMDB
import Foundation

/// The schema catalog stored in the database, so that a store describes itself: which
/// entities it holds, their properties' stable ids, names and types.
///
/// It lives in the named database `coffer.catalog` under readable keys:
/// `meta` (format version and the last entity id), `entity/<name>` (one ``CatalogEntity``
/// as JSON) and `sequence/<entity id>` (the last id handed out, 8 bytes big-endian).
/// Tools such as `coffer info` read only this, never the app's generated code.
enum Catalog {
    static let databaseName = "coffer.catalog"
    static let metaKey = "meta"
    /// The highest catalog format this build reads; a store claiming a higher one is refused
    /// at open (``CofferError/formatTooNew(path:version:supported:)``).
    static let formatVersion = 3
    /// The format of a new store.
    static let baseFormatVersion = 1
    /// The format of a store that may hold derived sync ids (objects with no identity entry,
    /// see ``SyncIdDerivation``) and whole creations in its outbox (see ``OutboxEntry``):
    /// builds that read only format 1 would take those objects for ones sync never knew (a
    /// remove would queue no delete), and those that read format 2 (derived ids, field-list
    /// creations only) would refuse every whole creation as damage, so they refuse the store
    /// at open instead. Format-2 stores are read as they are; a writable open of one that
    /// holds creation runs marks it 3 (as does the transaction that records an epoch).
    static let derivedIdsFormatVersion = 3

    static func entityKey(_ storedName: String) -> String { "entity/\(storedName)" }
    static func sequenceKey(_ entityId: UInt32) -> String { "sequence/\(entityId)" }
    /// Bumped by every transaction that changes an entity entry, so every process notices
    /// schema changes made by others (8 bytes big-endian).
    static let generationKey = "generation"
    static func tableName(_ entityId: UInt32) -> String { "entity.\(entityId)" }
}

/// The catalog's global facts.
struct CatalogMeta: Codable, Equatable {
    var formatVersion: Int
    var lastEntityId: UInt32
}

/// One entity as the catalog records it.
struct CatalogEntity: Codable, Equatable {
    var id: UInt32
    var name: String
    var lastPropertyId: UInt16
    var properties: [CatalogProperty]
    /// The `@Backlink` properties the last registering build declares (nothing is stored
    /// for them): so that selector paths through them (`"orders.total"`) work without the
    /// Swift type. Nil when there are none.
    var backlinks: [CatalogBacklink]? = nil
    /// True once a build registered the entity with `@Sync`: from then on every writer of
    /// the store (other builds, imports) records its changes for sync. Nil when not synced.
    var synced: Bool? = nil

    /// Whether `other` describes the same schema: the same properties in any order (a build
    /// that lacks a property lists it, retired, after its own). Registering writes the
    /// catalog, and bumps its generation, only when it does not.
    func describesSameSchema(as other: CatalogEntity?) -> Bool {
        guard var other else { return false }
        var this = self
        this.properties.sort { $0.id < $1.id }
        other.properties.sort { $0.id < $1.id }
        return this == other
    }

    /// Checks what bindings rely on: property ids between 1 and `lastPropertyId`, each
    /// used once, and each name declared once. A damaged entry throws instead of becoming
    /// an out-of-bounds write or a trap on a duplicate key.
    func validate() throws {
        var ids = Set<UInt16>()
        var names = Set<String>()
        for property in properties {
            guard property.id >= 1, property.id <= lastPropertyId, lastPropertyId < UInt16.max else {
                throw damage("property \(property.name) has id \(property.id), outside 1...\(lastPropertyId)")
            }
            guard ids.insert(property.id).inserted else { throw damage("property id \(property.id) is listed twice") }
            guard names.insert(property.name).inserted else { throw damage("property name \(property.name) is listed twice") }
        }
    }

    private func damage(_ reason: String) -> CofferError {
        CofferError.damagedStore(part: .catalog, reason: "the entry of \(name) is damaged: \(reason)")
    }

    /// The declared (not retired) property stored under `name`.
    func property(named name: String) -> CatalogProperty? {
        properties.first { $0.name == name && !$0.isRetired }
    }

    /// The property stored under `name`, declared or retired, or else the one that had
    /// that name before a rename.
    func anyProperty(named name: String) -> CatalogProperty? {
        properties.first { $0.name == name } ?? properties.first { $0.formerNames?.contains(name) == true }
    }
}

/// A `@Backlink` as the catalog records it: `name` on this entity lists the objects of
/// `source` whose property `link` (a `ToOne` or a many-to-many `ToMany`) points here.
struct CatalogBacklink: Codable, Equatable {
    var name: String
    var source: String
    var link: String
}

/// One property as the catalog records it. `id` never changes and is never reused.
struct CatalogProperty: Codable, Equatable {
    var id: UInt16
    var name: String
    var type: PropertyType
    var optional: Bool
    var swiftType: String
    var flags: UInt32
    /// For a `ToOne` link: the target entity's stored name.
    var target: String? = nil
    /// For an indexed property: the `IndexKey.version` its index was built with (nil: 1).
    var keys: Int? = nil
    /// True for a property the last registering build did not declare. It keeps its id,
    /// its values stay in the records (carried through updates) and its index stays
    /// maintained, so a build that declares it again finds everything.
    var retired: Bool? = nil
    /// Names the property was stored under before a rename (`@Renamed(from:)`).
    var formerNames: [String]? = nil
    /// For a `@FullText` property: the tokenizer its postings were built with.
    var tokenizer: String? = nil
    /// True when the declaration has a default value (a record without the property reads
    /// as that default), so an import may leave the property out; nil when it has none.
    var defaulted: Bool? = nil
    /// For a `@Unique` property with a conflict strategy other than `.fail`: its raw value,
    /// so writes without the Swift type (imports) resolve conflicts as the app's puts do.
    var onConflict: String? = nil

    var isRetired: Bool { retired == true }
}

extension Catalog {
    /// Reads a JSON value stored under `key`, or nil when there is none.
    static func load<T: Decodable>(_ type: T.Type, key: String, dbi: MDB_dbi, in transaction: Transaction) throws -> T? {
        guard let bytes = try raw(key: key, dbi: dbi, in: transaction) else { return nil }
        let value: T
        do {
            value = try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw CofferError.damagedStore(part: .catalog, reason: "the entry \(key) cannot be read: \(error)")
        }
        try (value as? CatalogEntity)?.validate()
        return value
    }

    static func store<T: Encodable>(_ value: T, key: String, dbi: MDB_dbi, in transaction: Transaction) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        try data.withUnsafeBytes { try putRaw(key: key, value: $0, dbi: dbi, in: transaction) }
    }

    static func raw(key: String, dbi: MDB_dbi, in transaction: Transaction) throws -> UnsafeRawBufferPointer? {
        try withKey(key) { keyVal in
            var value = MDB_val()
            let rc = mdb_get(transaction.txn, dbi, &keyVal, &value)
            if rc == MDB_NOTFOUND { return nil }
            try transaction.check(rc, "reading catalog entry \(key)")
            return value.bytes
        }
    }

    static func putRaw(key: String, value: UnsafeRawBufferPointer, dbi: MDB_dbi, in transaction: Transaction) throws {
        try withKey(key) { keyVal in
            var val = MDB_val(value)
            try transaction.check(mdb_put(transaction.txn, dbi, &keyVal, &val, 0), "writing catalog entry \(key)")
        }
    }

    /// Deletes `key` (nothing when it is absent).
    static func deleteRaw(key: String, dbi: MDB_dbi, in transaction: Transaction) throws {
        try withKey(key) { keyVal in
            let rc = mdb_del(transaction.txn, dbi, &keyVal, nil)
            if rc == MDB_NOTFOUND { return }
            try transaction.check(rc, "deleting catalog entry \(key)")
        }
    }

    /// Calls `body` with `key`'s UTF-8 bytes as an LMDB key: a native string's own storage
    /// (LMDB never writes through a key), or a copy for one that has none.
    @inline(__always)
    private static func withKey<T>(_ key: String, _ body: (inout MDB_val) throws -> T) throws -> T {
        var key = key
        return try key.withUTF8 { bytes in
            var keyVal = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return try body(&keyVal)
        }
    }

    /// The last id handed out for an entity (0 when none).
    static func sequence(_ entityId: UInt32, dbi: MDB_dbi, in transaction: Transaction, entity: String) throws -> UInt64 {
        guard let bytes = try raw(key: sequenceKey(entityId), dbi: dbi, in: transaction) else { return 0 }
        guard bytes.count == 8 else {
            throw CofferError.damagedStore(part: .catalog, reason: "the id sequence of \(entity) has \(bytes.count) bytes, not 8")
        }
        return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    }

    /// The catalog generation (0 before the first schema change that counted it).
    static func generation(dbi: MDB_dbi, in transaction: Transaction) throws -> UInt64 {
        guard let bytes = try raw(key: generationKey, dbi: dbi, in: transaction) else { return 0 }
        guard bytes.count == 8 else {
            throw CofferError.damagedStore(part: .catalog, reason: "the generation entry has \(bytes.count) bytes, not 8")
        }
        return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    }

    static func setGeneration(_ value: UInt64, dbi: MDB_dbi, in transaction: Transaction) throws {
        var big = value.bigEndian
        try withUnsafeBytes(of: &big) { try putRaw(key: generationKey, value: $0, dbi: dbi, in: transaction) }
    }

    static func setSequence(_ entityId: UInt32, to value: UInt64, dbi: MDB_dbi, in transaction: Transaction) throws {
        var big = value.bigEndian
        try withUnsafeBytes(of: &big) { try putRaw(key: sequenceKey(entityId), value: $0, dbi: dbi, in: transaction) }
    }
}
