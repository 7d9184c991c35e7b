import Foundation

/// The groups of ASCII text keys, found by the keys' bytes: a GROUP BY on a text column
/// hashes each row's bytes as they lie in the record, with no `String` made or hashed per
/// row (a `String`'s hash normalizes Unicode, and making one allocates).
///
/// Only ASCII keys come here: two ASCII strings are canonically equal exactly when their
/// bytes are, so byte equality is the grouping the executor's `SQLKey` gives them. Other
/// text (which may be canonically equal to different bytes, even to ASCII, as U+212A
/// KELVIN SIGN is to "K") goes through `SQLKey`; so does each ASCII key the first time it
/// is met, which joins it to a group another spelling of it opened.
///
/// Open addressing with linear probing over a power-of-two table; keys are copied into one
/// byte arena. A class: a grouping loop calls it per row, and a struct of five arrays was
/// retained and released, array by array, on every call.
final class SQLTextGroups {
    /// Per table slot: the entry's number + 1, or 0 when free.
    @exclusivity(unchecked) private var table: [Int]
    @exclusivity(unchecked) private var mask: Int
    /// Per entry: where its bytes lie in `arena`, its hash and its group.
    @exclusivity(unchecked) private var starts: [Int] = []
    @exclusivity(unchecked) private var lengths: [Int] = []
    @exclusivity(unchecked) private var hashes: [UInt64] = []
    @exclusivity(unchecked) private var groups: [Int] = []
    @exclusivity(unchecked) private var arena: [UInt8] = []

    init() {
        table = Array(repeating: 0, count: 64)
        mask = 63
    }

    /// The hash of `bytes` (FNV-1a over 8-byte words, then mixed: keys are short).
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var offset = 0
        let count = bytes.count
        while count &- offset >= 8 {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x0000_0100_0000_01b3
            offset &+= 8
        }
        var tail: UInt64 = UInt64(truncatingIfNeeded: count)
        var shift: UInt64 = 8
        while offset < count {
            tail |= UInt64(bytes.load(fromByteOffset: offset, as: UInt8.self)) &<< shift
            shift &+= 8
            offset &+= 1
        }
        hash = (hash ^ tail) &* 0x0000_0100_0000_01b3
        hash ^= hash &>> 29
        hash = hash &* 0xbf58_476d_1ce4_e5b9
        return hash ^ (hash &>> 32)
    }

    /// The group of the key `bytes` (with their `hash`), or nil when it was not met yet.
    @inline(__always)
    func group(of bytes: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        var at = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = table[at]
            if stored == 0 { return nil }
            let entry = stored &- 1
            if hashes[entry] == hash && lengths[entry] == bytes.count && same(entry, bytes) { return groups[entry] }
            at = (at &+ 1) & mask
        }
    }

    @inline(__always)
    private func same(_ entry: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count > 0, let base = bytes.baseAddress else { return true }
        return arena.withUnsafeBytes { stored in
            guard let arena = stored.baseAddress else { return false }
            return memcmp(arena + starts[entry], base, count) == 0
        }
    }

    /// Notes that the key `bytes` (with their `hash`, not met yet) belongs to `group`.
    func add(_ bytes: UnsafeRawBufferPointer, hash: UInt64, group: Int) {
        let entry = starts.count
        starts.append(arena.count)
        lengths.append(bytes.count)
        hashes.append(hash)
        groups.append(group)
        arena.append(contentsOf: bytes)
        if (entry &+ 1) &* 2 > table.count {
            grow()
        } else {
            place(entry)
        }
    }

    private func place(_ entry: Int) {
        var at = Int(truncatingIfNeeded: hashes[entry]) & mask
        while table[at] != 0 { at = (at &+ 1) & mask }
        table[at] = entry &+ 1
    }

    /// Doubles the table (kept at most half full) and places every entry again.
    private func grow() {
        table = Array(repeating: 0, count: table.count &* 2)
        mask = table.count &- 1
        for entry in 0..<starts.count { place(entry) }
    }
}
