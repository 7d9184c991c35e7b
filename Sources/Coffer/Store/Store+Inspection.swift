import CLMDB
import Foundation

/// What a store holds, read from its schema catalog alone (no generated code needed).
///
/// ```swift
/// let info = try store.info()
/// for entity in info.entities { print(entity.name, entity.count) }
/// ```
public struct StoreInfo: Sendable {
    /// The store directory.
    ///
    /// ```swift
    /// info.path
    /// ```
    public let path: String
    /// Size of the data file in bytes.
    ///
    /// ```swift
    /// info.fileSize
    /// ```
    public let fileSize: Int
    /// Size of the memory map in bytes.
    ///
    /// ```swift
    /// info.mapSize
    /// ```
    public let mapSize: Int
    /// Bytes of the map in use.
    ///
    /// ```swift
    /// info.usedBytes
    /// ```
    public let usedBytes: Int
    /// Every entity in the catalog, by name.
    ///
    /// ```swift
    /// info.entities.map(\.name)
    /// ```
    public let entities: [StoredEntityInfo]
}

/// One entity as the catalog describes it.
///
/// ```swift
/// print(entity.name, entity.count, entity.properties.map(\.name))
/// ```
public struct StoredEntityInfo: Sendable {
    /// The stored name.
    ///
    /// ```swift
    /// entity.name
    /// ```
    public let name: String
    /// The catalog's stable entity id.
    ///
    /// ```swift
    /// entity.id
    /// ```
    public let id: UInt32
    /// Number of stored objects.
    ///
    /// ```swift
    /// entity.count
    /// ```
    public let count: Int
    /// The properties, `id` excluded, in catalog order.
    ///
    /// ```swift
    /// entity.properties
    /// ```
    public let properties: [StoredPropertyInfo]
}

/// One property as the catalog describes it.
///
/// ```swift
/// print(property.name, property.type, property.isIndexed)
/// ```
public struct StoredPropertyInfo: Sendable {
    /// The stored name.
    ///
    /// ```swift
    /// property.name
    /// ```
    public let name: String
    /// The catalog's stable property id.
    ///
    /// ```swift
    /// property.id
    /// ```
    public let id: UInt16
    /// The stored value type.
    ///
    /// ```swift
    /// property.type
    /// ```
    public let type: PropertyType
    /// The Swift type as last declared, e.g. `"String?"`.
    ///
    /// ```swift
    /// property.swiftType
    /// ```
    public let swiftType: String
    /// Whether the property is indexed (unique properties are).
    ///
    /// ```swift
    /// property.isIndexed
    /// ```
    public let isIndexed: Bool
    /// Whether the property is `@Unique`.
    ///
    /// ```swift
    /// property.isUnique
    /// ```
    public let isUnique: Bool
    /// The tokenizer of the property's full-text index, or nil.
    ///
    /// ```swift
    /// property.fullText // .porter
    /// ```
    public let fullText: TextTokenizer?
    /// Entries in the property's full-text index (posting blocks of up to about 1 KiB each,
    /// one length entry per object with text, one statistics entry), 0 without one.
    ///
    /// ```swift
    /// property.fullTextEntries
    /// ```
    public let fullTextEntries: Int
}

