/// The synced entities as the store's catalog describes them, for code that has no Swift
/// types (the `coffer sync` commands build the server schema from them).
extension Store {
    /// The schema of every entity the catalog marks as synced (`@Sync` in some build that
    /// wrote the store), by stored name, in catalog order. Names are stored names; retired
    /// properties are left out, backlinks come last.
    ///
    /// ```swift
    /// let schemas = try store.syncedEntitySchemas()
    /// let server = try SyncSchema(schemas: schemas)
    /// ```
    @_spi(CofferSync)
    public func syncedEntitySchemas() throws -> [EntitySchema] {
        try performRead { transaction in
            let entities = try catalogDatabase.map { try Catalog.entities(dbi: $0, in: transaction) } ?? []
            return entities.filter { $0.synced == true }.map { EntitySchema(catalog: $0) }
        }
    }
}
