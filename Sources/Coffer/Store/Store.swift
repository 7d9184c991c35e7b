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

    /// The LMDB environment: the gate, the writer lock, read transactions, map growth.
    let environment: StoreEnvironment
    /// The store directory's device and inode.
    let identity: DirectoryIdentity
    /// Bindings, database handles, catalog generation, stored-name claims, reserved ids.
    let registry = SchemaRegistry()
    /// Change handlers and the lock that orders publishing commits to them.
    let publisher = CommitPublisher()
    /// The physical time source of the store's hybrid clock (tests replace it).
    let syncClock = SyncClock()
    /// The merges the app registered for synced entities (``setSyncMerge(for:_:)``).
    let syncMerges = SyncMergeRegistry()
    /// This instance's epoch of derived sync ids (see ``SyncIdDerivation``).
    let syncEpochs = SyncEpochSource()
    /// The sync counters the last committed synced write left (see ``CommittedSyncState``).
    let committedSyncState = CommittedSyncState()
    /// The catalog database handle, or nil in a read-only store that has never been written.
    var catalogDatabase: MDB_dbi? { registry.catalogDatabase }
    /// The database handles this store opened, by name (a copy).
    var databases: [String: MDB_dbi] { registry.openedDatabases }
    /// Scratch memory for encoding records; used under the writer lock only.
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
            environment = try StoreEnvironment(path: path, options: options)
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
        var observers: [ChangeHandler] = []
        let closedNow = environment.close {
            registry.forgetBindings()
            observers = publisher.close()
        }
        guard closedNow else { return }
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
            mdb_env_info(environment.env, &info)
            mdb_env_stat(environment.env, &stat)
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
