import CLMDB

/// Walks that write back the records they visit (`box.forEach` inside `store.write`,
/// `box.modifyEach`), sharing the table cursor with the puts they make.
extension Transaction {
    /// Calls `body` with a reader for every record up to id `last`, in id order, walking
    /// with this write transaction's table cursor, the one puts and removals of the entity
    /// use: a put of the visited object finds the cursor on its record and writes there
    /// without a search. While `body` runs, the record is `writes.walkVisit`, so that put
    /// also skips the walk for fields to carry when the reader read the whole record and
    /// met none (see `WalkVisit`). When nothing moved the cursor (`writes.cursorMoves` did
    /// not change), the walk steps on; when `body` moved it (it wrote another object, or
    /// removed this one), the walk seeks past the visited id.
    func walkWritingBack(_ binding: EntityBinding, upTo last: Id, _ body: (inout RecordReader) throws -> Void) throws {
        let name = binding.schema.name
        let handle = try writeCursor(of: binding)
        let cursor = Cursor(handle: handle, transaction: self)
        let outerVisit = writes.walkVisit
        defer { writes.walkVisit = outerVisit }
        try describingFailures("scanning \(name)") {
            writes.cursorMoves &+= 1  // the walk moves the cursor: an enclosing walk's visit ends
            var current = try cursor.first()
            while let entry = current {
                let id = try IdKey.decode(entry.key, entity: name)
                guard id <= last else { return }
                var reader = try RecordReader(bytes: entry.value, layout: binding, id: id)
                let movesBefore = writes.cursorMoves
                try withUnsafeMutablePointer(to: &reader) { visited in
                    writes.walkVisit = WalkVisit(table: binding.table, id: id, reader: UnsafePointer(visited), cursorMoves: movesBefore)
                    defer { writes.walkVisit = nil }
                    try body(&visited.pointee)
                }
                guard id < last else { return }
                if writes.cursorMoves == movesBefore {
                    current = try cursor.next()
                } else {
                    current = recordHere(id, cursor: handle) != nil ? try cursor.next() : try cursor.seek(IdKey(id + 1))
                }
                writes.cursorMoves &+= 1
            }
        }
    }
}
