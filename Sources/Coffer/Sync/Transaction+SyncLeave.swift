import Foundation

/// Objects leaving a replica's scope (a subscription ended, or the server moved them out of
/// what the replica may or asked to see): the server still has them, so the links into them
/// are kept as pending links instead of being lost with the object.
extension Transaction {
    /// A link a synced object holds into an object that is about to leave.
    struct SyncedLink {
        let ownerName: String
        let link: PendingLink
    }

    /// The origin of a write with no replica behind it (plain SQL): the nil UUID.
    private static let plainSQLOrigin = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Every link a synced object holds into the object `id` (stored as `targetName`, sync
    /// id `syncId`): `ToOne` fields and to-many relations. Links from entities that are not
    /// synced are left out: they are cleared with the object, as for a removal (they have no
    /// server copy to come back from).
    func syncedLinks(into id: Id, syncId: UUID, targetName: String) throws -> [SyncedLink] {
        let incoming = try store.incomingLinks(to: targetName, in: self)
        guard !incoming.toOne.isEmpty || !incoming.manyToMany.isEmpty, let catalog = store.catalogDatabase else { return [] }
        var synced: [String: UInt32] = [:]
        for entity in try Catalog.entities(dbi: catalog, in: self) where entity.synced == true { synced[entity.name] = entity.id }
        var links: [SyncedLink] = []
        if let key = IndexKey.encode(.unsigned(id), type: .uint64) {
            for link in incoming.toOne {
                guard let ownerEntityId = synced[link.ownerName] else { continue }
                for (owner, _) in try indexEntries(link.index, prefix: key, entity: link.ownerName) {
                    links.append(SyncedLink(ownerName: link.ownerName,
                                            link: PendingLink(ownerEntityId: ownerEntityId, owner: owner, field: link.index.storedId, target: syncId)))
                }
            }
        }
        for tables in incoming.manyToMany {
            guard let ownerEntityId = synced[tables.owner] else { continue }
            for owner in try relatedIds(tables.reverse, of: id, owner: tables.owner) {
                links.append(SyncedLink(ownerName: tables.owner,
                                        link: PendingLink(ownerEntityId: ownerEntityId, owner: owner, field: tables.field, target: syncId)))
            }
        }
        return links
    }

    /// Parks `link` as pending, so that it is set again when its target arrives again. Parked
    /// at clock 0 with the nil origin: any later local edit of the field wins.
    func park(_ link: PendingLink) throws {
        try addPendingLink(link, clock: 0, origin: Self.plainSQLOrigin)
    }
}
