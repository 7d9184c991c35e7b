/// The index-based difference between two orderings of unique ids, in the form list views
/// apply in one batch: deletions at old indices, insertions at new indices, and moves from
/// an old to a new index for the objects whose order relative to the others changed.
///
/// Invariants: `deleted` and `inserted` ascend; every id of the old list is deleted, moved
/// or stays; every id of the new list is inserted, moved or stays; the objects that stay
/// form a longest increasing subsequence of old indices in new order, so the number of
/// moves is minimal. Removing the deleted and moved-from rows from the old list and then
/// inserting the inserted and moved-to rows in ascending new index gives the new list.
///
/// Cost: the common prefix and suffix are skipped by comparing ids (no hashing), so one
/// change in a list of 100,000 costs a scan of the ids plus work on the part that differs.
struct ListDiff {
    private(set) var deleted: [Int] = []
    private(set) var inserted: [Int] = []
    private(set) var moved: [(from: Int, to: Int)] = []
    /// Both lists start with `prefix` equal ids and end with equal ids from
    /// `oldSuffixStart` / `newSuffixStart` on.
    let prefix: Int
    let oldSuffixStart: Int
    let newSuffixStart: Int
    /// Old indices of the ids in both lists that lie between the prefix and the suffix.
    private var middleOldIndex: [Id: Int] = [:]

    init(old: [Id], new: [Id]) {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var oldEnd = old.count
        var newEnd = new.count
        while oldEnd > prefix, newEnd > prefix, old[oldEnd - 1] == new[newEnd - 1] {
            oldEnd -= 1
            newEnd -= 1
        }
        self.prefix = prefix
        oldSuffixStart = oldEnd
        newSuffixStart = newEnd
        guard prefix < oldEnd || prefix < newEnd else { return }

        var oldIndex: [Id: Int] = [:]
        oldIndex.reserveCapacity(oldEnd - prefix)
        for index in prefix..<oldEnd { oldIndex[old[index]] = index }
        // Objects in both middles, in new order: (old index, new index).
        var common: [(old: Int, new: Int)] = []
        var inNew = Set<Id>()
        inNew.reserveCapacity(newEnd - prefix)
        for index in prefix..<newEnd {
            let id = new[index]
            inNew.insert(id)
            if let was = oldIndex[id] {
                common.append((was, index))
                middleOldIndex[id] = was
            } else {
                inserted.append(index)
            }
        }
        for index in prefix..<oldEnd where !inNew.contains(old[index]) { deleted.append(index) }
        let staying = Self.longestIncreasingRun(common.map(\.old))
        for (position, pair) in common.enumerated() where !staying.contains(position) {
            moved.append((pair.old, pair.new))
        }
        checkInvariants(old: old, new: new)
    }

    /// The list a view gets by applying the diff to `old`, as described above: the rows at
    /// `deleted` and at moves' old indices removed, then the rows at `inserted` (ids from
    /// `new`) and at moves' new indices (the moved ids) inserted in ascending new index.
    /// Equal to `new` for the lists the diff was made from.
    func applied(to old: [Id], new: [Id]) -> [Id] {
        var removed = Set(deleted)
        for move in moved { removed.insert(move.from) }
        var staying = old.indices.lazy.filter { !removed.contains($0) }.map { old[$0] }.makeIterator()
        var arriving: [Int: Id] = [:]
        for index in inserted { arriving[index] = new[index] }
        for move in moved { arriving[move.to] = old[move.from] }
        // Inserting in ascending new index puts each arriving row exactly at its index.
        var rows: [Id] = []
        rows.reserveCapacity(old.count - removed.count + arriving.count)
        for index in 0..<(old.count - removed.count + arriving.count) {
            if let id = arriving[index] {
                rows.append(id)
            } else if let id = staying.next() {
                rows.append(id)
            }
        }
        return rows
    }

    /// Checks the invariants above in debug builds (nothing in release): the index lists
    /// ascend and the diff turns `old` into `new`.
    func checkInvariants(old: [Id], new: [Id]) {
        #if DEBUG
        assert(zip(deleted, deleted.dropFirst()).allSatisfy { $0 < $1 }, "deleted indices ascend")
        assert(zip(inserted, inserted.dropFirst()).allSatisfy { $0 < $1 }, "inserted indices ascend")
        assert(moved.allSatisfy { old[$0.from] == new[$0.to] }, "a move keeps its object")
        assert(applied(to: old, new: new) == new, "applying the diff to the old list gives the new list")
        #endif
    }

    /// The old index of the object at `newIndex` (whose id is `id`) when it is in both
    /// lists, or nil when it was inserted.
    func oldIndex(ofNew newIndex: Int, id: Id) -> Int? {
        if newIndex < prefix { return newIndex }
        if newIndex >= newSuffixStart { return newIndex - newSuffixStart + oldSuffixStart }
        return middleOldIndex[id]
    }

    var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && moved.isEmpty }

    /// The positions of a longest strictly increasing subsequence of `values` (patience
    /// sorting with back links, O(n log n)).
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        guard !values.isEmpty else { return [] }
        // tails[k]: position of the smallest tail of an increasing run of length k + 1.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = low + (high - low) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run = Set<Int>()
        var position = tails[tails.count - 1]
        while position >= 0 {
            run.insert(position)
            position = previous[position]
        }
        return run
    }
}
