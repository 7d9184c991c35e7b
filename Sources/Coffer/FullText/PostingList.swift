/// What a search part found in one or more postings: ascending, unique ids, and as much
/// detail per id as the caller asked for.
///
/// Invariants: `ids` strictly ascending; `counts` empty or one per id; `positionEnds` empty
/// or one per id, the positions of `ids[i]` being `positions[start(i)..<positionEnds[i]]`,
/// ascending as written (decoding does not check their order). ``checkInvariants()`` checks
/// the rest in debug builds.
struct PostingList {
    /// How much a read decodes: ids only (a match), occurrence counts (ranking), or
    /// positions (phrases).
    enum Detail: Int, Comparable {
        case ids, counts, positions
        static func < (a: Detail, b: Detail) -> Bool { a.rawValue < b.rawValue }
    }

    var ids: [Id] = []
    var counts: [Int] = []
    var positionEnds: [Int] = []
    var positions: [UInt32] = []

    var isEmpty: Bool { ids.isEmpty }

    /// The positions of entry `i`.
    func positions(at i: Int) -> ArraySlice<UInt32> {
        positions[(i == 0 ? 0 : positionEnds[i - 1])..<positionEnds[i]]
    }

    /// The number of occurrences in object `id`, or nil when it is not in the list.
    func count(of id: Id) -> Int? {
        let i = Self.lowerBound(ids, id, from: 0)
        guard i < ids.count, ids[i] == id else { return nil }
        return counts.isEmpty ? 1 : counts[i]
    }

    /// A list from id -> ascending positions (postings built by tokenizing records).
    init(_ postings: [Id: [UInt32]], detail: Detail) {
        for (id, found) in postings.sorted(by: { $0.key < $1.key }) {
            ids.append(id)
            if detail >= .counts { counts.append(found.count) }
            if detail == .positions {
                positions.append(contentsOf: found)
                positionEnds.append(positions.count)
            }
        }
        checkInvariants()
    }

    init() {}

    /// Checks the invariants above in debug builds (nothing in release), and that counts
    /// and positions agree: with both, an id's count is the number of its positions. Every
    /// list is built here from checked input (decoded blocks, whose order the reader checks,
    /// or postings of tokenized records), so a violation is a bug, never damage on disk.
    func checkInvariants() {
        #if DEBUG
        assert(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "posting ids must ascend strictly")
        assert(counts.isEmpty || counts.count == ids.count, "one count per id")
        assert(counts.allSatisfy { $0 > 0 }, "an id in a posting list occurs at least once")
        guard !positionEnds.isEmpty else {
            assert(positions.isEmpty, "positions without their ends")
            return
        }
        assert(positionEnds.count == ids.count, "one position range per id")
        assert(positionEnds.last == positions.count, "the last position range ends the positions")
        for i in ids.indices {
            let start = i == 0 ? 0 : positionEnds[i - 1]
            assert(start <= positionEnds[i], "position ranges must not overlap")
            // (Not that positions ascend: they are decoded from gaps on disk without a check.)
            assert(counts.isEmpty || counts[i] == positionEnds[i] - start, "an id's count must be its number of positions")
        }
        #endif
    }

    /// The objects in any of `lists`, counts added and positions merged.
    static func union(_ lists: [PostingList]) -> PostingList {
        var lists = lists.filter { !$0.isEmpty }
        // Pairwise rounds: each id is copied about log2(lists) times.
        while lists.count > 1 {
            var merged: [PostingList] = []
            merged.reserveCapacity((lists.count + 1) / 2)
            var i = 0
            while i + 1 < lists.count {
                merged.append(union(lists[i], lists[i + 1]))
                i += 2
            }
            if i < lists.count { merged.append(lists[i]) }
            lists = merged
        }
        return lists.first ?? PostingList()
    }

