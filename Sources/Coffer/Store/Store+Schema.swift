import CLMDB
import Foundation

extension Store {
    /// Opens the catalog (creating it in a writable store) and checks its format, at open.
    func openCatalog() throws {
        if !options.readOnly { try createCatalog() }
        try openTables()
    }

    /// Creates the catalog and its meta entry if the store has none yet.
    private func createCatalog() throws {
        environment.writerLock.lock()
        defer { environment.writerLock.unlock() }
        var begun: OpaquePointer?
        var begin = mdb_txn_begin(environment.env, nil, 0, &begun)
        while begin == MDB_MAP_RESIZED {
            // Another process grew the map since this one mapped it (no transaction of this
            // store is open yet, so the size can be adopted at once).
            try adoptMapSizeOfOtherProcess()
            begin = mdb_txn_begin(environment.env, nil, 0, &begun)
        }
        try LMDB.check(begin, "cannot open the store at \(path)")
        guard let txn = begun else { return }
        let transaction = Transaction(store: self, txn: txn, isWrite: true)
        do {
            var catalog: MDB_dbi = 0
            try LMDB.check(mdb_dbi_open(txn, Catalog.databaseName, UInt32(MDB_CREATE), &catalog), "cannot open the schema catalog of \(path)")
            if try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction) == nil {
                try Catalog.store(CatalogMeta(formatVersion: Catalog.baseFormatVersion, lastEntityId: 0),
                                  key: Catalog.metaKey, dbi: catalog, in: transaction)
            }
            // Before anything reads them: sync tables an earlier build wrote take this
            // build's format.
            try transaction.convertLegacySyncTables(catalog: catalog)
            if try transaction.fileHoldsDatabase(Transaction.syncRunsName) { try transaction.markDerivedIdsFormat(catalog: catalog) }
            try LMDB.check(mdb_txn_commit(txn), "cannot open the store at \(path)")
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// Opens the catalog and every entity table, index and relation table it lists that this
    /// store has not opened yet, in a read-only transaction that commits (LMDB keeps handles
    /// opened in a transaction only when it commits; a read-only commit writes nothing).
    ///
    /// Runs before a top-level read of an entity this store has no binding for, so tables
    /// created since the store opened (by this process or another one) become readable, and
    /// no read ever needs the writer lock's transaction. Handle opens are serialised with the
    /// writer lock: LMDB forbids opening handles from two transactions at once.
    func openTables() throws {
        // Inside a transaction of this thread the writer lock may be ours: new tables wait
        // for the next top-level call.
        guard Transaction.current(for: self) == nil else { return }
        environment.writerLock.lock()
        defer { environment.writerLock.unlock() }
        while true {
            environment.gate.lockShared()
            let resized: Bool
            do {
                resized = try openTablesUnderGate()
            } catch {
                environment.gate.unlock()
                throw error
            }
            environment.gate.unlock()
            guard resized else { return }
            // Another process grew the map: adopt its size (which needs the gate to itself)
            // and read again, as every transaction does.
            try adoptMapSizeOfOtherProcess()
        }
    }

    /// One attempt of `openTables`, holding the writer lock and the gate; returns true when
    /// LMDB reported that another process grew the map.
    private func openTablesUnderGate() throws -> Bool {
        guard !environment.isClosed else { throw CofferError.storeClosed(path: path) }
        var begun: OpaquePointer?
        let begin = mdb_txn_begin(environment.env, nil, UInt32(MDB_RDONLY), &begun)
        if begin == MDB_MAP_RESIZED { return true }
        try LMDB.check(begin, "cannot read the catalog of \(path)")
        guard let txn = begun else { return false }
        let transaction = Transaction(store: self, txn: txn, isWrite: false)
        do {
            var catalog: MDB_dbi = 0
            let rc = mdb_dbi_open(txn, Catalog.databaseName, 0, &catalog)
            if rc == MDB_NOTFOUND {
                // A read-only store that has never been written: it holds no entities.
                mdb_txn_abort(txn)
                return false
            }
            try LMDB.check(rc, "cannot open the schema catalog of \(path)")
            if let meta = try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction) {
                guard meta.formatVersion <= Catalog.formatVersion else {
                    throw CofferError.formatTooNew(path: path, version: meta.formatVersion, supported: Catalog.formatVersion)
                }
            }
            if try transaction.hasLegacySyncTables(catalog: catalog) {
                // Converted only by a writable open: never read in the earlier format.
                throw options.readOnly
                    ? CofferError.readOnly(path: path, operation: "convert the sync tables an earlier build wrote (open the store writable once)")
                    : CofferError.damagedStore(part: .sync, reason: "an earlier build wrote sync tables of format 1 after this store opened; open the store again to convert them")
            }
            var opened: [String: MDB_dbi] = [:]
            for entity in try Catalog.entities(dbi: catalog, in: transaction, skippingDamaged: true) {
                var names = [Catalog.tableName(entity.id)]
                for property in entity.properties where PropertyFlags(rawValue: property.flags).contains(.indexed) {
                    names.append(IndexBinding.databaseName(entity: entity.id, property: property.id))
                }
                for property in entity.properties where property.tokenizer != nil {
                    names.append(TextIndexBinding.databaseName(entity: entity.id, property: property.id))
                }
                for property in entity.properties where PropertyFlags(rawValue: property.flags).contains(.toMany) {
                    let relation = RelationTables.names(entity: entity.id, property: property.id)
                    names += [relation.forward, relation.reverse]
                }
                if entity.synced == true {
                    let sync = SyncIdTables.names(entity: entity.id)
                    names += [sync.syncIds, sync.localIds, SyncIdTables.outboxName, Transaction.syncRunsName, Transaction.syncEpochsName,
                              Transaction.syncConflictsName, Transaction.pendingLinksName,
                              Transaction.syncResyncName, Transaction.syncRejectionsName]
                }
                for name in names where storedDatabase(name) == nil {
                    var database: MDB_dbi = 0
                    let rc = mdb_dbi_open(txn, name, 0, &database)
                    if rc == MDB_NOTFOUND { continue }
                    try LMDB.check(rc, "cannot open \(name) of \(entity.name) in \(path)")
                    opened[name] = database
                }
            }
            try LMDB.check(mdb_txn_commit(txn), "cannot read the catalog of \(path)")
            registry.adoptOpened(catalog: catalog, databases: opened)
            return false
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// Makes `E` readable by top-level reads: when `E` has no binding yet and the catalog
    /// lists a table of it that this store has not opened (created since the store opened),
    /// opens the catalog's new tables. Never writes; takes the writer lock only to open new
    /// handles (LMDB allows no handle opens beside a transaction that opened some).
    func prepareForReading<E: Entity>(_ type: E.Type) throws {
        guard !registry.isBound(ObjectIdentifier(type)) else { return }
        let needsTables: Bool = try performRead { transaction in
            guard let catalog = catalogDatabase else { return true }
            guard let stored = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(E._cofferSchema.storedName),
                                                dbi: catalog, in: transaction) else { return false }
            return storedDatabase(Catalog.tableName(stored.id)) == nil
        }
        if needsTables { try openTables() }
    }

    /// The binding of `E` as `transaction` sees it, or nil when the entity has no table in
    /// that snapshot (nothing was ever stored, or it was created after the snapshot).
    func binding<E: Entity>(for type: E.Type, in transaction: Transaction) throws -> EntityBinding? {
        let key = ObjectIdentifier(type)
        // A loop of box calls asks for the same entity each time: answered without hashing.
        if let known = transaction.bindings.cachedBinding(key) { return known }
        // A binding serves only transactions whose snapshot has the catalog generation it
        // was made at: after a schema change (by anyone) the entity binds again.
        let generation = transaction.catalogGeneration
        let cached = registry.binding(key)
        if let cached, cached.catalogGeneration == generation {
            guard cached.isVisible(in: transaction) else { return nil }
            transaction.bindings.cache(cached, for: key)
            return cached
        }
        if let pending = transaction.bindings.createdBinding(key), pending.catalogGeneration == generation { return pending }
        try claimStoredName(E._cofferSchema)
        if !transaction.isWrite {
            let readable = registry.readBinding(key)
            if let readable, readable.catalogGeneration == generation {
                transaction.bindings.cache(readable, for: key)
                return readable
            }
        }
        if transaction.isWrite {
            let binding = try register(E._cofferSchema, in: transaction)
            transaction.bindings.noteCreated(binding, for: key)
            transaction.incomingRelations.forget()  // the new entity may link to others
            return binding
        }
        return try readOnlyBinding(E._cofferSchema, key: key, in: transaction)
    }

    /// Records that `schema`'s type uses its stored entity with this store (see
    /// `SchemaRegistry.claimStoredName`).
    func claimStoredName(_ schema: EntitySchema) throws {
        try registry.claimStoredName(schema, path: path)
    }

    /// A binding that must exist: registers the entity in a write transaction.
    func writableBinding<E: Entity>(for type: E.Type, in transaction: Transaction) throws -> EntityBinding {
        guard let binding = try binding(for: type, in: transaction) else {
            throw CofferError.unknownEntity(name: E._cofferSchema.storedName, path: path, known: [])
        }
        return binding
    }

    /// Reconciles `schema` with the catalog, creating the entity's table, building new
    /// indexes and deleting dropped ones, all inside `transaction`.
    func register(_ schema: EntitySchema, in transaction: Transaction) throws -> EntityBinding {
        guard let catalog = catalogDatabase else {
            throw CofferError.readOnly(path: path, operation: "register \(schema.name)")
        }
        try checkIndexesCanBeBuilt(schema)
        let (stored, reconciled) = try reconcileCatalogEntry(of: schema, catalog: catalog, in: transaction)
        let tableName = Catalog.tableName(reconciled.id)
        let (table, tableExisted) = try transaction.openDatabase(tableName, create: true, "the table of \(schema.name) in \(path)")
        let binding = EntityBinding(store: self, schema: schema, catalog: reconciled, table: table,
                                    createdInTransaction: tableExisted ? 0 : transaction.snapshotId,
                                    catalogGeneration: transaction.catalogGeneration ?? 0)
        try bindIndexes(of: binding, previous: stored, in: transaction)
        try bindTextIndexes(of: binding, previous: stored, in: transaction)
        try bindRelationTables(of: binding, in: transaction)
        try bindSyncTables(of: binding, in: transaction)
        return binding
    }

    /// Opens (creating) the identity tables of a synced entity and the store's outbox. When
    /// the entity has just become synced, the objects already stored get their sync ids and
    /// creation entries in this transaction, so that every object reaches the outbox.
    private func bindSyncTables(of binding: EntityBinding, in transaction: Transaction) throws {
        guard binding.catalog.synced == true else { return }
        let names = SyncIdTables.names(entity: binding.entityId)
        let what = "the sync ids of \(binding.schema.name) in \(path)"
        let (syncIds, existed) = try transaction.openDatabase(names.syncIds, create: true, what)
        let (localIds, _) = try transaction.openDatabase(names.localIds, create: true, what)
        binding.syncTables = SyncIdTables(syncIds: syncIds, localIds: localIds, entityId: binding.entityId, records: binding.table)
        try transaction.createDerivedIdTables()
        try transaction.prepareSyncState()
        if !existed { try transaction.syncStoredObjects(of: binding) }
    }

    /// Refuses annotations no index can serve: full text on a non-text property, an index
    /// on a type without key encoding, a unique index on an array.
    private func checkIndexesCanBeBuilt(_ schema: EntitySchema) throws {
        for property in schema.properties where property.fullText != nil && property.type != .string {
            throw CofferError.schemaMismatch(entity: schema.name, property: property.name,
                                             stored: "a full-text index", declared: "\(property.swiftType), which is not text")
        }
        for property in schema.properties where property.flags.contains(.indexed) && !IndexKey.isIndexable(property.type) {
            throw CofferError.schemaMismatch(entity: schema.name, property: property.name,
                                             stored: "an index", declared: "\(property.swiftType), which cannot be indexed")
        }
        for property in schema.properties where property.flags.contains(.unique) && property.type.elementType != nil {
            throw CofferError.schemaMismatch(entity: schema.name, property: property.name,
                                             stored: "a unique index", declared: "\(property.swiftType), an array (@Index indexes its elements; @Unique is for single values)")
        }
    }

    /// The catalog entry of `schema` as stored before (nil for a new entity) and as
    /// reconciled with the declaration, written to the catalog when it changed (which
    /// advances the catalog generation).
    private func reconcileCatalogEntry(of schema: EntitySchema, catalog: MDB_dbi,
                                       in transaction: Transaction) throws -> (stored: CatalogEntity?, reconciled: CatalogEntity) {
        let stored = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
        var meta = try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction)
            ?? CatalogMeta(formatVersion: Catalog.baseFormatVersion, lastEntityId: 0)
        var reconciled = try SchemaReconciler.reconcile(schema, with: stored) {
            meta.lastEntityId += 1
            return meta.lastEntityId
        }
        // Sync, once on, stays on for every writer of the store.
        reconciled.synced = schema.isSynced || stored?.synced == true ? true : nil
        // A retired property's index stays maintained when it exists with current keys;
        // otherwise it is forgotten, and built again when a build declares the property.
        for (offset, property) in reconciled.properties.enumerated()
            where property.isRetired && PropertyFlags(rawValue: property.flags).contains(.indexed) {
            let name = IndexBinding.databaseName(entity: reconciled.id, property: property.id)
            if try !transaction.databaseExists(name) || !SchemaReconciler.indexIsReusable(stored: property, declared: property.type) {
                reconciled.properties[offset].flags &= ~(PropertyFlags.indexed.rawValue | PropertyFlags.unique.rawValue)
            }
        }
        if stored == nil {
            try Catalog.store(meta, key: Catalog.metaKey, dbi: catalog, in: transaction)
        }
        if !reconciled.describesSameSchema(as: stored) {
            try Catalog.store(reconciled, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
            try advanceCatalogGeneration(catalog, in: transaction)
        }
        return (stored, reconciled)
    }

    /// Opens (building when new) every value index the catalog lists for the entity,
    /// declared by this build or kept for a retired property, after emptying the indexes
    /// of properties that lost theirs.
    private func bindIndexes(of binding: EntityBinding, previous stored: CatalogEntity?, in transaction: Transaction) throws {
        let schema = binding.schema, reconciled = binding.catalog
        try emptyStaleIndexes(previous: stored, current: reconciled, in: transaction)
        for (position, property) in schema.properties.enumerated() {
            // Every index the catalog lists, whether this build declares it or another
            // build does (see `SchemaReconciler`).
            guard let storedProperty = reconciled.property(named: property.storedName),
                  PropertyFlags(rawValue: storedProperty.flags).contains(.indexed) else { continue }
            binding.indexes.append(try openIndex(position: position, property: property.adoptingIndexes(of: storedProperty),
                                                 stored: storedProperty, previous: stored, binding: binding, in: transaction))
        }
        for property in reconciled.properties where property.isRetired && PropertyFlags(rawValue: property.flags).contains(.indexed) {
            let name = IndexBinding.databaseName(entity: reconciled.id, property: property.id)
            let (database, _) = try transaction.openDatabase(name, create: false, "the index \(name) of a retired property")
            let schema = PropertySchema(name: property.name, type: property.type, swiftType: property.swiftType,
                                        flags: PropertyFlags(rawValue: property.flags))
            binding.indexes.append(IndexBinding(position: -1, storedId: property.id, property: schema,
                                                database: database, createdInTransaction: 0))
        }
    }

    /// Opens (building when new or re-tokenized) every full-text index the catalog lists
    /// for the entity, after emptying those of properties that lost `@FullText`.
    private func bindTextIndexes(of binding: EntityBinding, previous stored: CatalogEntity?, in transaction: Transaction) throws {
        let schema = binding.schema, reconciled = binding.catalog
        try emptyStaleTextIndexes(previous: stored, current: reconciled, in: transaction)
        for (position, property) in schema.properties.enumerated() {
            // Every full-text index the catalog lists for a declared property, whichever
            // build declared it.
            guard let storedProperty = reconciled.property(named: property.storedName),
                  let tokenizer = storedProperty.tokenizer.flatMap(TextTokenizer.init(rawValue:)) else { continue }
            let name = TextIndexBinding.databaseName(entity: reconciled.id, property: storedProperty.id)
            let (database, existed) = try transaction.openDatabase(name, create: true, "the full-text index on \(schema.name).\(property.name)")
            let index = TextIndexBinding(position: position, storedId: storedProperty.id, entityName: schema.name, propertyName: property.name,
                                         tokenizer: tokenizer, database: database)
            let before = stored?.properties.first { $0.id == storedProperty.id }
            // Built for the objects already stored when the annotation is new, and again
            // when the tokenizer changed.
            if !existed || before?.tokenizer != tokenizer.rawValue {
                try transaction.buildTextIndex(index, binding: binding)
            }
            binding.textIndexes.append(index)
        }
        // Full-text indexes of properties this build does not declare at all (another
        // build's), maintained from the values each record carries.
        for property in reconciled.properties where property.isRetired {
            guard let tokenizer = property.tokenizer.flatMap(TextTokenizer.init(rawValue:)) else { continue }
            let name = TextIndexBinding.databaseName(entity: reconciled.id, property: property.id)
            let (database, existed) = try transaction.openDatabase(name, create: true, "the full-text index \(name) of a retired property")
            let index = TextIndexBinding(position: -1, storedId: property.id, entityName: schema.name, propertyName: property.name,
                                         tokenizer: tokenizer, database: database)
            if !existed { try transaction.buildTextIndex(index, binding: binding) }
            binding.textIndexes.append(index)
        }
    }

    /// Opens (creating) the two tables of each of the entity's many-to-many relations.
    private func bindRelationTables(of binding: EntityBinding, in transaction: Transaction) throws {
        let schema = binding.schema, reconciled = binding.catalog
        for (position, property) in schema.properties.enumerated() where property.flags.contains(.toMany) {
            guard let storedProperty = reconciled.property(named: property.storedName) else { continue }
            let names = RelationTables.names(entity: reconciled.id, property: storedProperty.id)
            var forward: MDB_dbi = 0, reverse: MDB_dbi = 0
            try transaction.check(mdb_dbi_open(transaction.txn, names.forward, UInt32(MDB_CREATE), &forward), "opening \(names.forward)")
            try transaction.check(mdb_dbi_open(transaction.txn, names.reverse, UInt32(MDB_CREATE), &reverse), "opening \(names.reverse)")
            binding.relationTables[position] = RelationTables(forward: forward, reverse: reverse, owner: schema.storedName, field: storedProperty.id)
        }
    }

    /// Records a change of the catalog's entity entries: other processes, this one's other
    /// bindings and the bindings `transaction` already made bind again before their next use.
    private func advanceCatalogGeneration(_ catalog: MDB_dbi, in transaction: Transaction) throws {
        let generation = try Catalog.generation(dbi: catalog, in: transaction) &+ 1
        try Catalog.setGeneration(generation, dbi: catalog, in: transaction)
        transaction.catalogGeneration = generation
        transaction.changedSchema = true
        transaction.bindings.forgetCached()
        transaction.incomingRelations.forget()
    }

    /// Takes the indexes on `schema`'s property at `position` (value and full-text) out of
    /// the catalog and empties their databases (see `Box.dropIndex(on:)`); every binding of
    /// the entity binds again.
    func dropIndex(of schema: EntitySchema, position: Int, in transaction: Transaction) throws {
        let property = schema.properties[position]
        guard property.flags.isDisjoint(with: [.indexed, .unique, .fullText]), property.fullText == nil else {
            throw CofferError.misuse(.indexStillDeclared(entity: schema.name, property: property.name))
        }
        guard let catalog = catalogDatabase,
              var stored = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction),
              let offset = stored.properties.firstIndex(where: { !$0.isRetired && ($0.name == property.storedName || $0.name == property.renamedFrom) })
        else { return }
        let before = stored.properties[offset]
        let indexed = PropertyFlags(rawValue: before.flags).contains(.indexed)
        guard indexed || before.tokenizer != nil else { return }
        stored.properties[offset].flags &= ~(PropertyFlags.indexed.rawValue | PropertyFlags.unique.rawValue | PropertyFlags.fullText.rawValue)
        stored.properties[offset].keys = nil
        stored.properties[offset].onConflict = nil
        stored.properties[offset].tokenizer = nil
        try Catalog.store(stored, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
        try advanceCatalogGeneration(catalog, in: transaction)
        if indexed {
            try emptyDatabase(IndexBinding.databaseName(entity: stored.id, property: before.id), in: transaction)
        }
        if before.tokenizer != nil {
            try emptyDatabase(TextIndexBinding.databaseName(entity: stored.id, property: before.id), in: transaction)
        }
    }

    /// Opens an index, building it from the table when it is new or its key encoding
    /// changed (a unique index with duplicate values refuses to build).
    private func openIndex(
        position: Int, property: PropertySchema, stored: CatalogProperty, previous: CatalogEntity?,
        binding: EntityBinding, in transaction: Transaction
    ) throws -> IndexBinding {
        let name = IndexBinding.databaseName(entity: binding.entityId, property: stored.id)
        let before = previous?.properties.first { $0.id == stored.id }
        let reusable = before.map { SchemaReconciler.indexIsReusable(stored: $0, declared: property.type) } ?? false
        // The catalog is the truth: an index it lists is maintained by every writer. A
        // database it does not list may exist, emptied (see `emptyDatabase`), and is rebuilt.
        let (database, existed) = try transaction.openDatabase(name, create: true, "the index on \(binding.schema.name).\(property.name)")
        let reuse = reusable && existed
        let index = IndexBinding(position: position, storedId: stored.id, property: property, database: database,
                                 createdInTransaction: reuse ? 0 : transaction.snapshotId)
        if !reuse {
            try transaction.check(mdb_drop(transaction.txn, database, 0), "clearing the index on \(property.name)")
            try buildIndex(index, binding: binding, in: transaction)
        }
        return index
    }

    /// Fills a new index from every stored record. A damaged record or key stops the build
    /// with an error (and the transaction with it): an index is never built partially.
    private func buildIndex(_ index: IndexBinding, binding: EntityBinding, in transaction: Transaction) throws {
        let name = binding.schema.name
        try transaction.withCursor(binding.table, "building the index on \(name).\(index.property.name)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                let id = try IdKey.decode(entry.key, entity: name)
                let record = RecordFields(bytes: entry.value, entity: name, id: id)
                if index.isUnique, let clash = try transaction.matchingIds(index, valueOf: record, table: binding.table, excluding: id).first {
                    throw CofferError.uniqueViolation(
                        entity: name, property: index.property.name,
                        value: try record.describe(index) + " (held by ids \(clash) and \(id); the unique index cannot be built)")
                }
                try index.key(in: record).withUnsafeBytes { try transaction.insertIndexEntries(index, keys: $0, id: id) }
                current = try cursor.next()
            }
        }
    }

