/// One term's postings as flat arrays: for each entry an id and the encoded positions of the
/// term in that object's text (`PostingBlock`'s position encoding). An entry with no
/// position bytes is a removal (a stored posting always has at least one position).
///
/// Used for a transaction's pending index changes (entries in the order they were made; a
/// later entry for the same id replaces an earlier one) and for an index's logical contents
/// (ascending ids, no removals), which `coffer check` and the tests compare with what the
/// records imply. Flat arrays keep millions of postings at two allocations per term.
struct TermPostings: Equatable {
    /// An entry: its id, and the end of its bytes in `bytes` (it starts where the entry
    /// before it ends). One array for both, so adding an entry appends once.
    struct Entry: Equatable {
        var id: Id
        var end: Int
    }

    private(set) var entries: [Entry] = []
    private(set) var bytes: [UInt8] = []
    /// Whether the ids are strictly ascending (so no sort or de-duplication is needed).
    private(set) var isAscending = true

    /// The document (`TextIndexBuffer`'s serial) whose entry is last and still takes
    /// positions, and the last position added to it.
    private var openDocument = -1
    private var lastPosition: UInt32 = 0

    var count: Int { entries.count }

    /// The id of entry `i`.
    @inline(__always)
    func id(_ i: Int) -> Id { entries[i].id }

    static func == (a: TermPostings, b: TermPostings) -> Bool {
        a.entries == b.entries && a.bytes == b.bytes
    }

    /// Adds one occurrence of the term at `position` in object `id`, the text being
    /// tokenized as document `document`: the first occurrence in a document starts an entry,
    /// later ones (ascending positions) extend it.
    @inline(__always)
    mutating func appendPosition(_ position: UInt32, of id: Id, document: Int) {
        if openDocument == document {
            PostingBlock.appendVarint(UInt64(position &- lastPosition), to: &bytes)
            entries[entries.count - 1].end = bytes.count
        } else {
            noteId(id)
            openDocument = document
            PostingBlock.appendVarint(UInt64(position), to: &bytes)
            entries.append(Entry(id: id, end: bytes.count))
        }
        lastPosition = position
    }

    /// Adds the term's positions in object `id`.
    mutating func append(_ id: Id, positions: [UInt32]) {
        noteId(id)
        PostingBlock.encodePositions(positions, to: &bytes)
        entries.append(Entry(id: id, end: bytes.count))
    }

    /// Adds already encoded positions.
    mutating func append(_ id: Id, encoded: UnsafeRawBufferPointer) {
        noteId(id)
        bytes.append(contentsOf: encoded)
        entries.append(Entry(id: id, end: bytes.count))
    }

    /// Adds a removal of the term's posting in object `id`.
    mutating func appendRemoval(_ id: Id) {
        noteId(id)
        entries.append(Entry(id: id, end: bytes.count))
    }

    private mutating func noteId(_ id: Id) {
        openDocument = -1
        if let last = entries.last, last.id >= id { isAscending = false }
    }

    /// The byte range of entry `i`'s positions (empty for a removal).
    func positions(at i: Int) -> Range<Int> {
        (i == 0 ? 0 : entries[i - 1].end)..<entries[i].end
    }

    /// The entries' indices in ascending id order, one per id, the latest entry for an id
    /// winning.
    func latestInIdOrder() -> [Int] {
        if isAscending { return Array(entries.indices) }
        let sorted = entries.indices.sorted { entries[$0].id != entries[$1].id ? entries[$0].id < entries[$1].id : $0 < $1 }
        var result: [Int] = []
        result.reserveCapacity(sorted.count)
        for entry in sorted {
            if let last = result.last, entries[last].id == entries[entry].id {
                result[result.count - 1] = entry
            } else {
                result.append(entry)
            }
        }
        return result
    }
}
