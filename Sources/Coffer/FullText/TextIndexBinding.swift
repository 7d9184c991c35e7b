import CLMDB

/// The full-text index of one `@FullText` property bound to a store: a plain LMDB database.
///
/// Keys and values (terms are letters and digits, so never start with or hold a 0x00 or
/// 0x01 byte, which keeps the three kinds of keys apart):
/// - `term ‖ 0x00 ‖ firstId` (8 bytes, big-endian) -> a block of the term's postings: the
///   ids from `firstId` on, each with the term's positions (see `PostingBlock`);
/// - `0x01 ‖ id` -> the number of terms in the object's text (4 bytes, big-endian), for
///   ranking; present only when the text has terms;
/// - `0x00 "stats"` -> the number of objects with terms and the total number of terms
///   (8 + 8 bytes, big-endian), for ranking.
/// A put changes only the postings of terms whose positions changed; the changes of a
/// transaction are buffered and merged into the blocks once (`TextIndexBuffer`).
final class TextIndexBinding: @unchecked Sendable {
    let position: Int
    let storedId: UInt16
    let propertyName: String
    /// The indexed entity's name, for errors.
    let entityName: String
    let tokenizer: TextTokenizer
    let database: MDB_dbi

    init(position: Int, storedId: UInt16, entityName: String, propertyName: String, tokenizer: TextTokenizer, database: MDB_dbi) {
        self.entityName = entityName
        self.position = position
        self.storedId = storedId
        self.propertyName = propertyName
        self.tokenizer = tokenizer
        self.database = database
    }

    static func databaseName(entity: UInt32, property: UInt16) -> String { "postings.\(entity).\(property)" }

    /// The database of an earlier layout (one key per term and object); deleted, and the
    /// index built again, when a store written by an earlier build is opened for writing.
    static func legacyDatabaseName(entity: UInt32, property: UInt16) -> String { "text.\(entity).\(property)" }

    static let statsKey: [UInt8] = [0x00] + Array("stats".utf8)

    /// A text's postings: each term's ascending positions.
    typealias Postings = [String: [UInt32]]

    /// The text the record holds for this property (nil for nil). A value that is not
    /// text is damage.
    func text(in record: RecordFields) throws -> String? {
        guard let field = try record.field(storedId) else { return nil }
        guard field.kind == .bytes else {
            throw record.damage("property \(propertyName) holds a \(field.kind) value, which a full-text index cannot hold")
        }
        return String(decoding: field.payload, as: UTF8.self)
    }

    /// The postings of the text the record holds for this property (none for nil).
    func postings(in record: RecordFields) throws -> Postings {
        guard let text = try text(in: record) else { return [:] }
        return Self.postings(of: tokenizer.terms(in: text))
    }

    static func postings(of terms: [String]) -> Postings {
        var postings: Postings = [:]
        for (position, term) in terms.enumerated() { postings[term, default: []].append(UInt32(truncatingIfNeeded: position)) }
        return postings
    }

    static func lengthKey(_ id: Id) -> [UInt8] {
        var key: [UInt8] = [0x01]
        withUnsafeBytes(of: id.bigEndian) { key.append(contentsOf: $0) }
        return key
    }
}

/// Corpus statistics of one full-text index, for BM25.
struct TextIndexStats: Equatable {
    var documents: UInt64 = 0
    var terms: UInt64 = 0
}

extension Transaction {
    /// The stored record's postings for each of `binding`'s full-text indexes (nil entries:
    /// the record is damaged, its entries are found by id); nil without a stored record or
    /// without full-text indexes.
    func textPostings(of id: Id?, binding: EntityBinding) throws -> [TextIndexBinding.Postings?]? {
        guard !binding.textIndexes.isEmpty, let id,
              let bytes = try record(id, table: binding.table, entity: binding.schema.name) else { return nil }
        let fields = RecordFields(bytes: bytes, entity: binding.schema.name, id: id)
        return try binding.textIndexes.map { index in
            do {
                return try index.postings(in: fields)
            } catch CofferError.damagedRecord {
                return nil
            }
        }
    }

    /// Applies a put or removal to every full-text index of `binding`: `old` from
    /// `textPostings` before the record changed, `record` the new record (nil: removed).
    func applyTextPostings(of id: Id, binding: EntityBinding, old: [TextIndexBinding.Postings?]?, new record: RecordFields?) throws {
        guard !binding.textIndexes.isEmpty else { return }
        for (offset, index) in binding.textIndexes.enumerated() {
            var before: TextIndexBinding.Postings = [:]
            if let old {
                if let known = old[offset] {
                    before = known
                } else {
                    try deleteTextEntries(index, of: id)
                }
            }
            if before.isEmpty {
                // Nothing to compare with: the terms go straight into the buffer.
                if let record, let text = try index.text(in: record) { try addText(text, of: id, to: index) }
            } else {
                try updateTextIndex(index, id: id, old: before, new: try record.map { try index.postings(in: $0) } ?? [:])
            }
            try flushTextIndexIfLarge(index)
        }
    }

