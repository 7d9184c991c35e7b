import CLMDB

extension Store {
    /// Every `ToOne` in the catalog whose target is the entity stored as `target`, as
    /// `transaction` sees the catalog. Cached per catalog generation.
    func incomingLinks(to target: String, in transaction: Transaction) throws -> IncomingRelations {
        // Bulk removals ask once per object: answer from the transaction after the first
        // time, and from the last answer without hashing the name when it is asked again.
        if let known = transaction.incomingRelations.relations(to: target) { return known }
        let relations = try loadIncomingLinks(to: target, in: transaction)
        transaction.incomingRelations.remember(relations, to: target)
        return relations
    }

    private func loadIncomingLinks(to target: String, in transaction: Transaction) throws -> IncomingRelations {
        let (cached, generation) = registry.cachedIncomingLinks(to: target)
        // A registration inside this transaction is not in the cache yet.
        if let cached, transaction.bindings.created.isEmpty { return cached }
        guard let catalog = catalogDatabase else { return IncomingRelations() }
        var links = IncomingRelations()
        var openedHere = false
        for entity in try Catalog.entities(dbi: catalog, in: transaction) {
            for property in entity.properties where property.target == target && PropertyFlags(rawValue: property.flags).contains(.toMany) {
                let names = RelationTables.names(entity: entity.id, property: property.id)
                if let forward = try database(names.forward, in: transaction, openedHere: &openedHere), let reverse = try database(names.reverse, in: transaction, openedHere: &openedHere) {
                    links.manyToMany.append(RelationTables(forward: forward, reverse: reverse, owner: entity.name, field: property.id))
                }
            }
            for property in entity.properties where property.target == target && !PropertyFlags(rawValue: property.flags).contains(.toMany) {
                guard let table = try database(Catalog.tableName(entity.id), in: transaction, openedHere: &openedHere),
                      let index = try database(IndexBinding.databaseName(entity: entity.id, property: property.id), in: transaction, openedHere: &openedHere)
                else { continue }
                let schema = PropertySchema(name: property.name, type: .uint64, swiftType: property.swiftType, flags: [.indexed, .relation])
                links.toOne.append(IncomingLink(ownerName: entity.name, ownerTable: table,
                                          index: IndexBinding(position: -1, storedId: property.id, property: schema,
                                                              database: index, createdInTransaction: 0)))
            }
        }
        // Handles this transaction opened die with it if it aborts: not kept beyond it.
        if transaction.bindings.created.isEmpty && !openedHere {
            registry.cacheIncomingLinks(links, to: target, generation: generation)
        }
        return links
    }

    /// A database handle by name: opened by the store, created by `transaction`, or (in a
    /// write) created by another process since this store opened its tables.
    /// `openedHere` is set for a handle opened by `transaction` (valid only if it commits).
    private func database(_ name: String, in transaction: Transaction, openedHere: inout Bool) throws -> MDB_dbi? {
        if let known = storedDatabase(name) { return known }
        for binding in transaction.bindings.created.values {
            if Catalog.tableName(binding.entityId) == name { return binding.table }
            for (position, tables) in binding.relationTables {
                guard let stored = binding.catalog.anyProperty(named: binding.schema.properties[position].storedName) else { continue }
                let names = RelationTables.names(entity: binding.entityId, property: stored.id)
                if names.forward == name { return tables.forward }
                if names.reverse == name { return tables.reverse }
            }
            for index in binding.indexes where IndexBinding.databaseName(entity: binding.entityId, property: index.storedId) == name {
                return index.database
            }
        }
        let opened = try openInWrite(name, in: transaction)
        if opened != nil { openedHere = true }
        return opened
    }
}

extension Transaction {
    /// Clears every `ToOne` that points at object `id` of `target` (rewriting the owners'
    /// records without the link and moving their index entries to nil).
    func clearLinks(to id: Id, of target: EntityBinding) throws {
        guard try !store.incomingLinks(to: target.schema.storedName, in: self).toOne.isEmpty,
              let key = IndexKey.encode(.unsigned(id), type: .uint64) else { return }
        try clearLinks(matching: key, of: target, removingAll: false)
    }

