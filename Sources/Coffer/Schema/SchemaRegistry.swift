import CLMDB
import Foundation

/// What a store knows of its schema across transactions: the entity bindings, the handles
/// of the databases it opened, the catalog's handle and generation, the stored-name claims
/// of entity types, the ids handed out, and the incoming-link cache. Transactions consult
/// it when they first meet an entity (after that, `TransactionBindings` answers) and hand
/// it what they created when they commit.
///
/// Invariants (all guarded by `lock`, a leaf lock: nothing else is taken while it is held):
/// - `bindings` holds, per entity type, the binding registered by the last commit that
///   bound it; `readBindings` those built for reading before this process wrote the
///   entity. A binding serves only transactions of its own catalog generation (see
///   `EntityBinding.catalogGeneration`).
/// - `databases` holds handles opened by committed transactions only (a handle opened by a
///   transaction that aborts is closed by LMDB).
/// - `reservedIds[entity]` never decreases (see `Transaction+IdAllocation`).
/// - `linkCache` is valid only for `linkGeneration`, which moves whenever a commit bound
///   entities (they may add links) or the bindings were dropped.
final class SchemaRegistry: @unchecked Sendable {
    private let lock = NSLock()
    /// The catalog database handle, or nil in a read-only store that has never been
    /// written (a read-only store may learn it later).
    private var catalogHandle: MDB_dbi?
    /// Entity bindings of this store, by entity type.
    private var bindings: [ObjectIdentifier: EntityBinding] = [:]
    /// Bindings built from the catalog for reading, before (or without) any write of the
    /// entity by this process; replaced by the registered binding when it writes.
    private var readBindings: [ObjectIdentifier: EntityBinding] = [:]
    /// Entity tables and indexes opened at start or created since, by database name.
    private var databases: [String: MDB_dbi] = [:]
    /// Moves whenever a commit registered entities (which may add links) or the bindings
    /// were dropped: the link cache of an older value is stale.
    private var linkGeneration = 0
    /// `ToOne` properties by target entity, valid for one `linkGeneration`.
    private var linkCache: (generation: Int, links: [String: IncomingRelations]) = (-1, [:])
    /// The highest id handed out per entity id by any transaction of this process, committed
    /// or not: never handed out again (see `Transaction+IdAllocation`).
    private var reservedIds: [UInt32: Id] = [:]
    /// The entity types that used each stored entity name with this store, and whether
    /// they named it with `@StoredAs` (see `Store.claimStoredName`).
    private var storedNameClaims: [String: [(type: String, explicit: Bool)]] = [:]
    /// The catalog generation the bindings were made for (see
    /// `Store.refreshBindingsIfCatalogChanged`).
    private var boundCatalogGeneration: UInt64?

    @inline(__always)
    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    // MARK: Databases

    /// The catalog database handle, or nil when the store has none yet.
    var catalogDatabase: MDB_dbi? {
        locked { catalogHandle }
    }

    /// The handle of a database this store opened, by name.
    func storedDatabase(_ name: String) -> MDB_dbi? {
        locked { databases[name] }
    }

    /// Every database handle this store opened, by name.
    var openedDatabases: [String: MDB_dbi] {
        locked { databases }
    }

    /// Keeps the handles a committed transaction opened (the catalog's and others); a
    /// handle already known stays.
    func adoptOpened(catalog: MDB_dbi, databases opened: [String: MDB_dbi]) {
        locked {
            catalogHandle = catalog
            databases.merge(opened) { old, _ in old }
        }
    }

    /// Keeps handles a committed write transaction opened outside any binding; a handle
    /// already known stays.
    func keepOpened(_ opened: [String: MDB_dbi]) {
        locked { databases.merge(opened) { old, _ in old } }
    }

    // MARK: Bindings

    /// The registered binding of an entity type.
    func binding(_ key: ObjectIdentifier) -> EntityBinding? {
        locked { bindings[key] }
    }

    /// The binding of an entity type built for reading.
    func readBinding(_ key: ObjectIdentifier) -> EntityBinding? {
        locked { readBindings[key] }
    }

    /// Whether the entity type has a binding of either kind.
    func isBound(_ key: ObjectIdentifier) -> Bool {
        locked { bindings[key] != nil || readBindings[key] != nil }
    }

    /// Keeps a binding built for reading, until this process registers the entity.
    func keepReadBinding(_ binding: EntityBinding, for key: ObjectIdentifier) {
        locked { readBindings[key] = binding }
    }

