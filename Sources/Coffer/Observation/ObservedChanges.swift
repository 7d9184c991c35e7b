/// What wakes a query observer: the coalesced changes of the commits since it last looked,
/// and whether its window was changed meanwhile.
struct ObservedChanges: Sendable {
    var changes = ChangeSet()
    var windowChanged = false

    /// Folds later changes into these (a slow observer gets one value, not a queue).
    mutating func append(_ later: ObservedChanges) {
        changes.append(later.changes)
        windowChanged = windowChanged || later.windowChanged
    }
}
