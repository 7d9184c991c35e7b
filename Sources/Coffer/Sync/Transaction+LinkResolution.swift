import Foundation

/// Setting the links that waited for an object that has just arrived (see
/// `Transaction+PendingLinks`), in the transaction that brought it.
extension Transaction {
    /// Sets every link waiting for `target`, now stored as `targetId`: a `ToOne` owner field
    /// that still holds no link is rewritten through the write path (indexes and observers
    /// see it; no outbox entry, as the server holds that link already); a to-many relation
    /// gains the pair. Owners removed since are skipped.
    func resolvePendingLinks(to target: UUID, targetId: Id) throws {
        let links = try takePendingLinks(to: target)
        guard !links.isEmpty, let catalog = store.catalogDatabase else { return }
        let entities = try Catalog.entities(dbi: catalog, in: self)
        let wasApplying = sync.isApplyingRemote
        sync.isApplyingRemote = true
        defer { sync.isApplyingRemote = wasApplying }
        var bindings: [UInt32: EntityBinding] = [:]
        for link in links {
            guard let owner = entities.first(where: { $0.id == link.ownerEntityId }) else { continue }
            let binding: EntityBinding
            if let known = bindings[owner.id] {
                binding = known
            } else {
                guard let made = try store.makeCatalogBinding(EntitySchema(catalog: owner, includingRetired: true), in: self) else { continue }
                bindings[owner.id] = made
                binding = made
            }
            guard let position = binding.schema.properties.indices.first(where: { binding.storedIds[$0] == link.field }) else { continue }
            if binding.schema.properties[position].flags.contains(.toMany) {
                guard let tables = binding.relationTables[position],
                      try record(link.owner, table: binding.table, entity: owner.name) != nil else { continue }
                if try !relatedIds(tables.forward, of: link.owner, owner: tables.owner).contains(targetId) {
                    try addRelation(tables, owner: link.owner, target: targetId)
                }
                continue
            }
            try setLink(of: link.owner, position: position, to: targetId, binding: binding)
        }
    }

    /// Rewrites the record of `owner` with the link field at `position` set to `targetId`,
    /// unless it is gone or its field holds a link already (set since the link was left
    /// pending).
    private func setLink(of owner: Id, position: Int, to targetId: Id, binding: EntityBinding) throws {
        guard let stored = try record(owner, table: binding.table, entity: binding.schema.name) else { return }
        let bytes = Array(stored)  // copied: the write below moves pages
        let field = binding.storedIds[position]
        try bytes.withUnsafeBytes { raw in
            let previous = RecordFields(bytes: raw, layout: binding, id: owner)
            if let current = try previous.field(field), FieldValue.unsigned(current.kind, current.payload).map({ $0 != 0 }) ?? true { return }
            var kept: [(UInt16, RecordFields.Field)] = []
            try previous.forEach { id, value in
                if id != field, binding.declares(id), !kept.contains(where: { $0.0 == id }) { kept.append((id, value)) }
            }
            var id = owner
            try storeObject(id: &id, binding: binding) { writer, _ in
                for (id, value) in kept { writer.appendRaw(id, value) }
                writer.writeUnsigned(position, targetId)
            }
        }
    }
}
