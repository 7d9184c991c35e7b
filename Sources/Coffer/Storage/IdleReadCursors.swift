import CLMDB

/// The cursors of a read transaction that no walk is using, handed out again by
/// `Transaction.withCursor` (a look-up loop would otherwise open and close one per call).
/// Stored inline in `Transaction`; `closeAll()` closes them when the transaction object
/// goes away (LMDB allows closing a read-only cursor after its transaction ended).
struct IdleReadCursors {
    private var idle: [(database: MDB_dbi, cursor: OpaquePointer)] = []

    /// An idle cursor on `database`, taken out of the pool, or nil when there is none.
    @inline(__always)
    mutating func take(_ database: MDB_dbi) -> OpaquePointer? {
        guard let position = idle.lastIndex(where: { $0.database == database }) else { return nil }
        return idle.remove(at: position).cursor
    }

    /// Puts a cursor the caller is done with back into the pool.
    @inline(__always)
    mutating func give(_ cursor: OpaquePointer, on database: MDB_dbi) {
        idle.append((database, cursor))
    }

    /// Closes every pooled cursor.
    func closeAll() {
        for entry in idle { mdb_cursor_close(entry.cursor) }
    }
}