    /// Empties the index databases of properties that lost their index.
    private func emptyStaleIndexes(previous: CatalogEntity?, current: CatalogEntity, in transaction: Transaction) throws {
        guard let previous else { return }
        for old in previous.properties where PropertyFlags(rawValue: old.flags).contains(.indexed) {
            let kept = current.properties.first { $0.id == old.id }.map { PropertyFlags(rawValue: $0.flags).contains(.indexed) } ?? false
            guard !kept else { continue }
            try emptyDatabase(IndexBinding.databaseName(entity: current.id, property: old.id), in: transaction)
        }
    }

    /// Empties the named database, if it exists, in `transaction`, and keeps it.
    ///
    /// Coffer never deletes a database it may have a handle to: LMDB's `mdb_drop(…, 1)`
    /// closes the handle in this process while other transactions may use it, and other
    /// processes keep theirs; `mdb_dbi_open` by name then hands back that stale handle,
    /// whose writes use the deleted database's freed pages. An empty database costs one
    /// entry in LMDB's main table; the catalog, not the database's existence, says whether
    /// an index is in use (and a build that needs it again rebuilds it).
    private func emptyDatabase(_ name: String, in transaction: Transaction) throws {
        var database: MDB_dbi = 0
        let rc = mdb_dbi_open(transaction.txn, name, 0, &database)
        if rc == MDB_NOTFOUND { return }
        try transaction.check(rc, "opening the dropped index \(name)")
        transaction.pendingText.discard(database)
        try transaction.check(mdb_drop(transaction.txn, database, 0), "emptying the dropped index \(name)")
    }

