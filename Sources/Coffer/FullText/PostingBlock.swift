/// The byte format of one block of a term's postings, and its reader and writer.
///
/// A term's postings are split into blocks stored under `term ‖ 0x00 ‖ firstId` (8 bytes,
/// big-endian). A block holds the postings of ascending ids, each as three parts:
///
///     idDelta   LEB128 varint  0 for the first entry (its id is the key's), then the gap
///                              to the previous id (at least 1)
///     length    LEB128 varint  the number of bytes of positions that follow (at least 1)
///     positions LEB128 varints the gaps between the term's ascending positions in the text
///
/// Invariants of a stored block: at least one entry; ids strictly ascending and below the
/// next block's first id; every varint complete and within the block. Blocks are cut at
/// ``targetSize`` bytes (an entry is never split, so one entry may make a block larger), so
/// a common term costs one key per few hundred objects instead of one per object, and a
/// search reads ids without decoding positions.
enum PostingBlock {
    /// A block is closed once adding an entry would take it beyond this size: small enough
    /// to stay on an LMDB leaf page (no overflow pages), large enough that keys are few.
    static let targetSize = 1_024

    /// A block's key: `term ‖ 0x00 ‖ firstId`.
    static func key(_ term: String, _ firstId: Id) -> [UInt8] {
        var key = termPrefix(term)
        withUnsafeBytes(of: firstId.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// The key prefix of every block of `term`.
    static func termPrefix(_ term: String) -> [UInt8] {
        var key = Array(term.utf8)
        key.append(0)
        return key
    }

    /// The first id of a block key of the term with `prefix`; nil when the key is not one.
    static func firstId(of key: UnsafeRawBufferPointer, prefix: [UInt8]) -> Id? {
        guard key.count == prefix.count + 8, key.starts(with: prefix) else { return nil }
        return Id(bigEndian: key.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self))
    }

    /// Appends `value` as a LEB128 varint.
    @inline(__always)
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// The number of bytes of `value` as a varint.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        value < 0x80 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// The positions' encoding: the gaps between ascending positions as varints.
    static func encodePositions(_ positions: [UInt32], to bytes: inout [UInt8]) {
        var previous: UInt32 = 0
        for position in positions {
            appendVarint(UInt64(position &- previous), to: &bytes)
            previous = position
        }
    }

    /// Positions from their encoding; nil when the bytes are not a valid encoding.
    static func decodePositions(_ bytes: UnsafeRawBufferPointer, into positions: inout [UInt32]) -> Bool {
        var current: UInt32 = 0
        var gap: UInt32 = 0
        var shift: UInt32 = 0
        for byte in bytes {
            guard shift < 32 else { return false }
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
        return shift == 0
    }

    /// The number of positions in an encoding (each varint ends with a byte below 0x80).
    @inline(__always)
    static func positionCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        var count = 0
        for byte in bytes where byte < 0x80 { count += 1 }
        return count
    }

    /// Appends a block's entries to `list`, decoded to `detail`: the search path, one loop
    /// per block over `Reader` (ids written into a buffer sized for the block, not appended
    /// one by one). False when the block breaks the format (`list` then holds part of it,
    /// and the caller throws).
    static func decode(_ bytes: UnsafeRawBufferPointer, firstId: Id, detail: PostingList.Detail, into list: inout PostingList) -> Bool {
        guard var reader = try? Reader(bytes, firstId: firstId) else { return false }
        // Each entry takes at least three bytes.
        let capacity = bytes.count / 3 + 1
        var damaged = false
        var counts: [Int] = []
        var positionEnds: [Int] = []
        if detail >= .counts { counts.reserveCapacity(capacity) }
        // (Not `list.positions.reserveCapacity`: reserving a little more per block would
        // copy the whole array each time instead of growing it geometrically.)
        if detail == .positions { positionEnds.reserveCapacity(capacity) }
        let ids = [Id](unsafeUninitializedCapacity: capacity) { buffer, count in
            do {
                while let entry = try reader.next() {
                    guard count < capacity else { damaged = true; return }
                    buffer[count] = entry.id
                    count += 1
                    let positions = UnsafeRawBufferPointer(rebasing: bytes[entry.positions])
                    switch detail {
                    case .ids:
                        break
                    case .counts:
                        counts.append(positionCount(positions))
                    case .positions:
                        let before = list.positions.count
                        guard decodePositions(positions, into: &list.positions) else { damaged = true; return }
                        counts.append(list.positions.count - before)
                        positionEnds.append(list.positions.count)
                    }
                }
            } catch {
                damaged = true   // Reader.Damage: the caller reports the block
            }
        }
        guard !damaged else { return false }
        list.ids.append(contentsOf: ids)
        list.counts.append(contentsOf: counts)
        list.positionEnds.append(contentsOf: positionEnds)
        return true
    }

    /// Walks a block's entries, checking the format as it goes: any violation makes `next()`
    /// throw ``Damage``, never read out of bounds.
    struct Reader {
        /// A block that breaks the format.
        struct Damage: Error {}

        let bytes: UnsafeRawBufferPointer
        private var offset = 0
        private var previous: Id?
        private let firstId: Id

        init(_ bytes: UnsafeRawBufferPointer, firstId: Id) throws {
            guard !bytes.isEmpty else { throw Damage() }
            self.bytes = bytes
            self.firstId = firstId
        }

        /// The next entry: its id and the byte range of its positions in `bytes`.
        @inline(__always)
        mutating func next() throws -> (id: Id, positions: Range<Int>)? {
            guard offset < bytes.count else { return nil }
            let delta = try varint()
            let id: Id
            if let previous {
                let (sum, overflow) = previous.addingReportingOverflow(delta)
                guard delta > 0, !overflow else { throw Damage() }
                id = sum
            } else {
                guard delta == 0 else { throw Damage() }
                id = firstId
            }
            let length = try varint()
            guard length > 0, length <= UInt64(bytes.count - offset) else { throw Damage() }
            let end = offset + Int(length)
            // The last byte of the last position varint has no continuation bit.
            guard bytes[end - 1] < 0x80 else { throw Damage() }
            let range = offset..<end
            offset = end
            previous = id
            return (id, range)
        }

        @inline(__always)
        private mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                guard shift < 64, shift < 63 || byte <= 1 else { throw Damage() }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw Damage()
        }
    }

