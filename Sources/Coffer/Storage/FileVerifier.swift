import Foundation

/// Reads an LMDB 0.9 data file with bounds checks on every access and reports structural
/// damage, without LMDB: LMDB trusts its pages, so a damaged page makes it read out of
/// bounds (SIGSEGV), assert (`IS_LEAF` in `mdb_cursor_next`) or touch a page past a
/// truncated file's end (SIGBUS). Run this before LMDB walks a file of doubtful origin.
///
/// What it checks, for the newest meta page (the one LMDB opens):
/// - both meta pages: magic, version, page size; the file holds every page the newest one
///   says is in use, but free pages at its end (LMDB counts pages a transaction allocated
///   and freed again in its last page number without ever writing them);
/// - every page reachable from the main database, every named database and the free list:
///   page number and header, one of branch/leaf, node offsets and sizes inside the page,
///   tree depth, keys in order and within the bounds their parents give, each page reached
///   once (no cycles, no sharing), overflow chains inside the file and not overlapping;
/// - each named database's recorded entry and page counts against what the walk found;
/// - free-list page numbers in range and not also in use by a tree.
///
/// Layout facts (LMDB 0.9 on 64-bit): 16-byte page header (page number u64, pad u16,
/// flags u16, then lower/upper u16 or an overflow page count u32); node offsets (u16) from
/// byte 16; an 8-byte node header (data size or child page split over lo/hi/flags, key
/// size u16); 48-byte database records (pad u32, flags u16, depth u16, branch, leaf and
/// overflow page counts, entries, root, each u64).
struct FileVerifier {
    static let headerSize = 16
    static let nodeHeaderSize = 8
    static let invalidPage = UInt64.max

    // Page flags.
    static let branchFlag: UInt16 = 0x01
    static let leafFlag: UInt16 = 0x02
    static let overflowFlag: UInt16 = 0x04
    static let metaFlag: UInt16 = 0x08
    static let leaf2Flag: UInt16 = 0x20
    // Node flags.
    static let bigDataFlag: UInt16 = 0x01
    static let subDataFlag: UInt16 = 0x02
    static let dupDataFlag: UInt16 = 0x04
    // Database flags whose key order is not plain byte order.
    static let customOrderFlags: UInt16 = 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40

    struct Database {
        var flags: UInt16
        var depth: UInt16
        var branchPages: UInt64
        var leafPages: UInt64
        var overflowPages: UInt64
        var entries: UInt64
        var root: UInt64
    }

    let bytes: UnsafeRawBufferPointer
    let pageSize: Int
    let lastPage: UInt64
    /// The number of whole pages in the file: pages from here through `lastPage` are not in
    /// it, which is sound only for free pages.
    let filePages: UInt64
    let transactionId: UInt64
    private(set) var problems: [String] = []
    private(set) var pagesChecked = 0
    private var used: Set<UInt64> = []

