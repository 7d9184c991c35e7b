import CLMDB
import Foundation

/// Turns outbox entries into ``SyncChange``s within one transaction, opening each entity's
/// tables once.
struct SyncChangeReader {
    private struct EntityTables {
        let entity: CatalogEntity
        let properties: [UInt16: CatalogProperty]
        let table: MDB_dbi
        let identity: SyncIdTables
    }

    private let catalog: [CatalogEntity]
    private var opened: [UInt32: EntityTables] = [:]

    init(catalog: [CatalogEntity]) {
        self.catalog = catalog
    }

    mutating func change(mid: UInt64, entry: OutboxEntry, in transaction: Transaction) throws -> SyncChange {
        let tables = try self.tables(entityId: entry.entityId, mid: mid, in: transaction)
        let entity = tables.entity
        let localId = try transaction.localId(of: entry.syncId, in: tables.identity)
        let record = try localId.flatMap { try transaction.record($0, table: tables.table, entity: entity.name) }
        // Valid while nothing is written: the values are turned into text before the caller
        // updates the pending map.
        let fields = record.map { RecordFields(bytes: $0, entity: entity.name, id: localId ?? 0) }
        var values: [SyncFieldValue] = []
        var unknown: [UInt16] = []
        let listed = entry.isWhole ? try wholeFields(of: fields, entity: entity, clock: entry.clock) : entry.fields
        for field in listed {
            guard let property = tables.properties[field.id] else {
                unknown.append(field.id)
                continue
            }
            var json: String?
            let flags = PropertyFlags(rawValue: property.flags)
            if flags.contains(.toMany) {
                if let localId, record != nil {
                    json = try relationJSON(of: localId, entity: entity, property: property, in: transaction)
                }
            } else if let stored = try fields?.field(field.id) {
                if flags.contains(.relation) {
                    json = try linkJSON(stored, property: property, in: transaction)
                } else {
                    json = SyncWireValue.json(stored, type: property.type)
                }
            }
            // A whole creation sends the relations that hold targets (the others are empty
            // on the server too).
            if entry.isWhole && flags.contains(.toMany) && (json == nil || json == "[]") { continue }
            values.append(SyncFieldValue(name: property.name, storedId: field.id, type: property.type, clock: field.clock,
                                         json: json, isRetired: property.isRetired))
        }
        return SyncChange(mid: mid, entity: entity.name, syncId: entry.syncId,
                          operation: entry.operation == .delete ? .delete : .upsert, isCreation: entry.isCreation,
                          clock: entry.clock, fields: values, unknownFieldIds: unknown, objectExists: record != nil)
    }

    /// The fields a whole creation stands for, all at `clock`, in stored-id order: those the
    /// record holds and the entity's to-many relations (stored outside the record). None
    /// when the object is no longer stored.
    private func wholeFields(of record: RecordFields?, entity: CatalogEntity, clock: UInt64) throws -> [(id: UInt16, clock: UInt64)] {
        guard let record else { return [] }
        var fields: [(id: UInt16, clock: UInt64)] = []
        var ascending = true
        try record.forEach { id, _ in
            if let last = fields.last?.id, id <= last { ascending = false }
            fields.append((id, clock))
        }
        for property in entity.properties where PropertyFlags(rawValue: property.flags).contains(.toMany) {
            fields.append((property.id, clock))
            ascending = false
        }
        guard !ascending else { return fields }
        // Carried fields out of order, or relations: in id order, each once.
        var seen = Set<UInt16>()
        return fields.filter { seen.insert($0.id).inserted }.sorted { $0.id < $1.id }
    }

    /// A to-many relation as the JSON array of its targets' sync ids: the targets stored here
    /// and those still pending (pulled before they arrived: part of the relation as this
    /// replica knows it). `nil` (sent as null, which leaves a relation as it is) when the
    /// target entity is not synced.
    private mutating func relationJSON(of owner: Id, entity: CatalogEntity, property: CatalogProperty,
                                       in transaction: Transaction) throws -> String? {
        guard let targetName = property.target, let target = catalog.first(where: { $0.name == targetName }),
              target.synced == true else { return nil }
        let names = RelationTables.names(entity: entity.id, property: property.id)
        let forward = try transaction.store.listedDatabase(names.forward, in: transaction, "the relation \(entity.name).\(property.name)")
        let targets = try self.tables(entityId: target.id, mid: 0, in: transaction)
        var syncIds: [UUID] = []
        for targetId in try transaction.relatedIds(forward, of: owner, owner: entity.name) {
            if let syncId = try transaction.syncId(of: targetId, in: targets.identity) { syncIds.append(syncId) }
        }
        syncIds += try transaction.pendingTargets(ownerEntityId: entity.id, owner: owner, field: property.id)
        return "[" + Set(syncIds).map { "\"\($0.uuidString.lowercased())\"" }.sorted().joined(separator: ",") + "]"
    }

    /// A link's target as its sync id (JSON string), or `null` when the target has none.
    private mutating func linkJSON(_ field: RecordFields.Field, property: CatalogProperty, in transaction: Transaction) throws -> String {
        guard let targetId = FieldValue.unsigned(field.kind, field.payload), targetId != 0,
              let targetName = property.target,
              let target = catalog.first(where: { $0.name == targetName }), target.synced == true else { return "null" }
        let tables = try self.tables(entityId: target.id, mid: 0, in: transaction)
        guard let syncId = try transaction.syncId(of: targetId, in: tables.identity) else { return "null" }
        return "\"\(syncId.uuidString.lowercased())\""
    }

    private mutating func tables(entityId: UInt32, mid: UInt64, in transaction: Transaction) throws -> EntityTables {
        if let known = opened[entityId] { return known }
        guard let entity = catalog.first(where: { $0.id == entityId }) else {
            throw CofferError.damagedStore(part: .sync, reason: "the outbox entry \(mid) names the entity id \(entityId), which the catalog does not list")
        }
        let store = transaction.store
        let identity = try SyncIdTables.listed(entityId: entity.id, entity: entity.name, in: transaction)
        let table = try store.listedDatabase(Catalog.tableName(entity.id), in: transaction, entity.name)
        let properties = Dictionary(entity.properties.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let tables = EntityTables(entity: entity, properties: properties, table: table, identity: identity)
        opened[entityId] = tables
        return tables
    }
}
