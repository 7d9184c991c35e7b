import CLMDB

/// A write transaction's changes to one full-text index that are not in LMDB yet.
///
/// Puts and removes record their postings here; `Transaction.flushTextIndexes()` merges
/// them into the index's blocks term by term (each touched block read and written once), so
/// a transaction that stores many objects rewrites a term's last block once, not once per
/// object. Every reader of an index in the transaction flushes first, and the transaction
/// flushes before it commits, so nothing outside this type ever sees the buffer; a rolled
/// back or retried transaction drops it with the transaction.
final class TextIndexBuffer {
    let index: TextIndexBinding
    // The buffer belongs to one transaction, so to one thread: no dynamic exclusivity checks
    // (they cost a tenth of indexing).
    /// Pending postings, one per term (entries in the order they were made).
    @exclusivity(unchecked) private(set) var postings: [TermPostings] = []
    /// `terms[i]` is the term of `postings[i]`.
    @exclusivity(unchecked) private(set) var terms: [String] = []
    @exclusivity(unchecked) private var slotOfTerm: [String: Int] = [:]
    /// Folded word -> its term's slot (-1: the word is no term): a word is stemmed once per
    /// transaction, and indexing costs one look-up per word of text.
    @exclusivity(unchecked) private var slotOfWord = WordSlots()
    /// Numbers the texts added by `addText`, so a term's entry takes only its own
    /// document's positions.
    @exclusivity(unchecked) private var documentSerial = 0
    /// Changes to the statistics: objects with text, and terms.
    @exclusivity(unchecked) var documentDelta: Int64 = 0
    @exclusivity(unchecked) var termDelta: Int64 = 0
    /// Pending entries over all terms, to flush before the buffer grows without bound.
    @exclusivity(unchecked) private(set) var entryCount = 0

    /// A buffer holding this many entries is flushed at once (memory stays bounded in a
    /// transaction that stores millions of objects).
    static let flushThreshold = 2_000_000

    init(index: TextIndexBinding) {
        self.index = index
    }

    private func slot(ofTerm term: String) -> Int {
        if let slot = slotOfTerm[term] { return slot }
        let slot = postings.count
        postings.append(TermPostings())
        terms.append(term)
        slotOfTerm[term] = slot
        return slot
    }

    /// The slot of a folded word's term (-1: none).
    @inline(__always)
    private func slot(ofWord word: UnsafeBufferPointer<UInt8>) -> Int {
        let hash = slotOfWord.hash(word)
        if let known = slotOfWord.find(word, hash: hash) { return known }
        let term = index.tokenizer.term(ofWord: String(decoding: word, as: UTF8.self))
        let slot = term.isEmpty ? -1 : self.slot(ofTerm: term)
        slotOfWord.insert(word, hash: hash, slot: slot)
        return slot
    }

    /// Adds every term of `text` as new postings of object `id`, which has no postings in
    /// this index: the insert path, without building a per-object dictionary. Returns the
    /// number of terms.
    func addText(_ text: String, of id: Id) -> Int {
        documentSerial += 1
        let document = documentSerial
        var position: UInt32 = 0
        func add(_ word: UnsafeBufferPointer<UInt8>) {
            let slot = slot(ofWord: word)
            guard slot >= 0 else { return }
            let entries = postings[slot].count
            postings[slot].appendPosition(position, of: id, document: document)
            entryCount += postings[slot].count - entries
            position &+= 1
        }
        var text = text
        let ascii = text.withUTF8 { TextTokenizer.isASCII($0) }
        if ascii {
            text.withUTF8 { TextTokenizer.forEachASCIIWord(in: $0, add) }
        } else {
            TextTokenizer.forEachWord(in: text) { word in
                var word = word
                word.withUTF8(add)
            }
        }
        return Int(position)
    }

    /// Replaces object `id`'s postings of `term`.
    func set(_ term: String, of id: Id, positions: [UInt32]) {
        postings[slot(ofTerm: term)].append(id, positions: positions)
        entryCount += 1
    }

    /// Removes object `id`'s posting of `term`.
    func remove(_ term: String, of id: Id) {
        postings[slot(ofTerm: term)].appendRemoval(id)
        entryCount += 1
    }

    /// An open-addressing table from words (bytes) to slots, without making a `String` per
    /// word of text: the words live in one byte arena, hashed with FNV-1a from a random
    /// seed (so crafted texts cannot aim at collisions).
    struct WordSlots {
        private struct Entry {
            var hash: UInt64 = 0
            var start: Int = 0
            var length: Int = -1   // -1: empty
            var slot: Int = 0
        }