    /// Verifies the file at `path`. Returns the problems (empty: intact) and the
    /// transaction id of the meta page checked.
    static func verify(file path: String) throws -> (problems: [String], transactionId: UInt64, pages: Int) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CofferError.storage(code: .system(.noSuchFile), message: "no store file at \(path)")
        }
        // Mapped, not copied; every access below stays inside the file's size.
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        return data.withUnsafeBytes { raw in
            guard let meta = newestMeta(raw) else {
                return (["no valid meta page: not an LMDB 0.9 file, or both meta pages are damaged"], 0, 0)
            }
            var verifier = FileVerifier(bytes: raw, pageSize: meta.page, lastPage: meta.last, transactionId: meta.txn)
            verifier.run(meta.offset)
            return (verifier.problems, meta.txn, verifier.pagesChecked)
        }
    }

    /// The valid meta page with the highest transaction id (page 0 gives the page size, so
    /// without it there is none).
    private static func newestMeta(_ raw: UnsafeRawBufferPointer) -> (offset: Int, page: Int, last: UInt64, txn: UInt64)? {
        guard let first = StoreFile.meta(in: raw) else { return nil }
        let second = raw.count > first.pageSize ? StoreFile.meta(in: UnsafeRawBufferPointer(rebasing: raw[first.pageSize...])) : nil
        if let second, second.transactionId > first.transactionId {
            return (first.pageSize, second.pageSize, second.lastPage, second.transactionId)
        }
        return (0, first.pageSize, first.lastPage, first.transactionId)
    }

    private init(bytes: UnsafeRawBufferPointer, pageSize: Int, lastPage: UInt64, transactionId: UInt64) {
        self.bytes = bytes
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.filePages = UInt64(bytes.count / pageSize)
        self.transactionId = transactionId
    }

    private mutating func report(_ problem: String) {
        // A badly damaged file could report thousands; the first ones say enough.
        if problems.count < 100 { problems.append(problem) }
    }

    private mutating func run(_ metaOffset: Int) {
        let freePages = walkFreeList(metaOffset)
        if let missing = pagesPastTheEnd(notIn: freePages) {
            report("the file holds \(bytes.count) bytes (\(filePages) pages), but the last committed transaction uses pages up to \(lastPage), and \(missing): the file is truncated")
        }
        let main = database(at: metaOffset + Self.headerSize + 72)
        var named: [(String, Database)] = []
        walk(main, name: "the main database", ordered: true) { key, value, flags in
            guard flags & Self.subDataFlag != 0 else { return nil }
            guard value.count == 48 else { return "the named database record \(Self.name(key)) has \(value.count) bytes" }
            named.append(("database \(Self.name(key))", Self.decodeDatabase(value)))
            return nil
        }
        for (name, db) in named {
            walk(db, name: name, ordered: db.flags & Self.customOrderFlags == 0) { _, _, _ in nil }
        }
        for page in freePages {
            if page > lastPage || page < 2 {
                report("the free list names page \(page), outside 2...\(lastPage)")
            } else if used.contains(page) {
                report("page \(page) is both free and in use")
            }
        }
    }

    /// Walks the free list of the meta page at `metaOffset` (marking its pages used) and
    /// returns the free page numbers.
    private mutating func walkFreeList(_ metaOffset: Int) -> [UInt64] {
        used = [0, 1]
        var freePages: [UInt64] = []
        walk(database(at: metaOffset + Self.headerSize + 24), name: "the free list", ordered: false) { _, value, _ in
            // Each value is a page-number list: a count, then that many page numbers.
            guard value.count >= 8 else { return "a free-list entry of \(value.count) bytes" }
            let count = value.loadUnaligned(as: UInt64.self)
            guard count <= UInt64((value.count - 8) / 8) else { return "a free-list entry claims \(count) pages in \(value.count) bytes" }
            for index in 0..<Int(count) { freePages.append(value.loadUnaligned(fromByteOffset: 8 + 8 * index, as: UInt64.self)) }
            return nil
        }
        return freePages
    }

    /// Nil when the file holds every page through `lastPage` but free ones; otherwise what is
    /// missing (for the report). Pages past the end that are free are never read by LMDB (it
    /// writes a free page before using it again), so they are not damage.
    private func pagesPastTheEnd(notIn freePages: [UInt64]) -> String? {
        guard lastPage >= filePages else { return nil }
        let (missingCount, overflow) = (lastPage - filePages).addingReportingOverflow(1)
        // More missing pages than free ones: some are in use, whatever the list says.
        guard !overflow, missingCount <= UInt64(freePages.count) else { return "\(missingCount) of its pages are missing" }
        let free = Set(freePages)
        guard let inUse = (filePages...lastPage).first(where: { !free.contains($0) }) else { return nil }
        return "page \(inUse), which is not free, is missing"
    }

    /// What the free list of a file's newest meta page says.
    struct FreeList {
        let pages: [UInt64]
        let pageSize: Int
        let lastPage: UInt64
        /// Whether every page through `lastPage` that the file lacks is in `pages`.
        let missingPagesAreFree: Bool
    }

    /// The free list of the newest meta page of the file at `path`, read with the bounds
    /// checks of the verifier (the list's own pages must be in the file); nil when the file
    /// has no valid meta page or the list is damaged. `StoreFile.checkSize` asks it of a file
    /// shorter than its meta page says, before LMDB maps it.
    static func freeList(file path: String) -> FreeList? {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return nil }
        return data.withUnsafeBytes { raw in
            guard let meta = newestMeta(raw) else { return nil }
            var verifier = FileVerifier(bytes: raw, pageSize: meta.page, lastPage: meta.last, transactionId: meta.txn)
            let pages = verifier.walkFreeList(meta.offset)
            guard verifier.problems.isEmpty else { return nil }
            return FreeList(pages: pages, pageSize: meta.page, lastPage: meta.last,
                            missingPagesAreFree: verifier.pagesPastTheEnd(notIn: pages) == nil)
        }
    }

    private func database(at offset: Int) -> Database {
        Self.decodeDatabase(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 48]))
    }

    private static func decodeDatabase(_ raw: UnsafeRawBufferPointer) -> Database {
        Database(flags: raw.loadUnaligned(fromByteOffset: 4, as: UInt16.self),
                 depth: raw.loadUnaligned(fromByteOffset: 6, as: UInt16.self),
                 branchPages: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                 leafPages: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                 overflowPages: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self),
                 entries: raw.loadUnaligned(fromByteOffset: 32, as: UInt64.self),
                 root: raw.loadUnaligned(fromByteOffset: 40, as: UInt64.self))
    }

    private static func name(_ key: UnsafeRawBufferPointer) -> String {
        "\"" + String(decoding: key.prefix(64), as: UTF8.self) + "\""
    }

    /// Counts found while walking one tree.
    private struct Tally {
        var branch: UInt64 = 0
        var leaf: UInt64 = 0
        var overflow: UInt64 = 0
        var entries: UInt64 = 0
    }

    /// Walks one B-tree, calling `visit` with each leaf entry (key, value or overflow data,
    /// node flags); `visit` returns a problem or nil.
    private mutating func walk(_ db: Database, name: String, ordered: Bool,
                               _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UInt16) -> String?) {
        guard db.root != Self.invalidPage else {
            if db.entries != 0 || db.depth != 0 { report("\(name) has no root page but claims \(db.entries) entries") }
            return
        }
        guard db.depth >= 1, db.depth <= 64 else {
            report("\(name) has depth \(db.depth)")
            return
        }
        var tally = Tally()
        page(db.root, depth: 1, of: db, name: name, ordered: ordered, low: nil, high: nil, tally: &tally, visit)
        if tally.entries != db.entries { report("\(name) claims \(db.entries) entries, its pages hold \(tally.entries)") }
        if tally.branch != db.branchPages || tally.leaf != db.leafPages || tally.overflow != db.overflowPages {
            report("\(name) claims \(db.branchPages)/\(db.leafPages)/\(db.overflowPages) branch/leaf/overflow pages, the walk found \(tally.branch)/\(tally.leaf)/\(tally.overflow)")
        }
    }

    /// A page whose header checked out: its bytes, kind, entry count and the start of its
    /// node area.
    private struct CheckedPage {
        let number: UInt64
        let bytes: UnsafeRawBufferPointer
        let isBranch: Bool
        let count: Int
        let upper: Int
    }

    /// One entry of a page: where it starts, its header fields and its key.
    private struct Node {
        let offset: Int
        let lo: UInt64
        let hi: UInt64
        let flags: UInt16
        let key: UnsafeRawBufferPointer
        var keyEnd: Int { offset + FileVerifier.nodeHeaderSize + key.count }
    }

    /// Checks one page and, for a branch, its children. `low`/`high` bound the keys the page
    /// may hold (from its parent's separator keys).
    private mutating func page(_ number: UInt64, depth: Int, of db: Database, name: String, ordered: Bool,
                               low: [UInt8]?, high: [UInt8]?, tally: inout Tally,
                               _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UInt16) -> String?) {
        guard let page = checkedPage(number, depth: depth, of: db, name: name) else { return }
        if page.isBranch { tally.branch += 1 } else { tally.leaf += 1 }
        var previousKey: [UInt8]? = nil
        for index in 0..<page.count {
            guard let node = node(index, of: page, name: name) else { return }
            // The first key of a branch page is implicitly the lowest: it is not compared.
            let comparable = !(page.isBranch && index == 0)
            if ordered && comparable {
                checkKeyOrder(node.key, at: index, of: page, name: name, previous: previousKey, low: low, high: high)
            }
            if comparable { previousKey = Array(node.key) }
            if page.isBranch {
                let child = node.lo | node.hi << 16 | UInt64(node.flags) << 32
                let childLow = comparable ? Array(node.key) : low
                let childHigh = separatorKey(after: index, of: page) ?? high
                self.page(child, depth: depth + 1, of: db, name: name, ordered: ordered, low: childLow, high: childHigh, tally: &tally, visit)
                continue
            }
            tally.entries += 1
            guard visitLeafEntry(node, at: index, of: page, name: name, tally: &tally, visit) else { return }
        }
    }

    /// The header checks of page `number` at `depth` of a tree: in the file and reached once,
    /// numbered as it says, a branch or leaf page at the right level, with sane free-space
    /// bounds and at least one entry. Nil (reported) when any fails.
    private mutating func checkedPage(_ number: UInt64, depth: Int, of db: Database, name: String) -> CheckedPage? {
        guard number >= 2, number <= lastPage else {
            report("\(name) refers to page \(number), outside 2...\(lastPage)")
            return nil
        }
        guard number < filePages else {
            report("\(name) refers to page \(number), past the end of the file (\(filePages) pages): the file is truncated")
            return nil
        }
        guard used.insert(number).inserted else {
            report("\(name) reaches page \(number) twice (a cycle or a shared page)")
            return nil
        }
        pagesChecked += 1
        let base = Int(number) * pageSize
        let page = UnsafeRawBufferPointer(rebasing: bytes[base..<base + pageSize])
        let storedNumber = page.loadUnaligned(as: UInt64.self)
        let flags = page.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        guard storedNumber == number else {
            report("page \(number) of \(name) says it is page \(storedNumber)")
            return nil
        }
        let isBranch = flags & Self.branchFlag != 0, isLeaf = flags & Self.leafFlag != 0
        guard isBranch != isLeaf, flags & (Self.overflowFlag | Self.metaFlag | Self.leaf2Flag) == 0 else {
            report("page \(number) of \(name) has flags 0x\(String(flags, radix: 16)), not a plain branch or leaf page")
            return nil
        }
        let isLastLevel = depth == Int(db.depth)
        if isLeaf != isLastLevel {
            report("page \(number) of \(name) is a \(isLeaf ? "leaf" : "branch") page at depth \(depth) of \(db.depth)")
            return nil
        }
        let lower = Int(page.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
        let upper = Int(page.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
        guard lower >= Self.headerSize, lower <= upper, upper <= pageSize, (lower - Self.headerSize) % 2 == 0 else {
            report("page \(number) of \(name) has free space bounds \(lower)...\(upper)")
            return nil
        }
        let count = (lower - Self.headerSize) / 2
        guard count >= 1 else {
            report("page \(number) of \(name) holds no entries")
            return nil
        }
        return CheckedPage(number: number, bytes: page, isBranch: isBranch, count: count, upper: upper)
    }

    /// Entry `index` of a checked page, or nil (reported) when it starts outside the node
    /// area or its key runs past the page.
    private mutating func node(_ index: Int, of page: CheckedPage, name: String) -> Node? {
        let bytes = page.bytes, number = page.number
        let offset = Int(bytes.loadUnaligned(fromByteOffset: Self.headerSize + 2 * index, as: UInt16.self))
        guard offset >= page.upper, offset + Self.nodeHeaderSize <= pageSize else {
            report("entry \(index) of page \(number) of \(name) starts at \(offset), outside the page's node area")
            return nil
        }
        let keySize = Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
        let keyStart = offset + Self.nodeHeaderSize
        guard keyStart + keySize <= pageSize else {
            report("the key of entry \(index) of page \(number) of \(name) runs past the page")
            return nil
        }
        return Node(offset: offset,
                    lo: UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)),
                    hi: UInt64(bytes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)),
                    flags: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self),
                    key: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyStart + keySize]))
    }

    /// Reports a key out of order with the previous one or outside its parent's bounds.
    private mutating func checkKeyOrder(_ key: UnsafeRawBufferPointer, at index: Int, of page: CheckedPage, name: String,
                                        previous: [UInt8]?, low: [UInt8]?, high: [UInt8]?) {
        let number = page.number
        if let previous, previous.withUnsafeBytes({ ByteSearch.order($0, key) }) >= 0 {
            report("keys of page \(number) of \(name) are out of order at entry \(index)")
        }
        if let low, low.withUnsafeBytes({ ByteSearch.order(key, $0) }) < 0 {
            report("a key of page \(number) of \(name) sorts before its parent's bound")
        }
        if let high, high.withUnsafeBytes({ ByteSearch.order(key, $0) }) >= 0 {
            report("a key of page \(number) of \(name) sorts after its parent's bound")
        }
    }

    /// The key of the branch entry after `index` (the upper bound of entry `index`'s child),
    /// or nil for the last entry or one whose key cannot be read (its own check reports it).
    private func separatorKey(after index: Int, of page: CheckedPage) -> [UInt8]? {
        guard index + 1 < page.count else { return nil }
        let bytes = page.bytes
        let nextOffset = Int(bytes.loadUnaligned(fromByteOffset: Self.headerSize + 2 * (index + 1), as: UInt16.self))
        guard nextOffset + Self.nodeHeaderSize <= pageSize else { return nil }
        let nextSize = Int(bytes.loadUnaligned(fromByteOffset: nextOffset + 6, as: UInt16.self))
        let start = nextOffset + Self.nodeHeaderSize
        guard start + nextSize <= pageSize else { return nil }
        return Array(bytes[start..<start + nextSize])
    }

    /// Checks a leaf entry's value (in the page or an overflow chain) and hands it to
    /// `visit`; returns false when the rest of the page cannot be read.
    private mutating func visitLeafEntry(_ node: Node, at index: Int, of page: CheckedPage, name: String, tally: inout Tally,
                                         _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UInt16) -> String?) -> Bool {
        let bytes = page.bytes, number = page.number
        let dataSize = Int(node.lo | node.hi << 16)
        let dataStart = node.keyEnd
        if node.flags & Self.dupDataFlag != 0 {
            report("entry \(index) of page \(number) of \(name) holds duplicates, which Coffer never writes")
            return true
        }
        if node.flags & Self.bigDataFlag != 0 {
            guard dataStart + 8 <= pageSize else {
                report("the overflow reference of entry \(index) of page \(number) of \(name) runs past the page")
                return false
            }
            let first = bytes.loadUnaligned(fromByteOffset: dataStart, as: UInt64.self)
            guard let value = overflow(first, size: dataSize, name: name, tally: &tally) else { return true }
            if let problem = visit(node.key, value, node.flags) { report("\(name), page \(number): \(problem)") }
        } else {
            guard dataStart + dataSize <= pageSize else {
                report("the value of entry \(index) of page \(number) of \(name) runs past the page")
                return false
            }
            let value = UnsafeRawBufferPointer(rebasing: bytes[dataStart..<dataStart + dataSize])
            if let problem = visit(node.key, value, node.flags) { report("\(name), page \(number): \(problem)") }
        }
        return true
    }

    /// Checks an overflow chain starting at `first` for a value of `size` bytes; returns
    /// the value's bytes.
    private mutating func overflow(_ first: UInt64, size: Int, name: String, tally: inout Tally) -> UnsafeRawBufferPointer? {
        guard first >= 2, first <= lastPage else {
            report("\(name) refers to overflow page \(first), outside 2...\(lastPage)")
            return nil
        }
        guard first < filePages else {
            report("\(name) refers to overflow page \(first), past the end of the file (\(filePages) pages): the file is truncated")
            return nil
        }
        let base = Int(first) * pageSize
        let header = UnsafeRawBufferPointer(rebasing: bytes[base..<base + Self.headerSize])
        let flags = header.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        let pages = UInt64(header.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard header.loadUnaligned(as: UInt64.self) == first, flags & Self.overflowFlag != 0 else {
            report("overflow page \(first) of \(name) has a damaged header")
            return nil
        }
        guard pages >= 1, first + pages - 1 <= lastPage, first + pages <= filePages, size <= Int(pages) * pageSize - Self.headerSize else {
            report("overflow page \(first) of \(name) claims \(pages) pages for \(size) bytes")
            return nil
        }
        for page in first..<first + pages where !used.insert(page).inserted {
            report("overflow page \(page) of \(name) is reached twice")
            return nil
        }
        pagesChecked += Int(pages)
        tally.overflow += pages
        return UnsafeRawBufferPointer(rebasing: bytes[base + Self.headerSize..<base + Self.headerSize + size])
    }
}
