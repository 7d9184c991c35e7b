import CLMDB
import Foundation

extension Store {
    /// Opens the catalog and every entity table it lists, in a transaction that commits,
    /// so the handles are valid in every later transaction (LMDB closes handles opened in a
    /// transaction that is reset or aborted).
    func openExistingTables() throws {
        var begun: OpaquePointer?
        let flags = options.readOnly ? UInt32(MDB_RDONLY) : 0
        try LMDB.check(mdb_txn_begin(env, nil, flags, &begun), "cannot open the store at \(path)")
        guard let txn = begun else { return }
        let transaction = Transaction(store: self, txn: txn, isWrite: !options.readOnly)
        do {
            var catalog: MDB_dbi = 0
            let rc = mdb_dbi_open(txn, Catalog.databaseName, options.readOnly ? 0 : UInt32(MDB_CREATE), &catalog)
            if rc == MDB_NOTFOUND {
                // A read-only store that has never been written: it holds no entities.
                mdb_txn_abort(txn)
                return
            }
            try LMDB.check(rc, "cannot open the schema catalog of \(path)")
            if let meta = try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction) {
                guard meta.formatVersion <= Catalog.formatVersion else {
                    throw CofferError.storage(
                        code: MDB_VERSION_MISMATCH,
                        message: "the store at \(path) has format version \(meta.formatVersion); this Coffer reads up to \(Catalog.formatVersion)")
                }
            } else if !options.readOnly {
                try Catalog.store(CatalogMeta(formatVersion: Catalog.formatVersion, lastEntityId: 0),
                                  key: Catalog.metaKey, dbi: catalog, in: transaction)
            }
            var opened: [UInt32: MDB_dbi] = [:]
            for entity in try Catalog.entities(dbi: catalog, in: transaction) {
                var table: MDB_dbi = 0
                let rc = mdb_dbi_open(txn, Catalog.tableName(entity.id), 0, &table)
                if rc == MDB_NOTFOUND { continue }
                try LMDB.check(rc, "cannot open the table of \(entity.name) in \(path)")
                opened[entity.id] = table
            }
            try LMDB.check(mdb_txn_commit(txn), "cannot open the store at \(path)")
            catalogDatabase = catalog
            tables = opened
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// Prepares `E`'s table before a top-level read, so reads on a fresh store or a new
    /// entity need no catalog look-ups of their own.
    func prepare<E: Entity>(_ type: E.Type) throws {
        stateLock.lock()
        let known = bindings[ObjectIdentifier(type)] != nil
        stateLock.unlock()
        guard !known, !options.readOnly, Transaction.current(for: self) == nil else { return }
        try performWrite { transaction in _ = try binding(for: type, in: transaction) }
    }

    /// The binding of `E` as `transaction` sees it, or nil when the entity has no table in
    /// that snapshot (nothing was ever stored, or it was created after the snapshot).
    func binding<E: Entity>(for type: E.Type, in transaction: Transaction) throws -> EntityBinding? {
        let key = ObjectIdentifier(type)
        stateLock.lock()
        let cached = bindings[key]
        stateLock.unlock()
        if let cached {
            return cached.isVisible(in: transaction) ? cached : nil
        }
        if let pending = transaction.newBindings[key] { return pending }
        if transaction.isWrite {
            let binding = try register(E.cofferSchema, in: transaction)
            transaction.newBindings[key] = binding
            return binding
        }
        return try readOnlyBinding(E.cofferSchema, key: key, in: transaction)
    }

    /// A binding that must exist: registers the entity in a write transaction.
    func writableBinding<E: Entity>(for type: E.Type, in transaction: Transaction) throws -> EntityBinding {
        guard let binding = try binding(for: type, in: transaction) else {
            throw CofferError.invalidOperation(message: "\(E.cofferSchema.name) has no table in the store at \(path)")
        }
        return binding
    }

    /// Reconciles `schema` with the catalog, creating the entity's table if needed.
    private func register(_ schema: EntitySchema, in transaction: Transaction) throws -> EntityBinding {
        guard let catalog = catalogDatabase else {
            throw CofferError.readOnly(path: path, operation: "register \(schema.name)")
        }
        let stored = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
        var meta = try Catalog.load(CatalogMeta.self, key: Catalog.metaKey, dbi: catalog, in: transaction)
            ?? CatalogMeta(formatVersion: Catalog.formatVersion, lastEntityId: 0)
        let reconciled = try SchemaReconciler.reconcile(schema, with: stored) {
            meta.lastEntityId += 1
            return meta.lastEntityId
        }
        if stored == nil {
            try Catalog.store(meta, key: Catalog.metaKey, dbi: catalog, in: transaction)
        }
        if reconciled != stored {
            try Catalog.store(reconciled, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
        }
        var table: MDB_dbi = 0
        try transaction.check(
            mdb_dbi_open(transaction.txn, Catalog.tableName(reconciled.id), UInt32(MDB_CREATE), &table),
            "cannot open the table of \(schema.name) in \(path)")
        stateLock.lock()
        let existed = tables[reconciled.id] != nil
        stateLock.unlock()
        return EntityBinding(schema: schema, catalog: reconciled, table: table,
                             createdInTransaction: existed ? 0 : transaction.snapshotId)
    }

    /// A binding built from the catalog in a read transaction, without changing anything.
    private func readOnlyBinding(_ schema: EntitySchema, key: ObjectIdentifier, in transaction: Transaction) throws -> EntityBinding? {
        guard let catalog = catalogDatabase,
              let stored = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(schema.storedName), dbi: catalog, in: transaction)
        else { return nil }
        stateLock.lock()
        let table = tables[stored.id]
        stateLock.unlock()
        guard let table else { return nil }
        try SchemaReconciler.checkReadable(schema, from: stored)
        let binding = EntityBinding(schema: schema, catalog: stored, table: table, createdInTransaction: 0)
        if options.readOnly {
            // Nothing in this process can change a read-only store's catalog: keep it.
            stateLock.lock()
            bindings[key] = binding
            stateLock.unlock()
        }
        return binding
    }

    /// Makes the bindings a committed transaction created visible to everyone.
    func adoptBindings(of transaction: Transaction) {
        guard !transaction.newBindings.isEmpty else { return }
        stateLock.lock()
        for (key, binding) in transaction.newBindings {
            bindings[key] = binding
            tables[binding.entityId] = binding.table
        }
        stateLock.unlock()
    }
}

extension Catalog {
    /// Every entity entry of the catalog, in name order.
    static func entities(dbi: MDB_dbi, in transaction: Transaction) throws -> [CatalogEntity] {
        var cursor: OpaquePointer?
        try transaction.check(mdb_cursor_open(transaction.txn, dbi, &cursor), "opening the schema catalog")
        defer { mdb_cursor_close(cursor) }
        let prefix = Array("entity/".utf8)
        var entities: [CatalogEntity] = []
        var prefixCopy = prefix
        try prefixCopy.withUnsafeMutableBytes { prefixRaw in
            var key = MDB_val(UnsafeRawBufferPointer(prefixRaw))
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            while rc == 0 {
                guard key.bytes.starts(with: prefix) else { break }
                do {
                    entities.append(try JSONDecoder().decode(CatalogEntity.self, from: Data(value.bytes)))
                } catch {
                    throw CofferError.storage(
                        code: MDB_CORRUPTED,
                        message: "the schema catalog entry \(String(decoding: key.bytes, as: UTF8.self)) cannot be read: \(error)")
                }
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != 0 && rc != MDB_NOTFOUND { try transaction.check(rc, "reading the schema catalog") }
        }
        return entities
    }
}