        private var entries = [Entry](repeating: Entry(), count: 1_024)
        private var arena: [UInt8] = []
        private var count = 0
        private let seed = UInt64.random(in: 0...UInt64.max)

        @inline(__always)
        func hash(_ word: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
            for byte in word { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            return hash
        }

        @inline(__always)
        func find(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
            let mask = entries.count - 1
            var i = Int(truncatingIfNeeded: hash) & mask
            while true {
                let entry = entries[i]
                if entry.length < 0 { return nil }
                if entry.hash == hash, entry.length == word.count,
                   arena.withUnsafeBufferPointer({ word.elementsEqual(UnsafeBufferPointer(rebasing: $0[entry.start..<(entry.start + entry.length)])) }) {
                    return entry.slot
                }
                i = (i + 1) & mask
            }
        }

        mutating func insert(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64, slot: Int) {
            if (count + 1) * 2 > entries.count { grow() }
            let mask = entries.count - 1
            var i = Int(truncatingIfNeeded: hash) & mask
            while entries[i].length >= 0 { i = (i + 1) & mask }
            entries[i] = Entry(hash: hash, start: arena.count, length: word.count, slot: slot)
            arena.append(contentsOf: word)
            count += 1
        }

        private mutating func grow() {
            let old = entries
            entries = [Entry](repeating: Entry(), count: old.count * 2)
            let mask = entries.count - 1
            for entry in old where entry.length >= 0 {
                var i = Int(truncatingIfNeeded: entry.hash) & mask
                while entries[i].length >= 0 { i = (i + 1) & mask }
                entries[i] = entry
            }
        }
    }
}

extension Transaction {
    /// Writes every pending full-text change into LMDB. Called before any read of a
    /// full-text index in this transaction and before the transaction commits.
    func flushTextIndexes() throws {
        guard !pendingText.isEmpty else { return }
        for (database, buffer) in pendingText.all {
            try flush(buffer)
            // Dropped only once merged: after a failure (which a caller inside the write may
            // catch) the buffer is still there, so the commit's flush merges it again —
            // merging is idempotent, the latest entry per id wins and the statistics are
            // written last — and fails again rather than commit an index without it.
            pendingText.discard(database)
        }
    }

    /// Flushes one buffer when it has grown large.
    func flushTextIndexIfLarge(_ index: TextIndexBinding) throws {
        guard let buffer = pendingText.largeBuffer(of: index) else { return }
        try flush(buffer)
        pendingText.discard(index.database)
    }

    private func flush(_ buffer: TextIndexBuffer) throws {
        let index = buffer.index
        try withCursor(index.database, "updating the full-text index on \(index.propertyName)") { cursor in
            // Terms in byte order: the blocks are visited in key order.
            let terms = buffer.terms
            for slot in terms.indices.sorted(by: { terms[$0].utf8.lexicographicallyPrecedes(terms[$1].utf8) }) {
                try merge(buffer.postings[slot], term: terms[slot], into: index, cursor: cursor)
            }
        }
        guard buffer.documentDelta != 0 || buffer.termDelta != 0 else { return }
        var stats = try storedTextIndexStats(index)
        stats.documents = stats.documents &+ UInt64(bitPattern: buffer.documentDelta)
        stats.terms = stats.terms &+ UInt64(bitPattern: buffer.termDelta)
        try writeTextIndexStats(index, stats)
    }

    /// Merges one term's pending postings into its blocks. Each pending entry goes to the
    /// block whose first id is the greatest at or below its id (or, before the first block,
    /// into new blocks); a block with pending entries is decoded, merged and written again,
    /// cut into blocks of `PostingBlock.targetSize`.
    private func merge(_ postings: TermPostings, term: String, into index: TextIndexBinding, cursor: Cursor) throws {
        let order = postings.latestInIdOrder()
        let blocks = TermBlocks(term: term, prefix: PostingBlock.termPrefix(term), index: index)
        var next = 0
        while next < order.count {
            let place = try blocks.place(of: postings.id(order[next]), cursor: cursor)
            // The pending entries of this block: those below the first id of the next one.
            var end = next
            while end < order.count, place.following.map({ postings.id(order[end]) < $0 }) ?? true { end += 1 }
            let merged = try blocks.merge(place, with: postings, order: order, pending: next..<end)
            if let firstId = place.firstId { try deleteTextKey(index, PostingBlock.key(term, firstId)) }
            for (firstId, bytes) in merged { try putTextKey(index, PostingBlock.key(term, firstId), bytes) }
            next = end
        }
    }
}

/// Where a pending id goes among a term's stored blocks.
private struct BlockPlace {
    /// The stored block holding the id's place, and its first id; nil before the first block.
    var block: Cursor.Entry?
    var firstId: Id?
    /// The first id of the block after it; nil after the last block.
    var following: Id?
}

/// The stored posting blocks of one term (keys `prefix` + a block's first id), read through
/// a cursor on the index, and merged with pending postings.
private struct TermBlocks {
    let term: String
    let prefix: [UInt8]
    let index: TextIndexBinding

