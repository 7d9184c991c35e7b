import CLMDB
import Foundation

/// A Coffer database: one directory holding one LMDB environment.
///
/// Open a store once per directory and share it: `Store` is `Sendable`, many threads and
/// tasks read in parallel, and writes are serialised (one writer at a time, as in LMDB).
///
/// ```swift
/// let store = try Store(directory: "data/app.coffer")
/// let people = store.box(for: Person.self)
/// try people.put(&person)
/// try store.write {
///     try people.put(&a)
///     try orders.put(&b)
/// }   // both or neither
/// ```
///
/// The memory map grows by itself when it fills up; set ``StoreOptions/maxSize`` to cap it.
/// Opening the same directory twice in one process throws: LMDB forbids it, because the
/// second handle would corrupt the first one's locks.
public final class Store: @unchecked Sendable {
    /// The directory the store lives in.
    ///
    /// ```swift
    /// print(store.path)
    /// ```
    public let path: String

    /// The options the store was opened with.
    ///
    /// ```swift
    /// store.options.readOnly
    /// ```
    public let options: StoreOptions

    let env: OpaquePointer
    /// The store directory's device and inode.
    let identity: DirectoryIdentity
    /// Held shared by every transaction; held exclusively to resize the map or close.
    let gate = ReadWriteGate()
    /// Serialises this process's write transactions before they touch LMDB, so a waiting
    /// writer holds no gate share that a resizing writer would wait for.
    let writerLock = NSLock()
    /// Guards `bindings`, `readers`, `databases` and `reservedIds`.
    let stateLock = NSLock()
    /// Set (under the exclusive gate) by `close()`.
    var isClosed = false
    /// The catalog database handle, or nil in a read-only store that has never been
    /// written. Guarded by `stateLock` (a read-only store may learn it later).
    var catalogHandle: MDB_dbi?
    var catalogDatabase: MDB_dbi? {
        stateLock.lock(); defer { stateLock.unlock() }
        return catalogHandle
    }
    /// Entity bindings of this store, by entity type.
    var bindings: [ObjectIdentifier: EntityBinding] = [:]
    /// Bindings built from the catalog for reading, before (or without) any write of the
    /// entity by this process; replaced by the registered binding when it writes.
    var readBindings: [ObjectIdentifier: EntityBinding] = [:]
    /// Entity tables and indexes opened at start or created since, by database name.
    var databases: [String: MDB_dbi] = [:]
    /// Bumped whenever a commit registered entities, which may add links.
    var catalogGeneration = 0
    /// `ToOne` properties by target entity, valid for one catalog generation.
    var linkCache: (generation: Int, links: [String: IncomingRelations]) = (-1, [:])
    /// The highest id handed out per entity id by any transaction of this process, committed
    /// or not: never handed out again (see `Transaction+IdAllocation`).
    var reservedIds: [UInt32: Id] = [:]
    /// The entity types that used each stored entity name with this store, and whether
    /// they named it with `@StoredAs` (see `claimStoredName`).
    var storedNameClaims: [String: [(type: String, explicit: Bool)]] = [:]
    /// The catalog generation the store's bindings were made for (see
    /// `Store.refreshBindingsIfCatalogChanged`).
    var boundCatalogGeneration: UInt64?
    /// The catalog generation of the last committed state this process read it in, by that
    /// state's LMDB transaction id: a transaction starting from the same state has the same
    /// generation without reading the catalog (see `catalogGeneration(of:known:)`).
    var knownGeneration = KnownGeneration(committed: -1, generation: 0)
    /// Receivers of committed change sets, by registration token (see `Store+Observation`).
    var changeHandlers: [Int: ChangeHandler] = [:]
    var nextChangeHandler = 0
    /// Held from just before a commit until its change set is published, and by observers
    /// while they take their pending changes and begin their snapshot: commits publish in
    /// commit order, and a snapshot holds exactly the commits an observer has received.
    /// Lock order: gate, then publishLock, then stateLock.
    let publishLock = NSLock()
    /// Reset read transactions waiting to be renewed (renewing one skips the allocation and
    /// reader-slot set-up of a new one).
    var readers: [OpaquePointer] = []
    /// Scratch memory for encoding records; used under `writerLock` only.
    let recordBuffer = RecordBuffer()
    /// The one thread-hopping-free queue async writes run on.
    let writeQueue = DispatchQueue(label: "coffer.store.writer", qos: .userInitiated)