    /// Deletes a database of an earlier layout, which no current code keeps open (its handle,
    /// opened here, is closed by `mdb_drop`; no binding or `databases` entry holds one).
    private func deleteLegacyDatabase(_ name: String, in transaction: Transaction) throws {
        var database: MDB_dbi = 0
        let rc = mdb_dbi_open(transaction.txn, name, 0, &database)
        if rc == MDB_NOTFOUND { return }
        try transaction.check(rc, "opening the legacy index \(name)")
        try transaction.check(mdb_drop(transaction.txn, database, 1), "deleting the legacy index \(name)")
    }

    /// Empties the full-text indexes of properties that lost `@FullText` or were removed.
    private func emptyStaleTextIndexes(previous: CatalogEntity?, current: CatalogEntity, in transaction: Transaction) throws {
        guard let previous else { return }
        for old in previous.properties where old.tokenizer != nil {
            guard current.properties.first(where: { $0.id == old.id })?.tokenizer == nil else { continue }
            try emptyDatabase(TextIndexBinding.databaseName(entity: current.id, property: old.id), in: transaction)
        }
        // Indexes of the earlier layout are replaced by new ones (built by `register`).
        for old in previous.properties where old.tokenizer != nil {
            try deleteLegacyDatabase(TextIndexBinding.legacyDatabaseName(entity: current.id, property: old.id), in: transaction)
        }
    }

