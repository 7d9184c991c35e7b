import CLMDB
import Foundation

/// The replica's persisted sync counters, kept in the catalog under `sync/state` (32 bytes:
/// the format of the sync tables, clock, last mutation id, send floor; big-endian) and
/// written in the same transaction as the outbox entries they describe.
///
/// The format names how the sync tables are laid out (see ``SyncIdTables``). Format 1 (24
/// bytes, no format word) kept a separate pending map; a writable store is converted when it
/// opens (see `Transaction.convertLegacySyncTables`), and anything else that meets format 1
/// refuses it with an error instead of misreading it. Format 3 adds derived sync ids (objects
/// without identity entries, see ``SyncIdDerivation``); a format-2 store reads as one with no
/// derived ids and is written as format 3 by its next synced write, so an earlier build,
/// which would take those objects for unsynced ones, refuses it instead.
struct SyncState: Equatable {
    static let catalogKey = "sync/state"
    static let size = 32
    /// The format this build writes (it reads format 2 too).
    static let format: UInt64 = 3
    /// The first format with derived sync ids.
    static let derivedIdsFormat: UInt64 = 3
    /// The format before derived sync ids, read as one without any.
    static let identityTablesFormat: UInt64 = 2
    /// The size of a format-1 state (clock, last mid, send floor).
    static let legacySize = 24

    /// The last hybrid clock value handed out.
    var clock: UInt64 = 0
    /// The last mutation id handed out (0: none yet).
    var lastMid: UInt64 = 0
    /// The highest mid a pusher has taken: entries at or below it may be on their way to the
    /// server and are never merged into; later changes get new entries.
    var sendFloor: UInt64 = 0

    init() {}

    /// Reads a state of this build's format.
    ///
    /// - Throws: ``CofferError/damagedStore(part:reason:)`` (`.sync`) when the bytes are not a
    ///   format-2 state, naming format 1 when they are one (an earlier build wrote them after
    ///   this store was converted: reopening the store converts them).
    init(decoding bytes: UnsafeRawBufferPointer) throws {
        if bytes.count == Self.legacySize {
            throw CofferError.damagedStore(part: .sync, reason: "the sync state is of format 1, written by an earlier build; open the store writable again to convert it")
        }
        guard bytes.count == Self.size else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync state has \(bytes.count) bytes, not \(Self.size)")
        }
        let format = Self.read(bytes, 0)
        guard format == Self.format || format == Self.identityTablesFormat else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync tables are of format \(format); this build reads formats \(Self.identityTablesFormat) and \(Self.format)")
        }
        try self.init(checkingClock: Self.read(bytes, 8), lastMid: Self.read(bytes, 16), sendFloor: Self.read(bytes, 24))
    }

    /// Reads a format-1 state (24 bytes), for the conversion.
    init(decodingLegacy bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count == Self.legacySize else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync state has \(bytes.count) bytes, not \(Self.legacySize)")
        }
        try self.init(checkingClock: Self.read(bytes, 0), lastMid: Self.read(bytes, 8), sendFloor: Self.read(bytes, 16))
    }

    private init(checkingClock clock: UInt64, lastMid: UInt64, sendFloor: UInt64) throws {
        guard sendFloor <= lastMid else {
            throw CofferError.damagedStore(part: .sync, reason: "the sync state's send floor \(sendFloor) is above its last mutation id \(lastMid)")
        }
        self.clock = clock
        self.lastMid = lastMid
        self.sendFloor = sendFloor
    }

    func encoded() -> [UInt8] {
        withEncoded { Array($0) }
    }

    /// Calls `body` with the encoded state, in stack memory.
    func withEncoded<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        var words = (Self.format.bigEndian, clock.bigEndian, lastMid.bigEndian, sendFloor.bigEndian)
        return try withUnsafeBytes(of: &words) { try body($0) }
    }

    private static func read(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}


/// The sync counters as the last committed write transaction of this store instance that
/// used them left them, and the outbox's handle, so that the next write transaction starts
/// from them instead of reading the catalog and opening the outbox by name.
///
/// The counters are valid only for the write transaction that directly follows that commit:
/// LMDB numbers write transactions, so a transaction whose id is one above the remembered
/// commit's knows that nothing (in this process or another) committed in between. Any other
/// transaction reads the counters from the catalog as before.
final class CommittedSyncState: @unchecked Sendable {
    private let lock = NSLock()
    private var committed: (transactionId: Int, state: SyncState)?
    private var outboxHandle: MDB_dbi = 0

    /// The counters for the write transaction with id `transactionId`, when the remembered
    /// commit directly precedes it.
    func state(forWriteTransaction transactionId: Int) -> SyncState? {
        lock.withLock {
            guard let committed, committed.transactionId &+ 1 == transactionId else { return nil }
            return committed.state
        }
    }

    /// The outbox's handle, once a committed transaction opened it (LMDB keeps a handle a
    /// committed transaction opened, and Coffer never deletes the outbox).
    var outbox: MDB_dbi? {
        lock.withLock { outboxHandle == 0 ? nil : outboxHandle }
    }

    /// After the write transaction that committed as `transactionId` (it wrote something,
    /// so it took that id) left the counters at `state`, with the outbox's handle.
    func remember(_ state: SyncState, committedAs transactionId: Int, outbox: MDB_dbi) {
        lock.withLock {
            committed = (transactionId, state)
            if outbox != 0 { outboxHandle = outbox }
        }
    }
}
