/// LMDB's view of a store: pages per database, free pages, reader slots — what
/// `coffer stat` prints.
///
/// ```swift
/// let statistics = try store.statistics()
/// for database in statistics.databases { print(database.name, database.entries, database.depth) }
/// print(statistics.freePages, statistics.readersUsed, "of", statistics.maximumReaders)
/// ```
public struct StoreStatistics: Sendable {
    /// The page size in bytes.
    ///
    /// ```swift
    /// statistics.pageSize
    /// ```
    public let pageSize: Int
    /// Bytes of the memory map.
    ///
    /// ```swift
    /// statistics.mapSize
    /// ```
    public let mapSize: Int
    /// Pages of the file in use: the highest page number plus one.
    ///
    /// ```swift
    /// statistics.pagesUsed
    /// ```
    public let pagesUsed: Int
    /// Pages on LMDB's free list: reused by later writes (once no reader still sees
    /// them), not returned to the file system; `coffer compact` drops them.
    /// ```swift
    /// statistics.freePages
    /// ```
    public let freePages: Int
    /// Reader slots in use (by this and other processes) and available.
    /// ```swift
    /// statistics.readersUsed
    /// ```
    public let readersUsed: Int
    /// ```swift
    /// statistics.maximumReaders
    /// ```
    public let maximumReaders: Int
    /// Every named database (tables, indexes, relations, the catalog), by name.
    /// ```swift
    /// statistics.databases.map(\.name)
    /// ```
    public let databases: [DatabaseStatistics]
}

/// The B-tree of one named database.
///
/// ```swift
/// print(database.name, database.depth, database.leafPages, database.overflowPages)
/// ```
public struct DatabaseStatistics: Sendable {
    /// The database's name (`t.1` is entity 1's table, `i.1.2` an index, ...).
    /// ```swift
    /// database.name
    /// ```
    public let name: String
    /// Key/value entries.
    ///
    /// ```swift
    /// database.entries
    /// ```
    public let entries: Int
    /// Levels of the B-tree.
    ///
    /// ```swift
    /// database.depth
    /// ```
    public let depth: Int
    /// ```swift
    /// database.branchPages
    /// ```
    public let branchPages: Int
    /// ```swift
    /// database.leafPages
    /// ```
    public let leafPages: Int
    /// Pages of values too large for a leaf page.
    ///
    /// ```swift
    /// database.overflowPages
    /// ```
    public let overflowPages: Int
}