    /// Adds the postings of object `id`, which has none in the index.
    func addText(_ text: String, of id: Id, to index: TextIndexBinding) throws {
        let buffer = pendingText.buffer(for: index)
        let length = buffer.addText(text, of: id)
        guard length > 0 else { return }
        buffer.documentDelta += 1
        buffer.termDelta += Int64(length)
        try putTextKey(index, TextIndexBinding.lengthKey(id), withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian) { Array($0) })
    }

    /// Brings the index from `old` to `new` postings of object `id`: removes the postings of
    /// terms that are gone, replaces those whose positions changed (both buffered until the
    /// next flush), and keeps the length entry and the statistics.
    func updateTextIndex(_ index: TextIndexBinding, id: Id, old: TextIndexBinding.Postings, new: TextIndexBinding.Postings) throws {
        guard old != new else { return }
        let buffer = pendingText.buffer(for: index)
        for (term, _) in old where new[term] == nil { buffer.remove(term, of: id) }
        for (term, positions) in new where old[term] != positions { buffer.set(term, of: id, positions: positions) }
        let oldLength = old.values.reduce(0) { $0 + $1.count }
        let newLength = new.values.reduce(0) { $0 + $1.count }
        guard oldLength != newLength || old.isEmpty != new.isEmpty else { return }
        if !old.isEmpty { buffer.documentDelta -= 1 }
        if !new.isEmpty { buffer.documentDelta += 1 }
        buffer.termDelta += Int64(newLength) - Int64(oldLength)
        if new.isEmpty {
            try deleteTextKey(index, TextIndexBinding.lengthKey(id))
        } else {
            try putTextKey(index, TextIndexBinding.lengthKey(id), withUnsafeBytes(of: UInt32(truncatingIfNeeded: newLength).bigEndian) { Array($0) })
        }
    }

    /// Removes every entry of `id` when its record cannot say which terms it had (damage):
    /// a walk over the whole index.
    func deleteTextEntries(_ index: TextIndexBinding, of id: Id) throws {
        try flushTextIndexes()
        var terms: [String] = []
        try forEachTextBlock(index) { term, firstId, reader in
            guard firstId <= id else { return }
            var reader = reader
            while let entry = try self.next(&reader, index: index, term: term) {
                if entry.id == id { terms.append(term) }
                if entry.id >= id { break }
            }
        }
        let buffer = pendingText.buffer(for: index)
        for term in terms { buffer.remove(term, of: id) }
        try flushTextIndexes()
        try deleteTextKey(index, TextIndexBinding.lengthKey(id))
        try rebuildTextIndexStats(index)
    }

    /// Calls `body` with every posting block of the index, in key order, with its term and
    /// first id. A key that is neither a block, a length entry nor the statistics throws.
    func forEachTextBlock(_ index: TextIndexBinding, _ body: (_ term: String, _ firstId: Id, PostingBlock.Reader) throws -> Void) throws {
        try withCursor(index.database, "reading the full-text index on \(index.propertyName)") { cursor in
            // Blocks sort after the statistics (0x00) and length entries (0x01).
            var current = try cursor.seek([0x02])
            while let entry = current {
                let key = entry.key
                guard key.count >= 10, key[key.count - 9] == 0, let term = String(validating: key[..<(key.count - 9)], as: UTF8.self) else {
                    throw index.damaged("a key is damaged")
                }
                let firstId = Id(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
                try body(term, firstId, try index.reader(entry.value, firstId: firstId, term: term))
                current = try cursor.next()
            }
        }
    }

    @inline(__always)
    func next(_ reader: inout PostingBlock.Reader, index: TextIndexBinding, term: String) throws -> (id: Id, positions: Range<Int>)? {
        try index.next(&reader, term: term)
    }

    /// The index's statistics (zero for an empty index), pending changes included.
    func textIndexStats(_ index: TextIndexBinding) throws -> TextIndexStats {
        try flushTextIndexes()
        return try storedTextIndexStats(index)
    }

    /// The statistics as LMDB holds them.
    func storedTextIndexStats(_ index: TextIndexBinding) throws -> TextIndexStats {
        try TextIndexBinding.statsKey.withUnsafeBytes { key in
            var keyVal = MDB_val(key)
            var value = MDB_val()
            let rc = mdb_get(txn, index.database, &keyVal, &value)
            if rc == MDB_NOTFOUND { return TextIndexStats() }
            try check(rc, "reading the full-text index statistics of \(index.propertyName)")
            let bytes = value.bytes
            guard bytes.count == 16 else {
                throw index.damaged("its statistics are damaged (\(bytes.count) bytes)")
            }
            return TextIndexStats(documents: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                                  terms: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    /// Writes the statistics; an index without text has no statistics entry (so an index
    /// is a function of the stored texts alone, whatever their history).
    func writeTextIndexStats(_ index: TextIndexBinding, _ stats: TextIndexStats) throws {
        guard stats.documents != 0 || stats.terms != 0 else {
            try deleteTextKey(index, TextIndexBinding.statsKey)
            return
        }
        var bytes = withUnsafeBytes(of: stats.documents.bigEndian) { Array($0) }
        withUnsafeBytes(of: stats.terms.bigEndian) { bytes.append(contentsOf: $0) }
        try putTextKey(index, TextIndexBinding.statsKey, bytes)
    }

    /// Recounts the statistics from the length entries.
    func rebuildTextIndexStats(_ index: TextIndexBinding) throws {
        try flushTextIndexes()
        var stats = TextIndexStats()
        try withCursor(index.database, "counting the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.seek([0x01])
            while let entry = current, entry.key.first == 0x01 {
                guard entry.key.count == 9, entry.value.count == 4 else {
                    throw index.damaged("a length entry is damaged")
                }
                stats.documents &+= 1
                stats.terms &+= UInt64(UInt32(bigEndian: entry.value.loadUnaligned(as: UInt32.self)))
                current = try cursor.next()
            }
        }
        try writeTextIndexStats(index, stats)
    }

    /// Fills the index from every stored record (a new index, or a new tokenizer).
    func buildTextIndex(_ index: TextIndexBinding, binding: EntityBinding) throws {
        pendingText.discard(index.database)
        try check(mdb_drop(txn, index.database, 0), "clearing the full-text index on \(index.propertyName)")
        let name = binding.schema.name
        try withCursor(binding.table, "building the full-text index on \(name).\(index.propertyName)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                let id = try IdKey.decode(entry.key, entity: name)
                // Only the buffer and the index's own database are written here, never the
                // table this cursor walks.
                if let text = try index.text(in: RecordFields(bytes: entry.value, entity: name, id: id)) { try addText(text, of: id, to: index) }
                try flushTextIndexIfLarge(index)
                current = try cursor.next()
            }
        }
        try flushTextIndexes()
    }

    /// The index's logical contents (pending changes included), checking every block.
    func textIndexContents(_ index: TextIndexBinding) throws -> TextIndexContents {
        try flushTextIndexes()
        var contents = TextIndexContents()
        var lastTerm: String?
        var lastId: Id = 0
        try forEachTextBlock(index) { term, _, reader in
            var reader = reader
            while let entry = try self.next(&reader, index: index, term: term) {
                // Blocks of a term hold ascending ids across blocks too.
                if term == lastTerm, entry.id <= lastId { throw index.damage(term: term) }
                lastTerm = term
                lastId = entry.id
                contents.postings[term, default: TermPostings()].append(entry.id, encoded: UnsafeRawBufferPointer(rebasing: reader.bytes[entry.positions]))
            }
        }
        try withCursor(index.database, "reading the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.seek([0x01])
            while let entry = current, entry.key.first == 0x01 {
                guard entry.key.count == 9, entry.value.count == 4 else {
                    throw index.damaged("a length entry is damaged")
                }
                contents.lengths[Id(bigEndian: entry.key.loadUnaligned(fromByteOffset: 1, as: UInt64.self))] = UInt32(bigEndian: entry.value.loadUnaligned(as: UInt32.self))
                current = try cursor.next()
            }
        }
        let stats = try storedTextIndexStats(index)
        contents.stats = stats.documents == 0 && stats.terms == 0 ? nil : stats
        return contents
    }

    func putTextKey(_ index: TextIndexBinding, _ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { keyBytes in
            try value.withUnsafeBytes { valueBytes in
                var keyVal = MDB_val(keyBytes)
                var valueVal = MDB_val(valueBytes)
                try check(mdb_put(txn, index.database, &keyVal, &valueVal, 0), "updating the full-text index on \(index.propertyName)")
            }
        }
    }

    func deleteTextKey(_ index: TextIndexBinding, _ key: [UInt8]) throws {
        try key.withUnsafeBytes { keyBytes in
            var keyVal = MDB_val(keyBytes)
            let rc = mdb_del(txn, index.database, &keyVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "updating the full-text index on \(index.propertyName)") }
        }
    }
}

/// What a full-text index holds, independent of how its postings are cut into blocks:
/// what `coffer check` and the tests compare with what the records imply.
struct TextIndexContents: Equatable {
    /// Term -> ascending ids with their encoded positions.
    var postings: [String: TermPostings] = [:]
    /// Id -> number of terms, for objects with text.
    var lengths: [Id: UInt32] = [:]
    /// Nil for an index without text.
    var stats: TextIndexStats?

    /// Adds one object's postings; objects must come in ascending id order.
    mutating func add(_ id: Id, _ postings: TextIndexBinding.Postings) {
        guard !postings.isEmpty else { return }
        var length: UInt64 = 0
        for (term, positions) in postings {
            self.postings[term, default: TermPostings()].append(id, positions: positions)
            length += UInt64(positions.count)
        }
        lengths[id] = UInt32(truncatingIfNeeded: length)
        var stats = self.stats ?? TextIndexStats()
        stats.documents += 1
        stats.terms += length
        self.stats = stats
    }
}