    /// Clears every `ToOne` that points at any object of `target` (before removing them all).
    /// Owners of `target`'s own entity (a link to its own kind) are removed too: their
    /// rewrites are no change for sync.
    func clearAllLinks(of target: EntityBinding) throws {
        try clearLinks(matching: [IndexKey.valueTag], of: target, removingAll: true)
    }

    private func clearLinks(matching prefix: [UInt8], of target: EntityBinding, removingAll: Bool) throws {
        let links = try store.incomingLinks(to: target.schema.storedName, in: self).toOne
        for link in links {
            let ownersAreRemoved = removingAll && link.ownerName == target.schema.storedName
            for (owner, key) in try indexEntries(link.index, prefix: prefix, entity: link.ownerName) {
                guard let record = try self.record(owner, table: link.ownerTable, entity: link.ownerName) else {
                    throw CofferError.damagedStore(part: .index(entity: link.ownerName, property: link.index.property.name),
                                                   reason: "it lists the id \(owner), which is not stored")
                }
                let rewritten = try RecordFields(bytes: record, entity: link.ownerName, id: owner).removing(link.index.storedId)
                try rewritten.withUnsafeBytes { bytes in
                    try storeRewrittenRecord(bytes, id: owner, table: link.ownerTable, entity: link.ownerName,
                                             index: link.index, from: key, to: [IndexKey.nilTag], isBeingRemoved: ownersAreRemoved,
                                             "clearing \(link.ownerName).\(link.index.property.name) of \(owner)")
                }
            }
        }
    }
}

extension Transaction {
    /// The (id, value key) pairs of index entries whose key starts with `prefix`.
    func indexEntries(_ index: IndexBinding, prefix: [UInt8], entity: String) throws -> [(Id, [UInt8])] {
        var entries: [(Id, [UInt8])] = []
        try forEachIndexEntry(index, prefix: prefix, entity: entity) { entry in
            entries.append((entry.id, Array(entry.value)))
            return true
        }
        return entries
    }
}

extension RecordFields {
    /// The record's bytes without the field of stored property `id`, in the current format;
    /// every other field, known to the running build or not, keeps its kind and payload.
    func removing(_ id: UInt16) throws -> [UInt8] {
        let buffer = RecordBuffer(capacity: bytes.count + 16)
        var noPositions: UInt16 = 0  // appendRaw names fields by stored id, not by position
        return try withUnsafePointer(to: &noPositions) { storedIds in
            var writer = RecordWriter(buffer: buffer, storedIds: storedIds)
            try forEach { fieldId, field in
                if fieldId != id { writer.appendRaw(fieldId, field) }
            }
            buffer.adopt(writer)
            return Array(writer.bytes)
        }
    }
}

extension Transaction {
    /// Removes the relation rows of a removed object: those it owns and those pointing at it.
    func removeManyToMany(of id: Id, binding: EntityBinding) throws {
        if !binding.relationTables.isEmpty {
            for tables in binding.relationTables.values { try removeRelations(tables, owner: id) }
        }
        for tables in try store.incomingLinks(to: binding.schema.storedName, in: self).manyToMany {
            try removeRelations(tables, target: id)
        }
    }

    /// Empties every relation table owned by, or pointing at, an entity whose objects are all removed.
    func dropManyToMany(of binding: EntityBinding) throws {
        let incoming = try store.incomingLinks(to: binding.schema.storedName, in: self).manyToMany
        for tables in incoming where tables.owner != binding.schema.storedName {
            for owner in try relationOwners(tables) {
                changes.recordPut(tables.owner, owner, isInsert: false)
                try recordSyncedRewrite(owner, entity: tables.owner, field: tables.field)
            }
        }
        for tables in Array(binding.relationTables.values) + incoming {
            try check(mdb_drop(txn, tables.forward, 0), "removing relations of \(binding.schema.name)")
            try check(mdb_drop(txn, tables.reverse, 0), "removing relations of \(binding.schema.name)")
        }
    }
}