    /// Builds blocks from entries given in ascending id order, cutting at ``targetSize``.
    struct Writer {
        /// The finished blocks: first id and bytes.
        private(set) var blocks: [(firstId: Id, bytes: [UInt8])] = []
        private var current: [UInt8] = []
        private var firstId: Id = 0
        private var lastId: Id = 0

        /// Appends one entry; `id` must be above the previous entry's, and `positions` a
        /// non-empty encoding.
        mutating func append(_ id: Id, positions: UnsafeRawBufferPointer) {
            assert(current.isEmpty && blocks.isEmpty || id > lastId, "posting ids must be appended in ascending order")
            assert(!positions.isEmpty && positions[positions.count - 1] < 0x80, "an entry needs complete positions")
            let length = UInt64(positions.count)
            let size = PostingBlock.varintSize(current.isEmpty ? 0 : id &- lastId) + PostingBlock.varintSize(length) + positions.count
            if !current.isEmpty, current.count + size > PostingBlock.targetSize {
                blocks.append((firstId, current))
                current = []
            }
            if current.isEmpty {
                current.reserveCapacity(PostingBlock.targetSize + 16)
                firstId = id
                PostingBlock.appendVarint(0, to: &current)
            } else {
                PostingBlock.appendVarint(id - lastId, to: &current)
            }
            lastId = id
            PostingBlock.appendVarint(length, to: &current)
            current.append(contentsOf: positions)
        }

        /// The blocks, the last one closed.
        mutating func finish() -> [(firstId: Id, bytes: [UInt8])] {
            if !current.isEmpty { blocks.append((firstId, current)) }
            current = []
            checkInvariants()
            return blocks
        }

        /// Checks, in debug builds, that the finished blocks keep the invariants of a stored
        /// block (see ``PostingBlock``): each reads back entry by entry, non-empty, its ids
        /// ascending and below the next block's first id. The entries came from this writer,
        /// so a violation is a bug here, never damage on disk.
        func checkInvariants() {
            #if DEBUG
            var previous: Id?
            for block in blocks {
                if let previous { assert(block.firstId > previous, "posting blocks overlap") }
                block.bytes.withUnsafeBytes { bytes in
                    do {
                        var reader = try Reader(bytes, firstId: block.firstId)
                        var entries = 0
                        while let entry = try reader.next() {
                            entries += 1
                            previous = entry.id
                        }
                        assert(entries > 0, "a posting block without entries")
                    } catch {
                        assertionFailure("a posting block written here does not read back")
                    }
                }
            }
            #endif
        }
    }
}
