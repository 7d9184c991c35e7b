/// How the observed slice changed between two looks: the ids before and after, in order,
/// their difference, and which objects present in both changed.
struct SliceUpdate {
    /// The slice delivered last (empty before the first look).
    let previous: [Id]
    /// The slice now.
    let current: [Id]
    /// `previous` -> `current` by index.
    let diff: ListDiff
    /// Ids in both slices whose watched fields changed.
    let changed: Set<Id>
    /// Ids whose records were rewritten (a superset of `changed`, maybe with equal bytes);
    /// nil when the query ran again and any record may have been rewritten.
    let rewritten: Set<Id>?
    /// The index in `current` of each rewritten id that is in it; nil when `rewritten` is.
    let rewrittenPositions: [Id: Int]?
    let windowChanged: Bool
    let isFirst: Bool

    /// Whether the slice differs from the one delivered last.
    var changesSlice: Bool { isFirst || !diff.isEmpty || !changed.isEmpty }
}
