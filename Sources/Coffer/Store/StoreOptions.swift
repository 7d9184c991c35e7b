/// How a ``Store`` opens its database.
///
/// ```swift
/// let store = try Store(directory: "data/app.coffer",
///                       options: .init(maxSize: 4 << 30, readOnly: false))
/// ```
public struct StoreOptions: Sendable {
    /// The size the memory map starts with. The map grows by itself when it fills up, so
    /// this only saves a few early resizes.
    ///
    /// ```swift
    /// StoreOptions(initialMapSize: 256 << 20)
    /// ```
    public var initialMapSize: Int

    /// The largest the database may grow to, or nil for no limit. A write that would pass
    /// it throws ``CofferError/storage(code:message:)`` and changes nothing.
    ///
    /// ```swift
    /// StoreOptions(maxSize: 1 << 30)   // at most 1 GiB
    /// ```
    public var maxSize: Int?

    /// Opens the store for reading only; every write throws ``CofferError/readOnly(path:operation:)``.
    /// The directory must already hold a store.
    ///
    /// ```swift
    /// StoreOptions(readOnly: true)
    /// ```
    public var readOnly: Bool

    /// How hard a commit works to survive an operating-system crash or power loss.
    ///
    /// ```swift
    /// StoreOptions(durability: .noMetaSync)
    /// ```
    public var durability: Durability

    /// The most named LMDB databases (entity tables, indexes, relations) the store can hold.
    /// Every open one costs a little on each transaction start, so it is not set higher.
    ///
    /// ```swift
    /// StoreOptions(maxNamedDatabases: 512)
    /// ```
    public var maxNamedDatabases: Int

    /// Verifies the data file's structure (``Store/verify(directory:)``) before LMDB maps it,
    /// and refuses to open a damaged file. Costs one read of every page in use; worth it for
    /// files of doubtful origin (restored, copied, received).
    ///
    /// ```swift
    /// let store = try Store(directory: path, options: StoreOptions(verifyOnOpen: true))
    /// ```
    public var verifyOnOpen: Bool

    /// How often, while anything observes the store (``Box/changes()``,
    /// ``Query/results(offset:limit:)``, a ``QueryController``, ``LiveResults`` and the other
    /// live objects), it checks whether another process committed to the same directory (an
    /// app extension, a helper, a second server process), and tells its observers; nil checks
    /// only when the app calls ``Store/checkForExternalCommits()``. A check reads one number
    /// from LMDB's meta page. Nothing runs while nobody observes. Intervals under 10 ms count
    /// as 10 ms.
    ///
    /// ```swift
    /// StoreOptions(externalCommitCheckInterval: .milliseconds(200))
    /// ```
    public var externalCommitCheckInterval: Duration?

    /// Creates options; every argument has the safe default.
    ///
    /// ```swift
    /// let options = StoreOptions(maxSize: 4 << 30, readOnly: false)
    /// ```
    public init(
        initialMapSize: Int = 64 << 20,
        maxSize: Int? = nil,
        readOnly: Bool = false,
        durability: Durability = .full,
        maxNamedDatabases: Int = 128,
        verifyOnOpen: Bool = false,
        externalCommitCheckInterval: Duration? = .seconds(1)
    ) {
        self.verifyOnOpen = verifyOnOpen
        self.externalCommitCheckInterval = externalCommitCheckInterval
        self.initialMapSize = initialMapSize
        self.maxSize = maxSize
        self.readOnly = readOnly
        self.durability = durability
        self.maxNamedDatabases = maxNamedDatabases
    }
}

/// What a commit guarantees after it returns.
///
/// An application crash never loses committed data with any setting; these only differ on
/// an operating-system crash or power loss.
///
/// ```swift
/// StoreOptions(durability: .noSync)
/// ```
public enum Durability: Sendable {
    /// Each commit is flushed to disk before it returns (two fsyncs). The default.
    /// ```swift
    /// .full
    /// ```
    case full
    /// The data is flushed, the meta page is not: an OS crash may lose the last commit but
    /// never corrupts the database. About twice as fast per commit.
    /// ```swift
    /// .noMetaSync
    /// ```
    case noMetaSync
    /// Nothing is flushed by commit; the OS writes when it likes. An OS crash may lose the
    /// last transactions. Fastest; suits caches and bulk imports.
    /// ```swift
    /// .noSync
    /// ```
    case noSync
}