    /// A binding built from the catalog in a read transaction, without changing anything.
    private func readOnlyBinding(_ schema: EntitySchema, key: ObjectIdentifier, in transaction: Transaction) throws -> EntityBinding? {
        guard let binding = try makeCatalogBinding(schema, in: transaction) else { return nil }
        // Kept for later reads until this process registers the entity for writing.
        registry.keepReadBinding(binding, for: key)
        transaction.bindings.cache(binding, for: key)
        return binding
    }

    /// A binding of `schema` built from the catalog in `transaction`, without changing
    /// anything or keeping it (also for schemas read from the catalog, without a type: the
    /// selector queries of the tool, and imports, which write through it).
    func makeCatalogBinding(_ schema: EntitySchema, in transaction: Transaction) throws -> EntityBinding? {
        guard let catalog = catalogDatabase,
              let stored = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
        else { return nil }
        // A table another process created after this store last opened tables cannot be
        // handed to a running read: the outermost read opens it and runs again.
        let table = try listedDatabase(Catalog.tableName(stored.id), in: transaction, schema.name)
        try SchemaReconciler.checkReadable(schema, from: stored)
        let binding = EntityBinding(store: self, schema: schema, catalog: stored, table: table, createdInTransaction: 0,
                                    catalogGeneration: transaction.catalogGeneration ?? 0)
        for (position, property) in schema.properties.enumerated() {
            // Every index the catalog lists (whichever build declared it); one of another key
            // encoding would answer wrongly: scan instead.
            guard let storedProperty = stored.anyProperty(named: property.storedName)
                    ?? property.renamedFrom.flatMap({ stored.anyProperty(named: $0) }),
                  PropertyFlags(rawValue: storedProperty.flags).contains(.indexed),
                  IndexKey.isIndexable(property.type),
                  SchemaReconciler.indexIsReusable(stored: storedProperty, declared: property.type),
                  let database = try storedDatabase(IndexBinding.databaseName(entity: stored.id, property: storedProperty.id))
                    ?? openInWrite(IndexBinding.databaseName(entity: stored.id, property: storedProperty.id), in: transaction)
            else { continue }
            binding.indexes.append(IndexBinding(position: position, storedId: storedProperty.id,
                                                property: property.adoptingIndexes(of: storedProperty),
                                                database: database, createdInTransaction: 0))
        }
        for (position, property) in schema.properties.enumerated() {
            // An index built with another tokenizer would answer wrongly: scan instead.
            guard let storedProperty = stored.anyProperty(named: property.storedName),
                  let tokenizer = storedProperty.tokenizer.flatMap(TextTokenizer.init(rawValue:)),
                  property.fullText == nil || property.fullText == tokenizer,
                  let database = try storedDatabase(TextIndexBinding.databaseName(entity: stored.id, property: storedProperty.id))
                    ?? openInWrite(TextIndexBinding.databaseName(entity: stored.id, property: storedProperty.id), in: transaction)
            else { continue }
            binding.textIndexes.append(TextIndexBinding(position: position, storedId: storedProperty.id, entityName: schema.name, propertyName: property.name,
                                                        tokenizer: tokenizer, database: database))
        }
        for (position, property) in schema.properties.enumerated() where property.flags.contains(.toMany) {
            guard let storedProperty = stored.anyProperty(named: property.storedName) else { continue }
            let names = RelationTables.names(entity: stored.id, property: storedProperty.id)
            // A relation the catalog lists has its tables (registration creates both): never
            // read as "no relations". One this build added and never stored has none yet.
            guard PropertyFlags(rawValue: storedProperty.flags).contains(.toMany) else { continue }
            let what = "the relation \(schema.name).\(property.name)"
            binding.relationTables[position] = RelationTables(forward: try listedDatabase(names.forward, in: transaction, what),
                                                              reverse: try listedDatabase(names.reverse, in: transaction, what),
                                                              owner: schema.storedName, field: storedProperty.id)
        }
        if stored.synced == true {
            // A synced entity in the catalog has its identity tables (registration creates
            // them with the flag): never read as "no sync ids".
            let names = SyncIdTables.names(entity: stored.id)
            let what = "the sync ids of \(schema.name)"
            binding.syncTables = SyncIdTables(syncIds: try listedDatabase(names.syncIds, in: transaction, what),
                                              localIds: try listedDatabase(names.localIds, in: transaction, what),
                                              entityId: stored.id, records: binding.table)
        }
        return binding
    }

