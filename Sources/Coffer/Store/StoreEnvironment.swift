import CLMDB
import Foundation

/// A store's LMDB environment and what guards it: the gate every transaction holds shared
/// (map growth and closing hold it exclusively), the writer lock, the pool of reset read
/// transactions, and the map's growth.
///
/// Invariants:
/// - `env` is open until `close()`, which runs once, holding the gate exclusively, so no
///   transaction of the process is open; `isClosed` is set there and read under the gate.
/// - The map size changes only under the exclusive gate (`growMap`,
///   `adoptMapSizeOfOtherProcess`): LMDB allows it only while no transaction is open.
/// - `readers` holds reset read transactions of `env` (at most `maximumPooledReaders`).
/// - Lock order: gate, then the store's publish lock (`CommitPublisher`), then `poolLock`.
final class StoreEnvironment: @unchecked Sendable {
    let env: OpaquePointer
    /// The store directory, for messages.
    let path: String
    /// The store's size limit, if any (see ``StoreOptions/maxSize``).
    let maxSize: Int?
    /// Held shared by every transaction; held exclusively to resize the map or close.
    let gate = ReadWriteGate()
    /// Serialises this process's write transactions (and handle opens) before they touch
    /// LMDB, so a waiting writer holds no gate share that a resizing writer would wait for.
    let writerLock = NSLock()
    /// Set (under the exclusive gate) by `close()`.
    private(set) var isClosed = false
    /// Guards `readers` and `knownGeneration`.
    private let poolLock = NSLock()
    /// Reset read transactions waiting to be renewed (cheaper than a new one).
    private var readers: [OpaquePointer] = []
    private static let maximumPooledReaders = 32
    /// The catalog generation of the last committed state this process read it in, by that
    /// state's LMDB transaction id: a transaction starting from the same state has the same
    /// generation without reading the catalog (see `Store.catalogGeneration(of:known:)`).
    /// Kept here, beside the readers, so a read takes both under one lock.
    private var knownGeneration = KnownGeneration(committed: -1, generation: 0)

    /// Creates and opens the LMDB environment in `path`.
    init(path: String, options: StoreOptions) throws {
        self.path = path
        self.maxSize = options.maxSize
        self.env = try Self.open(at: path, options: options)
    }

    /// Creates and opens an LMDB environment; closes it again on any failure.
    private static func open(at path: String, options: StoreOptions) throws -> OpaquePointer {
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

    /// Closes the environment, waiting for every open transaction; returns false when it was
    /// closed already. `whileClosing` runs holding the gate exclusively, before LMDB closes.
    func close(whileClosing: () -> Void) -> Bool {
        gate.lockExclusive()
        defer { gate.unlock() }
        guard !isClosed else { return false }
        isClosed = true
        poolLock.lock()
        for reader in readers { mdb_txn_abort(reader) }
        readers.removeAll()
        poolLock.unlock()
        whileClosing()
        mdb_env_close(env)
        return true
    }

    // MARK: Read transactions

    /// A read transaction from the pool (renewed) or a new one, and the last known catalog
    /// generation (taken under the same lock, so a read costs no extra lock).
    func acquireReader() throws -> (OpaquePointer, KnownGeneration) {
        poolLock.lock()
        let pooled = readers.popLast()
        let known = knownGeneration
        poolLock.unlock()
        if let pooled {
            let rc = mdb_txn_renew(pooled)
            if rc == 0 { return (pooled, known) }
            mdb_txn_abort(pooled)
            throw CofferError.storage(code: .init(result: rc), message: "cannot renew a read transaction on \(path): \(LMDB.message(rc))")
        }
        var begun: OpaquePointer?
        let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &begun)
        guard rc == 0, let txn = begun else {
            throw CofferError.storage(code: .init(result: rc), message: "cannot begin a read transaction on \(path): \(LMDB.message(rc))")
        }
        return (txn, known)
    }

    /// Resets a read transaction and keeps it for the next read (or aborts it when the pool
    /// is full).
    func releaseReader(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        poolLock.lock()
        if readers.count < Self.maximumPooledReaders {
            readers.append(txn)
            poolLock.unlock()
        } else {
            poolLock.unlock()
            mdb_txn_abort(txn)
        }
    }

    /// The catalog generation of the last committed state read (see `knownGeneration`).
    var lastKnownGeneration: KnownGeneration {
        poolLock.lock(); defer { poolLock.unlock() }
        return knownGeneration
    }

    /// Remembers the catalog generation of a committed state.
    func remember(_ known: KnownGeneration) {
        poolLock.lock(); defer { poolLock.unlock() }
        knownGeneration = known
    }

    /// The id of the last transaction committed to the file, by any process (LMDB's meta
    /// page). Call it holding the gate (shared is enough): the environment must be open.
    func lastCommittedTransactionId() -> UInt64 {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return UInt64(info.me_last_txnid)
    }

    // MARK: Map size

    /// Grows the map (doubling up to 1 GiB, then by 1 GiB) while no transaction is open.
    func growMap() throws {
        gate.lockExclusive()
        defer { gate.unlock() }
        guard !isClosed else { throw CofferError.storeClosed(path: path) }
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        let current = info.me_mapsize
        var grown = current < 1 << 30 ? current * 2 : current + (1 << 30)
        if let limit = maxSize {
            guard current < limit else {
                throw CofferError.storage(
                    code: .lmdb(.mapFull),
                    message: "the store at \(path) is full: it reached its maxSize of \(limit) bytes; the transaction was rolled back")
            }
            grown = min(grown, limit)
        }
        try LMDB.check(mdb_env_set_mapsize(env, grown), "cannot grow the map of \(path) to \(grown) bytes")
    }

    /// Another process grew the map: adopt its size.
    func adoptMapSizeOfOtherProcess() throws {
        gate.lockExclusive()
        defer { gate.unlock() }
        try LMDB.check(mdb_env_set_mapsize(env, 0), "cannot adopt the new map size of \(path)")
    }
}
