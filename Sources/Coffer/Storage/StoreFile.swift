import CLMDB
import Foundation

/// Checks on the LMDB data file made before LMDB maps it.
///
/// LMDB trusts its file: a page beyond the end of a truncated file is a SIGBUS when touched
/// through the memory map, in any later read or write. The most common real damage is
/// exactly that (an interrupted copy, a full disk during a copy, a partial restore), so a
/// store refuses to open a file shorter than its last committed transaction says it is,
/// unless every page past the file's end is on the free list.
///
/// Layout facts used (LMDB 0.9, 64-bit): pages 0 and 1 are meta pages; each starts with a
/// 16-byte page header, then the meta record: magic `0xBEEFC0DE` (u32), version (u32),
/// address (8), map size (8), two 48-byte database records (the first one's leading u32 is
/// the page size), the last used page number (u64, at meta offset 120) and the transaction
/// id (u64, at 128). LMDB opens the meta with the higher transaction id.
enum StoreFile {
    static let magic: UInt32 = 0xBEEF_C0DE
    static let pageHeaderSize = 16

    /// What a meta page says.
    struct Meta: Equatable {
        let pageSize: Int
        let lastPage: UInt64
        let transactionId: UInt64
    }

    /// Throws when `directory/data.mdb` exists and is shorter than its newest valid meta
    /// page requires. A missing, empty or unrecognisable file is left to LMDB, which
    /// creates it or refuses it with an error.
    static func checkSize(directory: String) throws {
        let file = directory + "/data.mdb"
        guard let handle = FileHandle(forReadingAtPath: file) else { return }
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 0)
        guard let head = try handle.read(upToCount: 4096), !head.isEmpty else { return }
        guard let first = head.withUnsafeBytes({ meta(in: $0) }) else { return }
        var newest = first
        // The second meta page starts one page in.
        try handle.seek(toOffset: UInt64(first.pageSize))
        if let second = try handle.read(upToCount: 512)?.withUnsafeBytes({ meta(in: $0) }), second.transactionId > first.transactionId {
            newest = second
        }
        let (pages, overflow1) = newest.lastPage.addingReportingOverflow(1)
        let (required, overflow2) = pages.multipliedReportingOverflow(by: UInt64(newest.pageSize))
        guard !overflow1, !overflow2 else {
            throw CofferError.damagedStore(part: .file(path: directory), reason: "its meta page names page \(newest.lastPage)")
        }
        // LMDB counts pages a transaction allocated and freed again in its last page number
        // without writing them, so a file may legitimately end before that page: it is whole
        // when every page past its end is free (LMDB writes a free page before reading it).
        guard size >= required || FileVerifier.freeList(file: file)?.missingPagesAreFree == true else {
            throw CofferError.damagedStore(
                part: .file(path: directory),
                reason: "the store file \(file) is truncated: it holds \(size) bytes, but its last committed transaction uses \(required); restore it from a backup (see README, \"Damage and recovery\")")
        }
    }

    /// The meta record of the page `page` starts with, if it is a valid LMDB 0.9 one.
    static func meta(in page: UnsafeRawBufferPointer) -> Meta? {
        let start = pageHeaderSize
        guard page.count >= start + 136 else { return nil }
        func load<T: FixedWidthInteger>(_: T.Type, _ at: Int) -> T {
            T(littleEndian: page.loadUnaligned(fromByteOffset: start + at, as: T.self))
        }
        guard load(UInt32.self, 0) == magic, load(UInt32.self, 4) == 1 else { return nil }
        let pageSize = Int(load(UInt32.self, 24))
        // Page sizes are powers of two between 512 bytes and 64 KiB.
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        return Meta(pageSize: pageSize, lastPage: load(UInt64.self, 120), transactionId: load(UInt64.self, 128))
    }
}
