import CLMDB

/// The full-text index of one `@FullText` property bound to a store: a plain LMDB database
/// of postings.
///
/// Keys and values (terms are letters and digits, so never start with or hold a 0x00 or
/// 0x01 byte, which keeps the three kinds of keys apart):
/// - `term ‖ 0x00 ‖ id` (8 bytes, big-endian) -> the term's positions in the property's
///   text, as LEB128 varints of the gaps between ascending positions;
/// - `0x01 ‖ id` -> the number of terms in the object's text (4 bytes, big-endian), for
///   ranking; present only when the text has terms;
/// - `0x00 "stats"` -> the number of objects with terms and the total number of terms
///   (8 + 8 bytes, big-endian), for ranking.
/// A put rewrites only the postings of terms whose positions changed.
final class TextIndexBinding: @unchecked Sendable {
    let position: Int
    let storedId: UInt16
    let propertyName: String
    let tokenizer: TextTokenizer
    let database: MDB_dbi

    init(position: Int, storedId: UInt16, propertyName: String, tokenizer: TextTokenizer, database: MDB_dbi) {
        self.position = position
        self.storedId = storedId
        self.propertyName = propertyName
        self.tokenizer = tokenizer
        self.database = database
    }

    static func databaseName(entity: UInt32, property: UInt16) -> String { "text.\(entity).\(property)" }

    static let statsKey: [UInt8] = [0x00] + Array("stats".utf8)

    /// A text's postings: each term's ascending positions.
    typealias Postings = [String: [UInt32]]

    /// The postings of the text the record holds for this property (none for nil). A value
    /// that is not text is damage.
    func postings(in record: RecordFields) throws -> Postings {
        guard let field = try record.field(storedId) else { return [:] }
        guard field.kind == .bytes else {
            throw record.damage("property \(propertyName) holds a \(field.kind) value, which a full-text index cannot hold")
        }
        return Self.postings(of: tokenizer.terms(in: String(decoding: field.payload, as: UTF8.self)))
    }

    static func postings(of terms: [String]) -> Postings {
        var postings: Postings = [:]
        for (position, term) in terms.enumerated() { postings[term, default: []].append(UInt32(truncatingIfNeeded: position)) }
        return postings
    }

    static func postingKey(_ term: String, _ id: Id) -> [UInt8] {
        var key = Array(term.utf8)
        key.append(0)
        withUnsafeBytes(of: id.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    static func lengthKey(_ id: Id) -> [UInt8] {
        var key: [UInt8] = [0x01]
        withUnsafeBytes(of: id.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    static func encodePositions(_ positions: [UInt32]) -> [UInt8] {
        var bytes: [UInt8] = []
        var previous: UInt32 = 0
        for position in positions {
            var gap = position &- previous
            previous = position
            repeat {
                let low = UInt8(gap & 0x7F)
                gap >>= 7
                bytes.append(gap == 0 ? low : low | 0x80)
            } while gap != 0
        }
        return bytes
    }

    /// Positions from their encoding; nil when the bytes are not a valid encoding.
    static func decodePositions(_ bytes: UnsafeRawBufferPointer) -> [UInt32]? {
        var positions: [UInt32] = []
        var current: UInt32 = 0
        var gap: UInt32 = 0
        var shift: UInt32 = 0
        for byte in bytes {
            guard shift < 32 else { return nil }
            gap |= UInt32(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                current = current &+ gap
                positions.append(current)
                gap = 0
                shift = 0
            } else {
                shift += 7
            }
        }
        return shift == 0 ? positions : nil
    }
}

/// Corpus statistics of one full-text index, for BM25.
struct TextIndexStats {
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
            } catch CofferError.corruptRecord {
                return nil
            }
        }
    }

    /// Applies a put or removal to every full-text index of `binding`: `old` from
    /// `textPostings` before the record changed, `new` one value per index.
    func applyTextPostings(of id: Id, binding: EntityBinding, old: [TextIndexBinding.Postings?]?, new: [TextIndexBinding.Postings]) throws {
        for (offset, index) in binding.textIndexes.enumerated() {
            var before: TextIndexBinding.Postings = [:]
            if let old {
                if let known = old[offset] {
                    before = known
                } else {
                    try deleteTextEntries(index, of: id)
                }
            }
            try updateTextIndex(index, id: id, old: before, new: new[offset])
        }
    }

    /// Brings the index from `old` to `new` postings of object `id`: deletes the postings of
    /// terms that are gone, writes those whose positions changed, and keeps the length entry
    /// and the statistics.
    func updateTextIndex(_ index: TextIndexBinding, id: Id, old: TextIndexBinding.Postings, new: TextIndexBinding.Postings) throws {
        guard old != new else { return }
        for (term, _) in old where new[term] == nil {
            try deleteTextKey(index, TextIndexBinding.postingKey(term, id))
        }
        for (term, positions) in new where old[term] != positions {
            try putTextKey(index, TextIndexBinding.postingKey(term, id), TextIndexBinding.encodePositions(positions))
        }
        let oldLength = UInt64(old.values.reduce(0) { $0 + $1.count })
        let newLength = UInt64(new.values.reduce(0) { $0 + $1.count })
        guard oldLength != newLength || old.isEmpty != new.isEmpty else { return }
        var stats = try textIndexStats(index)
        if !old.isEmpty { stats.documents &-= 1 }
        if !new.isEmpty { stats.documents &+= 1 }
        stats.terms = stats.terms &- oldLength &+ newLength
        try writeTextIndexStats(index, stats)
        if new.isEmpty {
            try deleteTextKey(index, TextIndexBinding.lengthKey(id))
        } else {
            try putTextKey(index, TextIndexBinding.lengthKey(id), withUnsafeBytes(of: UInt32(truncatingIfNeeded: newLength).bigEndian) { Array($0) })
        }
    }

    /// Removes every entry of `id` when its record cannot say which terms it had (damage):
    /// a walk over the whole index.
    func deleteTextEntries(_ index: TextIndexBinding, of id: Id) throws {
        var doomed: [[UInt8]] = []
        let suffix = withUnsafeBytes(of: id.bigEndian) { [0] + Array($0) }
        try withCursor(index.database, "repairing the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                if entry.key.count > 9, entry.key.suffix(9).elementsEqual(suffix) { doomed.append(Array(entry.key)) }
                current = try cursor.next()
            }
        }
        for key in doomed { try deleteTextKey(index, key) }
        try deleteTextKey(index, TextIndexBinding.lengthKey(id))
        try rebuildTextIndexStats(index)
    }

