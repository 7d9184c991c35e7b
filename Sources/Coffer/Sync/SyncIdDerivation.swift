import CLMDB
import Foundation

/// Sync ids computed from local ids, so that an object this replica creates needs no stored
/// identity entry: its sync id is a keyed permutation of its local id under an *epoch*.
///
/// An epoch is taken once per store instance (each process that writes, each open), at its
/// first derived id, and recorded in `sync.epochs` in that transaction. Its prefix is a
/// valid UUIDv7 start (48 bits of the epoch's Unix milliseconds, version 7, 10 random bits)
/// and its key is 128 random bits; the id of object `id` of entity `e` is
/// `prefix ‖ E(key, e, id)` with `E` a 64-bit Feistel permutation, laid out as a UUIDv7
/// (the 64 bits fill the last 2 bits of `rand_a` and the 62 of `rand_b`).
///
/// Why per instance and not per store: a derived id depends only on stored state and the
/// local id, so a store restored from a backup (even into the same file), copied, or cloned
/// would derive again the ids its lost future or its twin already gave other objects. A new
/// epoch with fresh random bits at every open gives those objects other ids; the ids of
/// earlier epochs stay valid for the objects that took them (`sync.runs` names each
/// object's epoch). Within one epoch a local id is derived at most once: only ids above
/// every id the entity ever handed out (fresh ids, see `Transaction.recordSyncedPut`) are.
struct SyncIdDerivation: Equatable, Sendable {
    /// The first 8 bytes of every id of the epoch, with the 2 low bits (which carry the
    /// permutation's top bits) clear.
    let prefix: UInt64
    let key0: UInt64
    let key1: UInt64

    static let permutationHighMask: UInt64 = 0b11
    private static let low62: UInt64 = (1 << 62) - 1
    private static let variant: UInt64 = 0x8000_0000_0000_0000

    init(prefix: UInt64, key0: UInt64, key1: UInt64) {
        self.prefix = prefix
        self.key0 = key0
        self.key1 = key1
    }

    /// A new epoch at `milliseconds` with random tag and key bits.
    static func random(milliseconds: UInt64) -> SyncIdDerivation {
        var random = SystemRandomNumberGenerator()
        let time = min(milliseconds, HybridClock.maximumMilliseconds)
        let tag = (random.next() as UInt64) & 0x3FF
        return SyncIdDerivation(prefix: time << 16 | 0x7000 | tag << 2, key0: random.next(), key1: random.next())
    }

    /// The prefix an id would have under its epoch (its first 8 bytes, low 2 bits clear), or
    /// nil when the id cannot be a derived one (not version 7 with the RFC variant).
    @inline(__always)
    static func prefix(of syncId: UUID) -> UInt64? {
        let (first, second) = words(of: syncId)
        guard first & 0xF000 == 0x7000, second & 0xC000_0000_0000_0000 == variant else { return nil }
        return first & ~permutationHighMask
    }

    /// The sync id of the object `id` of the entity `entityId`.
    @inline(__always)
    func syncId(of id: Id, entityId: UInt32) -> UUID {
        let permuted = permute(id, entityId: entityId)
        let first = prefix | permuted >> 62
        let second = Self.variant | permuted & Self.low62
        return UUID(uuid: unsafeBitCast((first.bigEndian, second.bigEndian), to: uuid_t.self))
    }

    /// The local id `syncId` was derived from for `entityId`, or nil when it is not of this
    /// epoch.
    func id(of syncId: UUID, entityId: UInt32) -> Id? {
        let (first, second) = Self.words(of: syncId)
        guard first & ~Self.permutationHighMask == prefix, second & ~Self.low62 == Self.variant else { return nil }
        return unpermute((first & Self.permutationHighMask) << 62 | second & Self.low62, entityId: entityId)
    }

    /// The epoch's record in `sync.epochs`: key = prefix (8 bytes big-endian), value = key.
    var recordKey: [UInt8] { withUnsafeBytes(of: prefix.bigEndian) { Array($0) } }
    var recordValue: [UInt8] {
        withUnsafeBytes(of: (key0.bigEndian, key1.bigEndian)) { Array($0) }
    }