    /// The first id of the block `entry` is, or nil when it is no block of this term.
    @inline(__always)
    func firstId(_ entry: Cursor.Entry?) throws -> Id? {
        guard let entry, entry.key.starts(with: prefix) else { return nil }
        guard let id = PostingBlock.firstId(of: entry.key, prefix: prefix) else { throw index.damage(term: term) }
        return id
    }

    /// The block holding `id`'s place: the one that starts at `id`, else the one before
    /// the first block after `id`.
    @inline(__always)
    func place(of id: Id, cursor: Cursor) throws -> BlockPlace {
        let atOrAfter = try cursor.seek(PostingBlock.key(term, id))
        if let found = try firstId(atOrAfter), found == id {
            return BlockPlace(block: atOrAfter, firstId: found, following: try firstId(try cursor.next()))
        }
        let following = try firstId(atOrAfter)
        let before = atOrAfter == nil ? try cursor.last() : try cursor.previous()
        guard let found = try firstId(before) else { return BlockPlace(block: nil, firstId: nil, following: following) }
        return BlockPlace(block: before, firstId: found, following: following)
    }

    /// The entries of `place`'s block merged with the pending ones (`pending`, positions in
    /// `order`), in id order, cut into blocks: a pending entry replaces the stored one of its
    /// id, and one without positions removes it.
    @inline(__always)
    func merge(_ place: BlockPlace, with postings: TermPostings, order: [Int],
               pending: Range<Int>) throws -> [(firstId: Id, bytes: [UInt8])] {
        var writer = PostingBlock.Writer()
        try postings.bytes.withUnsafeBytes { pendingBytes in
            var stored: PostingBlock.Reader?
            var current: (id: Id, positions: Range<Int>)?
            if let block = place.block, let blockFirstId = place.firstId {
                stored = try index.reader(block.value, firstId: blockFirstId, term: term)
                current = try index.next(&stored!, term: term)
            }
            var next = pending.lowerBound
            let end = pending.upperBound
            while current != nil || next < end {
                if let entry = current, next == end || entry.id < postings.id(order[next]) {
                    writer.append(entry.id, positions: UnsafeRawBufferPointer(rebasing: stored!.bytes[entry.positions]))
                    current = try index.next(&stored!, term: term)
                    continue
                }
                let entry = order[next]
                let pendingId = postings.id(entry)
                if current?.id == pendingId { current = try index.next(&stored!, term: term) }   // replaced or removed
                let range = postings.positions(at: entry)
                if !range.isEmpty { writer.append(pendingId, positions: UnsafeRawBufferPointer(rebasing: pendingBytes[range])) }
                next += 1
            }
            // Entries of the block after the last pending one must stay below `following`:
            // they do, the block's ids are below it by the block invariant.
        }
        return writer.finish()
    }
}

extension TextIndexBinding {
    /// The error for a block or key of this index that breaks the format.
    func damage(term: String) -> CofferError {
        damaged("a block of term \"\(term)\" is damaged")
    }

    /// The error for damage of this index that `reason` describes.
    func damaged(_ reason: String) -> CofferError {
        CofferError.damagedStore(part: .index(entity: entityName, property: propertyName), reason: reason)
    }

    func reader(_ bytes: UnsafeRawBufferPointer, firstId: Id, term: String) throws -> PostingBlock.Reader {
        do {
            return try PostingBlock.Reader(bytes, firstId: firstId)
        } catch {
            throw damage(term: term)
        }
    }

    @inline(__always)
    func next(_ reader: inout PostingBlock.Reader, term: String) throws -> (id: Id, positions: Range<Int>)? {
        do {
            return try reader.next()
        } catch {
            throw damage(term: term)
        }
    }
}
