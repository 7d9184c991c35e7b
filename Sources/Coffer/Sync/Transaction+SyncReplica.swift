import Foundation

/// The replica identity in the catalog (see ``ReplicaIdentity``): read in any transaction,
/// taken or renewed in a write transaction.
extension Transaction {
    /// The recorded identity, or nil before the first one was taken.
    func storedReplicaIdentity() throws -> ReplicaIdentity? {
        guard let catalog = store.catalogDatabase,
              let bytes = try Catalog.raw(key: ReplicaIdentity.catalogKey, dbi: catalog, in: self) else { return nil }
        return try ReplicaIdentity(decoding: bytes)
    }

    /// The replica's client id for the data file `file`: the recorded one when it was taken
    /// for that file, else (none yet, a copied or restored store, or `renewing`) a new random
    /// one, recorded in this write transaction.
    func replicaClientId(file: (device: UInt64, inode: UInt64), renewing: Bool) throws -> UUID {
        if !renewing, let stored = try storedReplicaIdentity(), stored.belongs(to: file) { return stored.clientId }
        guard isWrite, let catalog = store.catalogDatabase else {
            throw CofferError.readOnly(path: store.path, operation: "take a sync client id")
        }
        let identity = ReplicaIdentity(clientId: UUID(), device: file.device, inode: file.inode)
        try identity.encoded().withUnsafeBytes { try Catalog.putRaw(key: ReplicaIdentity.catalogKey, value: $0, dbi: catalog, in: self) }
        return identity.clientId
    }
}
