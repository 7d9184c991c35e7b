import Foundation

extension Store {
    /// Registers the app's merge for the synced entity `E`, replacing the per-field
    /// last-writer-wins for its objects that have local changes the server has not
    /// acknowledged. When a pulled change sets a field such a local change set too, the
    /// change is applied by the usual rules, then `merge` is called (inside the page's
    /// transaction) with the object as the local changes would have it and as the pulled
    /// row would (they differ only in the colliding properties), and those properties. Its result is stored as a local change of the object: recorded
    /// in the outbox at a clock above the page's, so the server takes it and sends it to
    /// every replica. A merge that throws fails the page (nothing of it is applied); one
    /// that returns the stored object unchanged records nothing. It must not read or write
    /// other objects of the store through another transaction.
    ///
    /// ```swift
    /// @Sync struct Note: Entity {
    ///     var id: Id = 0
    ///     var text = ""
    ///     var tags: [String] = []
    /// }
    ///
    /// // Tags added on two devices are both kept; the text stays last-writer-wins.
    /// store.setSyncMerge(for: Note.self) { conflict in
    ///     var merged = conflict.local
    ///     merged.tags = Array(Set(conflict.local.tags).union(conflict.remote.tags)).sorted()
    ///     return merged
    /// }
    /// ```
    public func setSyncMerge<E: Entity>(for type: E.Type, _ merge: @escaping @Sendable (SyncMergeConflict<E>) throws -> E) {
        syncMerges.set({ transaction, id, local, remote, properties, relations in
            let store = transaction.store
            let binding = try store.writableBinding(for: E.self, in: transaction)
            var localReader = try RecordReader(bytes: local, layout: binding, id: id)
            var remoteReader = try RecordReader(bytes: remote, layout: binding, id: id)
            // Each view's to-many relations hold that side's targets (see ToMany.cofferManyToMany).
            defer { transaction.sync.mergeRelationViews = nil }
            transaction.sync.mergeRelationViews = relations.local
            let localObject = try E._cofferDecode(id: id, from: &localReader)
            transaction.sync.mergeRelationViews = relations.remote
            let remoteObject = try E._cofferDecode(id: id, from: &remoteReader)
            transaction.sync.mergeRelationViews = nil
            let conflict = SyncMergeConflict(local: localObject, remote: remoteObject, properties: properties)
            var merged = try merge(conflict)
            merged.id = id
            try store.box(for: E.self).put(&merged)
        }, for: E._cofferSchema.storedName)
    }

    /// Removes the merge registered for `E`: its pulled changes follow per-field
    /// last-writer-wins again.
    ///
    /// ```swift
    /// store.removeSyncMerge(for: Note.self)
    /// ```
    public func removeSyncMerge<E: Entity>(for type: E.Type) {
        syncMerges.set(nil, for: E._cofferSchema.storedName)
    }

    /// Whether an app's merge is registered for the entity with the stored name `entity`
    /// (a replica pulls such an entity before pushing its changes).
    ///
    /// ```swift
    /// if store.hasSyncMerge(entity: "Note") { try await pull("Note") }
    /// ```
    @_spi(CofferSync)
    public func hasSyncMerge(entity: String) -> Bool {
        syncMerges.merge(for: entity) != nil
    }
}
