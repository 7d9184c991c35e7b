import Foundation

/// The replica's identity toward sync servers (for the CofferSync module): its client id and
/// the last mutation id it handed out.
extension Store {
    /// The replica's id toward sync servers, which count the mutation ids they applied per
    /// client id. Taken at the first call and kept in the catalog with the device and inode
    /// of the store's data file; when those differ from the file's (the directory was copied,
    /// or restored from a backup), a new id is taken, so that a copy never sends mids the
    /// server counts as the original's.
    ///
    /// ```swift
    /// let client = try store.syncClientId()   // the same UUID at every call and reopen
    /// let reply = try await transport.push(client: client, changes: try store.takeSyncChanges(limit: 500))
    /// ```
    ///
    /// - Throws: ``CofferError/readOnly(path:operation:)`` when an id must be taken in a
    ///   read-only store; ``CofferError/storage(code:message:)`` when the data file cannot be
    ///   examined; ``CofferError/damagedStore(part:reason:)`` (`.sync`) for a damaged record.
    @_spi(CofferSync)
    public func syncClientId() throws -> UUID {
        let file = try ReplicaIdentity.dataFile(of: path)
        let stored = try performRead { transaction in try transaction.storedReplicaIdentity() }
        if let stored, stored.belongs(to: file) { return stored.clientId }
        return try performWrite { transaction in try transaction.replicaClientId(file: file, renewing: false) }
    }

    /// Takes a new client id and records it (the old one is never used again). The engine
    /// calls it when the server's last mutation id for this client is above
    /// ``syncLastMutationId()``: the store was restored from an older copy and would send
    /// mids the server skips.
    ///
    /// ```swift
    /// if try await transport.lastMutationId(client: client) > (try store.syncLastMutationId()) {
    ///     client = try store.renewSyncClientId()
    /// }
    /// ```
    @_spi(CofferSync)
    public func renewSyncClientId() throws -> UUID {
        let file = try ReplicaIdentity.dataFile(of: path)
        return try performWrite { transaction in try transaction.replicaClientId(file: file, renewing: true) }
    }

    /// The highest mutation id the outbox has handed out (0 before the first synced change).
    ///
    /// ```swift
    /// let lastMid = try store.syncLastMutationId()   // e.g. 42 after 42 recorded changes
    /// ```
    @_spi(CofferSync)
    public func syncLastMutationId() throws -> UInt64 {
        try performRead { transaction in
            guard let catalog = catalogDatabase,
                  let bytes = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: transaction) else { return 0 }
            return try SyncState(decoding: bytes).lastMid
        }
    }
}
