import CLMDB

/// An entity's schema bound to one store: its table, its indexes and relation tables, and
/// (as a `RecordLayout`) the mapping between schema positions (what generated code uses)
/// and the catalog's stable property ids (what records hold).
final class EntityBinding: RecordLayout, @unchecked Sendable {
    let schema: EntitySchema
    let catalog: CatalogEntity
    /// The store, for links loaded from records (a binding never outlives its store).
    unowned(unsafe) let store: Store
    let table: MDB_dbi
    /// The id of the transaction that created the table; snapshots older than it do not
    /// have the table yet.
    let createdInTransaction: Int
    /// The catalog generation `catalog` was read at. A transaction uses the binding only
    /// while its own snapshot has that generation: after any schema change (by another
    /// process, another build, or this transaction) the entity binds again, so every write
    /// maintains exactly the indexes the catalog lists and no read uses an index the catalog
    /// no longer lists.
    let catalogGeneration: UInt64
    /// The entity's property indexes (unique ones included). Filled while the binding is
    /// registered, before any other thread can see it; read-only afterwards.
    @exclusivity(unchecked) var indexes: [IndexBinding] = [] {
        didSet { hasUniqueIndex = indexes.contains { $0.isUnique } }
    }
    /// Whether any of `indexes` is unique (a put without one skips the unique checks, and
    /// the retain of each index its loop made).
    @exclusivity(unchecked) private(set) var hasUniqueIndex = false
    /// The entity's full-text indexes, filled like `indexes`.
    @exclusivity(unchecked) var textIndexes: [TextIndexBinding] = [] {
        didSet { hasTextIndexesOrSync = !textIndexes.isEmpty || syncTables != nil }
    }
    /// The identity tables of a synced entity (nil: not synced, and its writes record
    /// nothing for sync). Filled like `indexes`.
    @exclusivity(unchecked) var syncTables: SyncIdTables? {
        didSet { hasTextIndexesOrSync = !textIndexes.isEmpty || syncTables != nil }
    }
    /// Whether a put has full-text postings or sync capture to do: one test on the write
    /// path for entities with neither.
    @exclusivity(unchecked) private(set) var hasTextIndexesOrSync = false
    /// The tables of the entity's many-to-many relations, by schema position.
    @exclusivity(unchecked) var relationTables: [Int: RelationTables] = [:]
    /// Whether a put must set `@CreatedAt` / `@UpdatedAt` properties.
    let hasTimestamps: Bool
    /// Whether a put changes nothing in the caller's value but its id (no timestamps, no
    /// links or relations to store first): failed batches then restore ids only, instead of
    /// keeping a copy of every object.
    let putChangesOnlyIds: Bool
    /// Stored id of the `@CreatedAt` property, whose stored value an update keeps.
    let createdAtStoredId: UInt16?
    /// Stored ids of the `ToOne` properties (a local edit of one on a synced entity may
    /// supersede a pending link).
    let linkFieldIds: [UInt16]

    var entityId: UInt32 { catalog.id }

    init(store: Store, schema: EntitySchema, catalog: CatalogEntity, table: MDB_dbi, createdInTransaction: Int,
         catalogGeneration: UInt64) {
        self.store = store
        self.catalogGeneration = catalogGeneration
        self.schema = schema
        self.catalog = catalog
        self.table = table
        self.createdInTransaction = createdInTransaction
        hasTimestamps = schema.properties.contains { !$0.flags.isDisjoint(with: [.createdAt, .updatedAt]) }
        putChangesOnlyIds = schema.putChangesOnlyIds
        createdAtStoredId = schema.properties.first { $0.flags.contains(.createdAt) }
            .flatMap { catalog.anyProperty(named: $0.storedName)?.id }
        linkFieldIds = schema.properties.compactMap { property in
            guard property.flags.contains(.relation), !property.flags.contains(.toMany) else { return nil }
            return (catalog.anyProperty(named: property.storedName) ?? property.renamedFrom.flatMap { catalog.anyProperty(named: $0) })?.id
        }
        super.init(entityName: schema.name, propertyNames: schema.properties.map(\.name),
                   positionCount: Int(catalog.lastPropertyId) + 1)
        for (position, property) in schema.properties.enumerated() where property.flags.isDisjoint(with: [.id, .backlink]) {
            // A catalog not yet reconciled (read before this build first writes) may still
            // hold the property under its `@Renamed(from:)` name.
            guard let stored = catalog.anyProperty(named: property.storedName)
                ?? property.renamedFrom.flatMap({ catalog.anyProperty(named: $0) }) else { continue }
            map(position, to: stored.id)
        }
    }

    /// Whether `transaction` can see this entity's table.
    @inline(__always)
    func isVisible(in transaction: Transaction) -> Bool {
        transaction.snapshotId >= createdInTransaction
    }
}

/// The two tables of a many-to-many relation: `owner ‖ target` and `target ‖ owner` keys
/// (16 bytes, ids big-endian, empty values), so both directions are prefix scans.
struct RelationTables: Sendable {
    let forward: MDB_dbi
    let reverse: MDB_dbi
    /// The stored name of the entity that owns the relation.
    let owner: String
    /// The stored id of the relation's property in the owner (the field a synced owner's
    /// outbox entry names when the relation changes).
    let field: UInt16

    static func names(entity: UInt32, property: UInt16) -> (forward: String, reverse: String) {
        ("relation.\(entity).\(property)", "relation.\(entity).\(property).reverse")
    }
}

extension RecordReader {
    /// The binding of the entity whose record this reader reads, for the layers above
    /// encoding (links and relations need the store and the relation tables). Every layout a
    /// reader is made with is an entity binding: the schema layer is the only one that makes
    /// layouts.
    @inline(__always)
    var binding: EntityBinding {
        unsafeDowncast(layout.takeUnretainedValue(), to: EntityBinding.self)
    }
}
