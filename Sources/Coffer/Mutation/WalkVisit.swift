import CLMDB

/// The record a write transaction's walk (`Transaction.walkWritingBack`, behind
/// `box.forEach` inside `store.write` and `box.modifyEach`) is visiting, and the reader that
/// decodes it. A put of the visited object during the visit (`Transaction.storeObject`)
/// uses it to skip the walk for fields to carry: a decode that returned read the whole
/// record, every header and value checked, so the record is intact, and when the reader met
/// no field of a property the binding does not declare, there is nothing to carry into the
/// new record.
///
/// Invariant: the reader read the stored record exactly when the put finds the record at
/// the reader's address and length and `WriteScratch.cursorMoves` still equals
/// `cursorMoves`. Every write to an entity table except one (a rewrite in place through a
/// cursor already on the record), and every step of a walk, adds one to `cursorMoves`; so
/// the table's records have not changed since the reader was made, and bytes at the same
/// place are the same bytes. (The put reads the record through its cursor again rather
/// than trusting the reader's pointer: writes to other databases in between may spill
/// dirty pages, and a pointer into a spilled overflow page would dangle.) `reader` points
/// into the walk's stack frame: the walk clears the visit when its body returns, and a put
/// consumes it, so a second put of the object walks the record as usual.
struct WalkVisit {
    let table: MDB_dbi
    let id: Id
    let reader: UnsafePointer<RecordReader>
    let cursorMoves: UInt64

    /// Whether `bytes`, the stored record of `id` in `table` that a put just read, is the
    /// record the reader decoded whole without meeting a field of a property the binding
    /// does not declare.
    func hasNothingToCarry(_ bytes: UnsafeRawBufferPointer, of id: Id, in table: MDB_dbi, cursorMoves now: UInt64) -> Bool {
        guard id == self.id, table == self.table, now == cursorMoves else { return false }
        let reader = reader.pointee
        return reader.base == bytes.baseAddress && reader.end == bytes.count
            && reader.offset == reader.end && !reader.skippedUnknownField
    }
}