    private static func union(_ a: PostingList, _ b: PostingList) -> PostingList {
        var result = PostingList()
        let withCounts = !a.counts.isEmpty && !b.counts.isEmpty
        let withPositions = !a.positionEnds.isEmpty && !b.positionEnds.isEmpty
        result.ids.reserveCapacity(max(a.ids.count, b.ids.count))
        var i = 0, j = 0
        func take(_ list: PostingList, _ k: Int) {
            result.ids.append(list.ids[k])
            if withCounts { result.counts.append(list.counts[k]) }
            if withPositions {
                result.positions.append(contentsOf: list.positions(at: k))
                result.positionEnds.append(result.positions.count)
            }
        }
        while i < a.ids.count || j < b.ids.count {
            if j == b.ids.count || (i < a.ids.count && a.ids[i] < b.ids[j]) {
                take(a, i)
                i += 1
            } else if i == a.ids.count || b.ids[j] < a.ids[i] {
                take(b, j)
                j += 1
            } else {
                result.ids.append(a.ids[i])
                if withCounts { result.counts.append(a.counts[i] + b.counts[j]) }
                if withPositions {
                    result.positions.append(contentsOf: (Array(a.positions(at: i)) + Array(b.positions(at: j))).sorted())
                    result.positionEnds.append(result.positions.count)
                }
                i += 1
                j += 1
            }
        }
        result.checkInvariants()
        return result
    }

    /// A list's storage, for loops that must not retain or check uniqueness per element.
    struct Buffers {
        let ids: UnsafeBufferPointer<Id>
        let positions: UnsafeBufferPointer<UInt32>
        let positionEnds: UnsafeBufferPointer<Int>
    }

    /// Calls `body` with the storage of every list (valid only inside `body`).
    static func withBuffers<R>(_ lists: ArraySlice<PostingList>, _ taken: [Buffers] = [], _ body: ([Buffers]) -> R) -> R {
        guard let list = lists.first else { return body(taken) }
        return list.ids.withUnsafeBufferPointer { ids in
            list.positions.withUnsafeBufferPointer { positions in
                list.positionEnds.withUnsafeBufferPointer { ends in
                    withBuffers(lists.dropFirst(), taken + [Buffers(ids: ids, positions: positions, positionEnds: ends)], body)
                }
            }
        }
    }

    /// The ids in both ascending arrays. A much shorter side is looked up in the longer one
    /// by galloping search instead of walking both.
    static func intersection(_ a: [Id], _ b: [Id]) -> [Id] {
        let (small, large) = a.count <= b.count ? (a, b) : (b, a)
        var result: [Id] = []
        result.reserveCapacity(small.count)
        if small.count * 8 < large.count {
            var from = 0
            for id in small {
                from = gallop(large, id, from: from)
                if from == large.count { break }
                if large[from] == id { result.append(id) }
            }
            return result
        }
        var i = 0, j = 0
        while i < small.count, j < large.count {
            if small[i] < large[j] {
                i += 1
            } else if large[j] < small[i] {
                j += 1
            } else {
                result.append(small[i])
                i += 1
                j += 1
            }
        }
        return result
    }

    /// The ids in either ascending array.
    static func union(_ a: [Id], _ b: [Id]) -> [Id] {
        var result: [Id] = []
        result.reserveCapacity(max(a.count, b.count))
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                result.append(a[i])
                i += 1
            } else if i == a.count || b[j] < a[i] {
                result.append(b[j])
                j += 1
            } else {
                result.append(a[i])
                i += 1
                j += 1
            }
        }
        return result
    }

    /// The ids of ascending `a` that are not in ascending `b`.
    static func subtracting(_ a: [Id], _ b: [Id]) -> [Id] {
        guard !b.isEmpty else { return a }
        var result: [Id] = []
        result.reserveCapacity(a.count)
        var j = 0
        for id in a {
            j = gallop(b, id, from: j)
            if j == b.count || b[j] != id { result.append(id) }
        }
        return result
    }

    /// The first index at or after `from` whose id is not below `id`: doubling steps, then a
    /// binary search (cheap when consecutive look-ups move forward a little).
    static func gallop<C: RandomAccessCollection<Id>>(_ ids: C, _ id: Id, from: Int) -> Int where C.Index == Int {
        var low = from
        var step = 1
        var high = from
        while high < ids.count, ids[high] < id {
            low = high + 1
            high += step
            step &*= 2
        }
        return lowerBound(ids, id, from: low, to: min(high, ids.count))
    }

    static func lowerBound<C: RandomAccessCollection<Id>>(_ ids: C, _ id: Id, from: Int, to end: Int? = nil) -> Int where C.Index == Int {
        var low = from
        var high = end ?? ids.count
        while low < high {
            let middle = low + (high - low) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
