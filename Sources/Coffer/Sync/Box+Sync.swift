import Foundation

/// The global identity of synced objects. A `@Sync` entity's object gets a sync id (a
/// UUIDv7) at its first put, in the same transaction; it keeps it until it is removed. Local
/// ids stay local: other replicas know the object by its sync id only.
extension Box {
    /// The sync id of the object `id`, or nil when there is no such object or its entity is
    /// not synced.
    ///
    /// ```swift
    /// let tasks = store.box(for: Task.self)   // @Sync struct Task: Entity
    /// let id = try tasks.put(Task(title: "Write"))
    /// let global = try tasks.syncId(of: id)!  // e.g. 019A7C3E-...; the same on every replica
    /// ```
    public func syncId(of id: Id) throws -> UUID? {
        try reading(empty: nil) { transaction, binding in
            guard let tables = binding.syncTables else { return nil }
            return try transaction.syncId(of: id, in: tables)
        }
    }

    /// The local id of the object whose sync id is `syncId`, or nil when this replica holds no
    /// such object (not synced yet, removed, or another entity's).
    ///
    /// ```swift
    /// if let id = try tasks.id(forSyncId: global), let task = try tasks.get(id) { print(task.title) }
    /// ```
    public func id(forSyncId syncId: UUID) throws -> Id? {
        try reading(empty: nil) { transaction, binding in
            guard let tables = binding.syncTables else { return nil }
            return try transaction.localId(of: syncId, in: tables)
        }
    }

    /// Stores `entity` as the object another replica knows by `syncId`: an update of the
    /// local object with that sync id, or an insert that takes it. Used while remote changes
    /// are applied (``Store/applyRemoteChanges(_:)``); sets `entity.id` to the local id.
    /// Links pulled before the object arrived (pending links to `syncId`) are set in the
    /// same transaction.
    ///
    /// ```swift
    /// try store.applyRemoteChanges {
    ///     var task = Task(title: "From the server")
    ///     try tasks.put(&task, syncId: serverId)
    /// }
    /// ```
    @_spi(CofferSync)
    @discardableResult
    public func put(_ entity: inout E, syncId: UUID) throws -> Id {
        let original = entity
        do {
            return try writing { transaction, binding in
                guard let tables = binding.syncTables else {
                    throw CofferError.misuse(.notSynced(entity: binding.schema.name))
                }
                entity = original
                entity.id = try transaction.localId(of: syncId, in: tables) ?? 0
                let isInsert = entity.id == 0
                transaction.sync.arrivingSyncId = isInsert ? (binding.entityId, syncId) : nil
                defer { transaction.sync.arrivingSyncId = nil }
                let id = try put(&entity, in: transaction, binding: binding)
                // Links pulled before this object arrived point at it now.
                if isInsert { try transaction.resolvePendingLinks(to: syncId, targetId: id) }
                return id
            }
        } catch {
            entity = original
            throw error
        }
    }

    /// Removes the object another replica knows by `syncId`; returns whether this replica
    /// held it.
    ///
    /// ```swift
    /// try store.applyRemoteChanges { _ = try tasks.remove(syncId: deletedId) }
    /// ```
    @_spi(CofferSync)
    @discardableResult
    public func remove(syncId: UUID) throws -> Bool {
        try writing { transaction, binding in
            guard let tables = binding.syncTables else {
                throw CofferError.misuse(.notSynced(entity: binding.schema.name))
            }
            guard let id = try transaction.localId(of: syncId, in: tables) else { return false }
            return try remove(id, in: transaction, binding: binding)
        }
    }
}
