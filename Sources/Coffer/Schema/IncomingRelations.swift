import CLMDB

/// The relations in the store that can point at objects of one entity, as the catalog
/// lists them (cached per catalog generation by `SchemaRegistry`).
struct IncomingRelations {
    var toOne: [IncomingLink] = []
    var manyToMany: [RelationTables] = []
}

/// A `ToOne` property somewhere in the store that can point at objects of one entity.
struct IncomingLink {
    let ownerName: String
    let ownerTable: MDB_dbi
    /// The owner's index on the link property (links are always indexed).
    let index: IndexBinding
}
