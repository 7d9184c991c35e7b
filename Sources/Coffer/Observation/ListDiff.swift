/// The index-based difference between two orderings of unique ids, in the form list views
/// apply in one batch: deletions at old indices, insertions at new indices, and moves from
/// an old to a new index for the objects whose order relative to the others changed.
///
/// Invariants: `deleted` and `inserted` ascend; every id of the old list is deleted, moved
/// or stays; every id of the new list is inserted, moved or stays; the objects that stay
/// form a longest increasing subsequence of old indices in new order, so the number of
/// moves is minimal. Removing the deleted and moved-from rows from the old list and then
/// inserting the inserted and moved-to rows in ascending new index gives the new list.
struct ListDiff {
    var deleted: [Int] = []
    var inserted: [Int] = []
    var moved: [(from: Int, to: Int)] = []
    /// Objects in both lists that did not move: (old index, new index).
    var stayed: [(old: Int, new: Int)] = []

    init(old: [Id], new: [Id]) {
        var oldIndex: [Id: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, id) in old.enumerated() { oldIndex[id] = index }
        // Objects in both lists, in new order: (old index, new index).
        var common: [(old: Int, new: Int)] = []
        var inNew = Set<Id>()
        inNew.reserveCapacity(new.count)
        for (index, id) in new.enumerated() {
            inNew.insert(id)
            if let was = oldIndex[id] {
                common.append((was, index))
            } else {
                inserted.append(index)
            }
        }
        for (index, id) in old.enumerated() where !inNew.contains(id) { deleted.append(index) }
        let staying = Self.longestIncreasingRun(common.map(\.old))
        for (position, pair) in common.enumerated() {
            if staying.contains(position) {
                stayed.append(pair)
            } else {
                moved.append((pair.old, pair.new))
            }
        }
    }

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
