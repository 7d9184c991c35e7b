import CLMDB

/// A write transaction's full-text changes not written to LMDB yet: one `TextIndexBuffer`
/// per index database, created on first use. Stored inline in `Transaction`; the
/// transaction flushes them (see `Transaction.flushTextIndexes`) before any read of an
/// index and before it commits, and a rolled back or retried transaction drops them.
struct PendingTextIndexes {
    private var buffers: [MDB_dbi: TextIndexBuffer] = [:]

    var isEmpty: Bool { buffers.isEmpty }

    /// The pending changes of `index` (created on first use).
    mutating func buffer(for index: TextIndexBinding) -> TextIndexBuffer {
        if let buffer = buffers[index.database] { return buffer }
        let buffer = TextIndexBuffer(index: index)
        buffers[index.database] = buffer
        return buffer
    }

    /// The buffer of `index` when it has grown large enough to be flushed at once.
    func largeBuffer(of index: TextIndexBinding) -> TextIndexBuffer? {
        guard let buffer = buffers[index.database], buffer.entryCount >= TextIndexBuffer.flushThreshold else { return nil }
        return buffer
    }

    /// Every pending buffer, by index database.
    var all: [(database: MDB_dbi, buffer: TextIndexBuffer)] {
        buffers.map { ($0.key, $0.value) }
    }

    /// Forgets the pending changes of one index database (merged, or its index is being
    /// cleared or deleted).
    mutating func discard(_ database: MDB_dbi) {
        buffers[database] = nil
    }
}