    /// The handle of a database the catalog lists (a table, a relation's tables), in any
    /// transaction. A read transaction cannot open one that another process created after
    /// this store last opened its tables: it throws, and marks the read to open them and
    /// run again (see `performNewRead`), so such a database is never read as empty.
    func listedDatabase(_ name: String, in transaction: Transaction, _ what: @autoclosure () -> String) throws -> MDB_dbi {
        if let handle = try storedDatabase(name) ?? openInWrite(name, in: transaction) { return handle }
        guard !transaction.isWrite else {
            throw CofferError.damagedStore(part: .catalog, reason: "\(what()) is listed in the schema catalog of \(path) but its database \(name) is missing")
        }
        transaction.needsNewTables = true
        throw CofferError.createdByOtherProcess(what: what(), path: path)
    }

    /// An existing database's handle opened inside a write transaction (kept by LMDB when the
    /// transaction commits, closed when it aborts), or nil in a read transaction, which
    /// cannot open handles beside others.
    func openInWrite(_ name: String, in transaction: Transaction) throws -> MDB_dbi? {
        guard transaction.isWrite else { return nil }
        var database: MDB_dbi = 0
        let rc = mdb_dbi_open(transaction.txn, name, 0, &database)
        if rc == MDB_NOTFOUND { return nil }
        try transaction.check(rc, "opening \(name) in \(path)")
        return database
    }
}

