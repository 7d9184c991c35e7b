import CLMDB

/// The memory and bookkeeping a write transaction's puts and removes reuse from one object
/// to the next: index key pairs, the buffer index entries are assembled in, the entity
/// tables' write cursors, and what a write walk needs to know about them.
///
/// Stored inline in `Transaction` (one per transaction, no allocation of its own until a
/// put needs memory); its buffers are freed by `deallocate()` when the transaction goes.
///
/// Invariants:
/// - `keyPairs` holds `keyPairCapacity` initialised pairs (nil when 0).
/// - `writeCursors` holds at most one cursor per table, each opened in the owning
///   transaction; `lastWriteCursor` is one of them.
/// - `cursorMoves` changes whenever an entity table's write cursor may have moved or a
///   stored record may have changed (see `WalkVisit`); it is only compared.
struct WriteScratch {
    /// Reusable index keys (old and new value per index), so puts and removes build keys
    /// without allocating: `keyPairCapacity` pairs (see `prepareKeyBuffers`, `keyPair`).
    private var keyPairs: UnsafeMutablePointer<IndexKeyPair>?
    private var keyPairCapacity = 0
    /// Where index entries (`key ‖ id`) are assembled for LMDB; grows to the longest key.
    private var entryScratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Indexes that received an out-of-order key in this transaction (no more append attempts).
    var unorderedIndexes: [MDB_dbi] = []  // a few at most: searched, not hashed
    /// Cursors on entity tables kept open for updates (see `Transaction.writeCursor`); LMDB
    /// closes a write transaction's cursors when it ends.
    private var writeCursors: [MDB_dbi: OpaquePointer] = [:]
    /// The last entry of `writeCursors` used: a run of puts to one box skips the hashing.
    private var lastWriteCursor: (table: MDB_dbi, cursor: OpaquePointer)?
    /// The record a write walk is visiting (see `WalkVisit`), while its body runs.
    var walkVisit: WalkVisit?
    /// Counts what may move an entity table's write cursor or change a stored record: every
    /// write to an entity table except a rewrite in place through a cursor already on the
    /// record, and every step of a write walk (see `WalkVisit`). Wraps; only compared.
    var cursorMoves: UInt64 = 0

    /// Frees the buffers; called once, when the transaction goes away.
    func deallocate() {
        entryScratch.deallocate()
        if let keyPairs {
            for position in 0..<keyPairCapacity {
                keyPairs[position].old.deallocate()
                keyPairs[position].new.deallocate()
            }
            keyPairs.deinitialize(count: keyPairCapacity)
            keyPairs.deallocate()
        }
    }

    // MARK: Index key pairs

    /// Makes room for the old and new keys of `count` indexes.
    @inline(__always)
    mutating func prepareKeyBuffers(count: Int) {
        if count > keyPairCapacity { growKeyPairs(to: count) }
    }

    /// The key pair of the index at `position` (below the count last prepared).
    @inline(__always)
    func keyPair(_ position: Int) -> UnsafeMutablePointer<IndexKeyPair> {
        keyPairs.unsafelyUnwrapped + position  // allocated by prepareKeyBuffers
    }

    private mutating func growKeyPairs(to count: Int) {
        let grown = UnsafeMutablePointer<IndexKeyPair>.allocate(capacity: count)
        if let keyPairs {
            grown.moveInitialize(from: keyPairs, count: keyPairCapacity)
            keyPairs.deallocate()
        }
        (grown + keyPairCapacity).initialize(repeating: IndexKeyPair(), count: count - keyPairCapacity)
        keyPairs = grown
        keyPairCapacity = count
    }

    // MARK: Index entries

    /// `key ‖ id` assembled in the scratch memory, valid until the next call: LMDB copies
    /// the key it is given. (A temporary allocation and a closure per entry cost an insert
    /// noticeably.)
    mutating func entryKey(_ key: UnsafeRawBufferPointer, _ id: Id) -> MDB_val {
        let size = key.count + 8
        if size > entryScratch.count { growEntryScratch(to: size) }
        let base = entryScratch.baseAddress.unsafelyUnwrapped  // non-empty after the line above
        if let source = key.baseAddress { base.copyMemory(from: source, byteCount: key.count) }
        base.storeBytes(of: id.bigEndian, toByteOffset: key.count, as: UInt64.self)
        return MDB_val(mv_size: size, mv_data: base)
    }

    private mutating func growEntryScratch(to size: Int) {
        entryScratch.deallocate()
        entryScratch = .allocate(byteCount: Swift.max(size, 64), alignment: 8)
    }

    // MARK: Write cursors

    /// The write cursor already open on `table`, if any.
    @inline(__always)
    mutating func writeCursor(on table: MDB_dbi) -> OpaquePointer? {
        if let last = lastWriteCursor, last.table == table { return last.cursor }
        guard let cursor = writeCursors[table] else { return nil }
        lastWriteCursor = (table, cursor)
        return cursor
    }

    /// Keeps a newly opened write cursor on `table`.
    mutating func keepWriteCursor(_ cursor: OpaquePointer, on table: MDB_dbi) {
        writeCursors[table] = cursor
        lastWriteCursor = (table, cursor)
    }

    /// Notes a write to an entity table that may move its cursor or change stored records
    /// (see `WalkVisit`): a visit can no longer be relied on.
    @inline(__always)
    mutating func noteTableChange() {
        walkVisit = nil
        cursorMoves &+= 1
    }
}