extension Store {
    /// Describes the store from its catalog: entities with object counts, properties with
    /// types and index flags, file size and map usage.
    ///
    /// ```swift
    /// let info = try Store(directory: path, options: .init(readOnly: true)).info()
    /// ```
    public func info() throws -> StoreInfo {
        try openTables()   // tables created since the store opened, by any process
        let (mapSize, used) = try mapUsage()
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int) ?? 0
        let entities: [StoredEntityInfo] = try performRead { transaction in
            guard let catalog = catalogDatabase else { return [] }
            return try Catalog.entities(dbi: catalog, in: transaction).map { entity in
                let table = try listedDatabase(Catalog.tableName(entity.id), in: transaction, entity.name)
                var stat = MDB_stat()
                try transaction.check(mdb_stat(transaction.txn, table, &stat), "counting \(entity.name)")
                let count = stat.ms_entries
                let properties = entity.properties.map { property in
                    let flags = PropertyFlags(rawValue: property.flags)
                    var entries = 0
                    if property.tokenizer != nil,
                       let database = storedDatabase(TextIndexBinding.databaseName(entity: entity.id, property: property.id)) {
                        var stat = MDB_stat()
                        if mdb_stat(transaction.txn, database, &stat) == 0 { entries = Int(stat.ms_entries) }
                    }
                    return StoredPropertyInfo(name: property.name, id: property.id, type: property.type,
                                              swiftType: property.swiftType, isIndexed: flags.contains(.indexed),
                                              isUnique: flags.contains(.unique),
                                              fullText: property.tokenizer.flatMap(TextTokenizer.init(rawValue:)),
                                              fullTextEntries: entries)
                }
                return StoredEntityInfo(name: entity.name, id: entity.id, count: count, properties: properties)
            }
        }
        return StoreInfo(path: path, fileSize: fileSize, mapSize: mapSize, usedBytes: used, entities: entities)
    }

    /// Calls `body` with one JSON object per stored object of the entity stored as
    /// `entityName`, in id order, using only the catalog: `{"id":1,"name":"Ada",...}`.
    /// Nil values are left out; NaN and infinities are written as strings.
    ///
    /// ```swift
    /// try store.dump(entity: "Person", limit: 3) { print($0) }
    /// ```
    ///
    /// - Throws: ``CofferError/unknownEntity(name:path:known:)`` naming the known entities
    ///   when there is no entity with that name.
    public func dump(entity entityName: String, limit: Int? = nil, _ body: (String) throws -> Void) throws {
        try openTables()
        try performRead { transaction in
            let entities = try catalogDatabase.map { try Catalog.entities(dbi: $0, in: transaction) } ?? []
            guard let entity = entities.first(where: { $0.name == entityName }) else {
                throw CofferError.unknownEntity(name: entityName, path: path, known: entities.map(\.name))
            }
            let table = try listedDatabase(Catalog.tableName(entity.id), in: transaction, entity.name)
            // A damaged catalog may list one id twice: the first entry wins, never a trap.
            let byId = Dictionary(entity.properties.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let relations = try relationColumns(of: entity, fields: nil, in: transaction)
            let nesting = EmbeddedNesting(entity)
            try transaction.withCursor(table, "reading \(entity.name)") { cursor in
                var current = try cursor.first()
                var written = 0
                while let entry = current, limit.map({ written < $0 }) ?? true {
                    // A damaged key or record is shown as such: the dump goes on.
                    let id = IdKey(entry.key)?.id
                    var object = try Self.jsonObject(id: id, record: entry.value, entity: entity, byId: byId, nesting: nesting, fields: nil,
                                                     relations: relations, in: transaction)
                    if id == nil {
                        object.removeLast()  // the closing brace
                        object += ",\"$corrupt\":\(FieldDescription.quoted("a key of \(entry.key.count) bytes is not an id"))}"
                    }
                    try body(object)
                    written += 1
                    current = try cursor.next()
                }
            }
        }
    }

    func storedDatabase(_ name: String) -> MDB_dbi? {
        registry.storedDatabase(name)
    }

    /// The relation tables of `entity`'s to-many properties, by stored property name: their
    /// target ids are part of the JSON objects.
    func relationColumns(of entity: CatalogEntity, fields: Set<String>?, in transaction: Transaction) throws -> [(name: String, table: MDB_dbi)] {
        try entity.properties.compactMap { property in
            guard PropertyFlags(rawValue: property.flags).contains(.toMany), fields.map({ $0.contains(property.name) }) ?? true else { return nil }
            let forward = RelationTables.names(entity: entity.id, property: property.id).forward
            return (property.name, try listedDatabase(forward, in: transaction, "the relation \(entity.name).\(property.name)"))
        }
    }

    /// One stored object as a JSON object, from its catalog entry alone: `"id"` first, then
    /// the properties with values in catalog order (`fields`: only those stored names; the
    /// order does not depend on the order the record holds them in), then each to-many
    /// relation of `relations` as an array of target ids; a damaged record's readable
    /// fields are followed by `"$corrupt": "reason"`. The format imports read back.
    ///
    /// An embedded value is a nested object of its leaves (`"home":{"city":"Oslo"}`), or
    /// `null` when there is none: its presence field decides, its leaves fill it. `fields`
    /// naming an embedded value keeps all its leaves; naming a leaf (`home.city`) keeps that
    /// leaf inside its value's object.
    static func jsonObject(id: Id?, record: UnsafeRawBufferPointer, entity: CatalogEntity, byId: [UInt16: CatalogProperty],
                           nesting: EmbeddedNesting, fields: Set<String>?, relations: [(name: String, table: MDB_dbi)], in transaction: Transaction) throws -> String {
        let showsId = fields.map { $0.contains("id") || $0.contains("_id") } ?? true
        var parts = showsId ? ["\"id\":\(id.map(String.init) ?? "null")"] : []
        // Each field's JSON text by property id, in record order (a damaged record that holds
        // one id twice shows both).
        var texts: [UInt16: [String]] = [:]
        var corruption: String?
        do {
            try RecordFields(bytes: record, entity: entity.name, id: id ?? 0).forEach { storedId, field in
                guard let property = byId[storedId] else { return }
                texts[storedId, default: []].append(FieldDescription.json(field, type: property.type))
            }
        } catch CofferError.damagedRecord(_, _, let reason) {
            corruption = reason
        }
        parts += nesting.members(texts: texts, fields: fields)
        if let corruption { parts.append("\"$corrupt\":\(FieldDescription.quoted(corruption))") }
        if let id {
            for relation in relations {
                let targets = try transaction.relatedIds(relation.table, of: id, owner: entity.name)
                parts.append("\(FieldDescription.quoted(relation.name)):[\(targets.map(String.init).joined(separator: ","))]")
            }
        }
        return "{" + parts.joined(separator: ",") + "}"
    }
}