extension Catalog {
    /// Every entity entry of the catalog, in name order.
    /// Every entity entry of the catalog, in name order. A damaged entry throws, unless
    /// `skippingDamaged` (opening tables at start: the damaged entity then fails clearly
    /// when used, and `verify()` reports it, while the others stay usable).
    static func entities(dbi: MDB_dbi, in transaction: Transaction, skippingDamaged: Bool = false) throws -> [CatalogEntity] {
        let prefix = Array("entity/".utf8)
        var entities: [CatalogEntity] = []
        try transaction.withCursor(dbi, "reading the schema catalog") { cursor in
            var current = try cursor.seek(prefix)
            while let entry = current, entry.key.starts(with: prefix) {
                do {
                    entities.append(try decodeEntity(entry.value, key: entry.key))
                } catch where skippingDamaged {
                }
                current = try cursor.next()
            }
        }
        return entities
    }

    /// Decodes and validates one catalog entity entry.
    static func decodeEntity(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws -> CatalogEntity {
        let entity: CatalogEntity
        do {
            entity = try JSONDecoder().decode(CatalogEntity.self, from: Data(bytes))
        } catch {
            throw CofferError.damagedStore(part: .catalog, reason: "the entry \(String(decoding: key, as: UTF8.self)) cannot be read: \(error)")
        }
        try entity.validate()
        return entity
    }
}