    /// The index's statistics (zero for an empty index).
    func textIndexStats(_ index: TextIndexBinding) throws -> TextIndexStats {
        try TextIndexBinding.statsKey.withUnsafeBytes { key in
            var keyVal = MDB_val(key)
            var value = MDB_val()
            let rc = mdb_get(txn, index.database, &keyVal, &value)
            if rc == MDB_NOTFOUND { return TextIndexStats() }
            try check(rc, "reading the full-text index statistics of \(index.propertyName)")
            let bytes = value.bytes
            guard bytes.count == 16 else {
                throw CofferError.storage(code: MDB_CORRUPTED, message: "the full-text index statistics of \(index.propertyName) are damaged (\(bytes.count) bytes)")
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
        var stats = TextIndexStats()
        try withCursor(index.database, "counting the full-text index on \(index.propertyName)") { cursor in
            var current = try cursor.seek([0x01])
            while let entry = current, entry.key.first == 0x01 {
                guard entry.key.count == 9, entry.value.count == 4 else {
                    throw CofferError.storage(code: MDB_CORRUPTED, message: "a length entry of the full-text index on \(index.propertyName) is damaged")
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
        try check(mdb_drop(txn, index.database, 0), "clearing the full-text index on \(index.propertyName)")
        let name = binding.schema.name
        var all: [(Id, TextIndexBinding.Postings)] = []
        try withCursor(binding.table, "building the full-text index on \(name).\(index.propertyName)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                let id = try IdKey.decode(entry.key, entity: name)
                all.append((id, try index.postings(in: RecordFields(bytes: entry.value, entity: name, id: id))))
                current = try cursor.next()
            }
        }
        for (id, postings) in all { try updateTextIndex(index, id: id, old: [:], new: postings) }
    }

    private func putTextKey(_ index: TextIndexBinding, _ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { keyBytes in
            try value.withUnsafeBytes { valueBytes in
                var keyVal = MDB_val(keyBytes)
                var valueVal = MDB_val(valueBytes)
                try check(mdb_put(txn, index.database, &keyVal, &valueVal, 0), "updating the full-text index on \(index.propertyName)")
            }
        }
    }

    private func deleteTextKey(_ index: TextIndexBinding, _ key: [UInt8]) throws {
        try key.withUnsafeBytes { keyBytes in
            var keyVal = MDB_val(keyBytes)
            let rc = mdb_del(txn, index.database, &keyVal, nil)
            if rc != MDB_NOTFOUND { try check(rc, "updating the full-text index on \(index.propertyName)") }
        }
    }
}