    /// Opens (and if needed creates) the store in `directory`.
    ///
    /// ```swift
    /// let store = try Store(directory: "data/app.coffer")
    /// let readOnly = try Store(directory: "data/app.coffer", options: .init(readOnly: true))
    /// ```
    ///
    /// - Throws: ``CofferError/storage(code:message:)`` when the directory cannot be created
    ///   or opened, holds a damaged or incompatible file, or is already open in this process.
    public init(directory: String, options: StoreOptions = StoreOptions()) throws {
        let url = URL(fileURLWithPath: directory).standardizedFileURL
        self.path = url.path
        self.options = options

        let fileManager = FileManager.default
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw CofferError.storage(code: .system(.notADirectory), message: "\(path) is a file, not a store directory")
        }
        if !options.readOnly {
            do {
                try fileManager.createDirectory(at: url, withIntermediateDirectories: true)
            } catch {
                throw CofferError.storage(code: .system(CofferError.SystemCode(of: error) ?? .ioError),
                                          message: "cannot create the store directory \(path): \(error.localizedDescription)")
            }
        }
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CofferError.storage(code: .system(.noSuchFile), message: "no store directory at \(path)")
        }
        // The same directory may be reached through several paths (symlinks, bind mounts):
        // it is identified by device and inode, as LMDB's locks are.
        guard stat(path, &info) == 0 else {
            let code = CofferError.SystemCode(rawValue: errno)
            throw CofferError.storage(code: .system(code), message: "cannot inspect the store directory \(path): \(code.text)")
        }
        let identity = DirectoryIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        self.identity = identity
        guard OpenStores.shared.claim(identity) else {
            throw CofferError.misuse(.storeAlreadyOpen(path: path))
        }

        do {
            try StoreFile.checkSize(directory: path)
            if options.verifyOnOpen, FileManager.default.fileExists(atPath: path + "/data.mdb") {
                try Self.verifyBeforeOpening(path)
            }
            env = try Self.openEnvironment(at: path, options: options)
        } catch {
            OpenStores.shared.release(identity)
            throw error
        }
        do {
            try openCatalog()
        } catch {
            // The store is fully initialised here, so deinit runs too; closing first makes
            // that a no-op instead of a second mdb_env_close.
            closeEnvironment()
            throw error
        }
    }

    /// The structural check of `verifyOnOpen`.
    private static func verifyBeforeOpening(_ path: String) throws {
        let report = try verify(directory: path)
        guard report.isIntact else {
            throw CofferError.damagedStore(part: .file(path: path), reason: report.problems.prefix(3).joined(separator: "; "))
        }
    }

    /// Creates and opens the LMDB environment; closes it again on any failure.
    private static func openEnvironment(at path: String, options: StoreOptions) throws -> OpaquePointer {
        var created: OpaquePointer?
        var rc = mdb_env_create(&created)
        guard rc == 0, let env = created else {
            throw CofferError.storage(code: .init(result: rc), message: "cannot create an LMDB environment: \(LMDB.message(rc))")
        }
        var flags = UInt32(MDB_NOTLS)
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        switch options.durability {
        case .full: break
        case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
        case .noSync: flags |= UInt32(MDB_NOSYNC)
        }
        let initial = options.maxSize.map { min($0, options.initialMapSize) } ?? options.initialMapSize
        mdb_env_set_maxdbs(env, MDB_dbi(max(options.maxNamedDatabases, 2)))
        mdb_env_set_mapsize(env, max(initial, 1 << 20))
        rc = mdb_env_open(env, path, flags, 0o644)
        if rc != 0 {
            mdb_env_close(env)
            let hint = rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH
                ? " (not an LMDB 0.9 database: damaged, or written by another LMDB version such as Homebrew's 1.0)" : ""
            throw CofferError.storage(code: .init(result: rc), message: "cannot open the store at \(path): \(LMDB.message(rc))\(hint)")
        }
        return env
    }

    /// Opens the store in the directory at `directory`.
    ///
    /// ```swift
    /// let store = try Store(directory: URL(fileURLWithPath: "/tmp/app.coffer"))
    /// ```
    public convenience init(directory: URL, options: StoreOptions = StoreOptions()) throws {
        try self.init(directory: directory.path, options: options)
    }

    deinit {
        closeEnvironment()
    }

    /// Closes the store. Waits for transactions running on other threads; later calls on the
    /// store or its boxes throw ``CofferError/storeClosed(path:)``. Closing twice does nothing.
    ///
    /// ```swift
    /// try store.close()
    /// let reopened = try Store(directory: store.path)
    /// ```
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.closeInsideTransaction`) when called inside
    ///   `store.read { }` or `store.write { }` of this store on the calling thread (waiting
    ///   for that transaction would wait forever). Close after the closure returns.
    public func close() throws {
        guard Transaction.current(for: self) == nil else {
            throw CofferError.misuse(.closeInsideTransaction(path: path))
        }
        closeEnvironment()
    }

    private func closeEnvironment() {
        gate.lockExclusive()
        defer { gate.unlock() }
        guard !isClosed else { return }
        isClosed = true
        stateLock.lock()
        for reader in readers { mdb_txn_abort(reader) }
        readers.removeAll()
        bindings.removeAll()
        readBindings.removeAll()
        let observers = changeHandlers.values
        changeHandlers.removeAll()
        stateLock.unlock()
        mdb_env_close(env)
        OpenStores.shared.release(identity)
        // Observation sequences end instead of waiting for commits that cannot come.
        for observer in observers { observer.closed() }
    }

    /// Returns the box that stores objects of type `E`.
    ///
    /// ```swift
    /// let people = store.box(for: Person.self)
    /// ```
    public func box<E: Entity>(for type: E.Type) -> Box<E> {
        Box(store: self)
    }

    /// The size of the memory map and of the data in it, in bytes.
    ///
    /// ```swift
    /// let (mapSize, used) = try store.mapUsage()
    /// ```
    public func mapUsage() throws -> (mapSize: Int, usedBytes: Int) {
        try performRead { _ in
            var info = MDB_envinfo()
            var stat = MDB_stat()
            mdb_env_info(env, &info)
            mdb_env_stat(env, &stat)
            return (info.me_mapsize, (info.me_last_pgno + 1) * Int(stat.ms_psize))
        }
    }
}

/// A directory as the file system knows it: the same for every path that reaches it.
struct DirectoryIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
}

/// The directories with an open `Store` in this process; LMDB must not open one twice
/// (a second environment on the same files breaks the first one's locks).
final class OpenStores: @unchecked Sendable {
    static let shared = OpenStores()
    private let lock = NSLock()
    private var open: Set<DirectoryIdentity> = []

    func claim(_ identity: DirectoryIdentity) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return open.insert(identity).inserted
    }

    func release(_ identity: DirectoryIdentity) {
        lock.lock(); defer { lock.unlock() }
        open.remove(identity)
    }
}