    init?(prefix: UInt64, recordValue bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 16 else { return nil }
        self.init(prefix: prefix, key0: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                  key1: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    // A four-round Feistel network on the two 32-bit halves: a bijection whatever the round
    // function, so distinct local ids always get distinct sync ids within an epoch.

    @inline(__always)
    private func roundKey(_ round: UInt64, entityId: UInt32) -> UInt64 {
        (round & 1 == 0 ? key0 : key1) ^ (UInt64(entityId) &+ round &* 0x9E37_79B9_7F4A_7C15) &* 0xD6E8_FEB8_6659_FD93
    }

    @inline(__always)
    private static func mix(_ half: UInt32, _ key: UInt64) -> UInt32 {
        let x = (UInt64(half) ^ key) &* 0x9E37_79B9_7F4A_7C15
        return UInt32(truncatingIfNeeded: (x ^ x >> 29) >> 32)
    }

    @inline(__always)
    private func permute(_ value: UInt64, entityId: UInt32) -> UInt64 {
        var left = UInt32(truncatingIfNeeded: value >> 32), right = UInt32(truncatingIfNeeded: value)
        for round in 0..<UInt64(4) {
            (left, right) = (right, left ^ Self.mix(right, roundKey(round, entityId: entityId)))
        }
        return UInt64(left) << 32 | UInt64(right)
    }

    private func unpermute(_ value: UInt64, entityId: UInt32) -> UInt64 {
        var left = UInt32(truncatingIfNeeded: value >> 32), right = UInt32(truncatingIfNeeded: value)
        for round in (0..<UInt64(4)).reversed() {
            (left, right) = (right ^ Self.mix(left, roundKey(round, entityId: entityId)), left)
        }
        return UInt64(left) << 32 | UInt64(right)
    }

    @inline(__always)
    private static func words(of syncId: UUID) -> (UInt64, UInt64) {
        let (first, second) = unsafeBitCast(syncId.uuid, to: (UInt64, UInt64).self)
        return (UInt64(bigEndian: first), UInt64(bigEndian: second))
    }
}

/// The epoch of one store instance (see ``SyncIdDerivation``): made at its first derived
/// id, and known to be recorded once a transaction that recorded it committed. Also keeps
/// what committed transactions learned that never changes once committed, so single-object
/// transactions need not search for it again: the handles of the runs and epochs tables,
/// the epoch last looked up, and the creation run last used (a committed run only ever
/// grows, and only this instance grows runs of its own epoch).
final class SyncEpochSource: @unchecked Sendable {
    private let lock = NSLock()
    private var epoch: SyncIdDerivation?
    private var isRecorded = false
    private var recentEpoch: SyncIdDerivation?
    private var recentRun: CreationRun?
    private var handles: (runs: MDB_dbi, epochs: MDB_dbi)?

    /// The instance's epoch (made now if none) and whether a committed transaction recorded it.
    func current(milliseconds: UInt64) -> (epoch: SyncIdDerivation, recorded: Bool) {
        lock.withLock {
            if let epoch { return (epoch, isRecorded) }
            let made = SyncIdDerivation.random(milliseconds: milliseconds)
            epoch = made
            return (made, false)
        }
    }

    /// The instance's epoch, if it has one yet.
    var existing: SyncIdDerivation? { lock.withLock { epoch } }

    /// Replaces an epoch not yet recorded whose prefix another epoch holds already.
    func replace(_ stale: SyncIdDerivation, milliseconds: UInt64) -> SyncIdDerivation {
        lock.withLock {
            if let epoch, epoch != stale { return epoch }
            let made = SyncIdDerivation.random(milliseconds: milliseconds)
            epoch = made
            isRecorded = false
            return made
        }
    }

    /// A committed epoch with `prefix` this instance knows, if any.
    func known(prefix: UInt64) -> SyncIdDerivation? {
        lock.withLock {
            if let epoch, isRecorded, epoch.prefix == prefix { return epoch }
            if let recentEpoch, recentEpoch.prefix == prefix { return recentEpoch }
            return nil
        }
    }

    /// The committed run last used, when it holds `id` of `entityId`.
    func run(holding id: Id, entityId: UInt32) -> CreationRun? {
        lock.withLock { recentRun.flatMap { $0.creationMid(of: id, entityId: entityId) != nil ? $0 : nil } }
    }

    /// The committed run last used (any).
    var lastRun: CreationRun? { lock.withLock { recentRun } }

    /// In one look: the instance's epoch when a committed transaction recorded it, with the
    /// tables' handles and the committed run last used (nil until all are known).
    func recordedEpoch() -> (epoch: SyncIdDerivation, tables: (runs: MDB_dbi, epochs: MDB_dbi), lastRun: CreationRun?)? {
        lock.withLock {
            guard let epoch, isRecorded, let handles else { return nil }
            return (epoch, handles, recentRun)
        }
    }

    /// The handles of the runs and epochs tables, once a committed state has them.
    var tables: (runs: MDB_dbi, epochs: MDB_dbi)? { lock.withLock { handles } }

    /// After a transaction committed (or a read found them): what it learned.
    func remember(recorded: SyncIdDerivation?, epoch looked: SyncIdDerivation?, run: CreationRun?, tables: (runs: MDB_dbi, epochs: MDB_dbi)?) {
        lock.withLock {
            if let recorded, epoch == recorded { isRecorded = true }
            if let looked { recentEpoch = looked }
            if let run { recentRun = run }
            if let tables, handles == nil { handles = tables }
        }
    }
}