    /// Makes the bindings a committed transaction created (`created`, made at catalog
    /// generations up to `generation`) visible to everyone, and keeps their handles.
    func adopt(_ created: [ObjectIdentifier: EntityBinding], generation: UInt64?) {
        guard !created.isEmpty else { return }
        locked {
            linkGeneration += 1
            for (key, binding) in created {
                // A binding made before a later schema change of the same transaction is
                // stale (its handles are not: they are kept below).
                if binding.catalogGeneration == generation { replaceBindings(of: key, with: binding) }
                keepHandles(of: binding)
            }
        }
    }

    /// Makes `binding` the one of its entity type; other declarations of the same stored
    /// entity (a version type), bound to the catalog as it was before, register again on
    /// their next use. Called under `lock`.
    private func replaceBindings(of key: ObjectIdentifier, with binding: EntityBinding) {
        for (other, existing) in bindings where other != key && existing.schema.storedName == binding.schema.storedName {
            bindings[other] = nil
        }
        for (other, existing) in readBindings where existing.schema.storedName == binding.schema.storedName {
            readBindings[other] = nil
        }
        bindings[key] = binding
    }

    /// Keeps the handles of a committed binding's table, indexes and relation tables by
    /// database name. Called under `lock`.
    private func keepHandles(of binding: EntityBinding) {
        databases[Catalog.tableName(binding.entityId)] = binding.table
        for index in binding.indexes {
            databases[IndexBinding.databaseName(entity: binding.entityId, property: index.storedId)] = index.database
        }
        for index in binding.textIndexes {
            databases[TextIndexBinding.databaseName(entity: binding.entityId, property: index.storedId)] = index.database
        }
        for (position, tables) in binding.relationTables {
            guard let storedProperty = binding.catalog.anyProperty(named: binding.schema.properties[position].storedName) else { continue }
            let names = RelationTables.names(entity: binding.entityId, property: storedProperty.id)
            databases[names.forward] = tables.forward
            databases[names.reverse] = tables.reverse
        }
    }

    /// Records the catalog generation a write transaction runs at. When the bindings were
    /// made for another one (another process changed the catalog), drops them all and the
    /// cached incoming links: each entity registers again against the catalog as it is now.
    func bindAtGeneration(_ current: UInt64) {
        locked {
            guard let bound = boundCatalogGeneration else {
                boundCatalogGeneration = current
                return
            }
            guard bound != current else { return }
            bindings.removeAll()
            readBindings.removeAll()
            linkGeneration += 1
        }
    }

    /// Records the catalog generation a committed write left the bindings at.
    func noteBoundGeneration(_ generation: UInt64) {
        locked { boundCatalogGeneration = generation }
    }

    /// Forgets every binding (the store is closing).
    func forgetBindings() {
        locked {
            bindings.removeAll()
            readBindings.removeAll()
        }
    }

    /// Records that `schema`'s type uses its stored entity with the store at `path`. Two
    /// types may share a stored entity only when one of them says so with `@StoredAs`: two
    /// unrelated types with the same simple name (`Shop.Item`, `Inventory.Item`) would
    /// otherwise read and overwrite each other's objects.
    func claimStoredName(_ schema: EntitySchema, path: String) throws {
        try locked {
            let claims = storedNameClaims[schema.storedName] ?? []
            guard !claims.contains(where: { $0.type == schema.name }) else { return }
            if let other = claims.first(where: { !$0.explicit && !schema.storedNameIsExplicit }) {
                throw CofferError.misuse(.sharedStoredName(storedName: schema.storedName, type: schema.name, otherType: other.type, path: path))
            }
            storedNameClaims[schema.storedName] = claims + [(schema.name, schema.storedNameIsExplicit)]
        }
    }

    // MARK: Incoming links

    /// The cached relations pointing at `target` (nil when not cached for the current
    /// generation), and that generation, to hand back to `cacheIncomingLinks`.
    func cachedIncomingLinks(to target: String) -> (relations: IncomingRelations?, generation: Int) {
        locked { (linkCache.generation == linkGeneration ? linkCache.links[target] : nil, linkGeneration) }
    }

    /// Caches the relations pointing at `target`, found at link generation `generation`.
    func cacheIncomingLinks(_ links: IncomingRelations, to target: String, generation: Int) {
        locked {
            if linkCache.generation != generation { linkCache = (generation, [:]) }
            linkCache.links[target] = links
        }
    }

    // MARK: Ids

    /// The highest id this process handed out for an entity (0 when none).
    func reservedId(for entityId: UInt32) -> Id {
        locked { reservedIds[entityId] ?? 0 }
    }

    /// Remembers the ids a transaction handed out (the last one per entity id), whatever
    /// becomes of the transaction.
    func reserve<HandedOut: Sequence>(_ handedOut: HandedOut) where HandedOut.Element == (entity: UInt32, last: Id) {
        locked {
            for (entity, last) in handedOut where last > reservedIds[entity] ?? 0 {
                reservedIds[entity] = last
            }
        }
    }
}
