/// The objects of one entity that one commit (or several coalesced commits) inserted,
/// updated and removed: the elements of ``Box/changes()``.
///
/// ```swift
/// for await change in people.changes() {
///     print("new: \(change.inserted), changed: \(change.updated), gone: \(change.removed)")
/// }
/// ```
///
/// An object inserted and removed within the same commit appears in none of the lists; one
/// removed and stored again under its id counts as updated. Ids ascend in each list. Commits
/// of other processes come without ids (``isComplete`` is false).
public struct ObjectChanges: Sendable, Hashable {
    /// Ids of objects that did not exist before.
    ///
    /// ```swift
    /// let fresh = try people.get(change.inserted)
    /// ```
    public let inserted: [Id]

    /// Ids of existing objects whose records were written again: by a `put`, or because
    /// a removed link target cleared their `ToOne`, or a many-to-many relation they own
    /// changed.
    ///
    /// ```swift
    /// for id in change.updated { refreshRow(for: id) }
    /// ```
    public let updated: [Id]

    /// Ids of objects that no longer exist.
    ///
    /// ```swift
    /// cache.removeAll { change.removed.contains($0.id) }
    /// ```
    public let removed: [Id]

    /// Ids inserted or updated, ascending.
    ///
    /// ```swift
    /// let written = try people.get(change.put)
    /// ```
    public var put: [Id] { (inserted + updated).sorted() }

    /// false when another process committed as well: the lists name only this process's
    /// changes, and any object may have changed (read again what you show). The store
    /// notices other processes' commits on ``StoreOptions/externalCommitCheckInterval`` and
    /// at ``Store/checkForExternalCommits()``.
    ///
    /// ```swift
    /// if !change.isComplete { reloadEverything() }
    /// ```
    public let isComplete: Bool

    /// Creates a value from its id lists (each is sorted).
    ///
    /// ```swift
    /// let expected = ObjectChanges(inserted: [3], updated: [1], removed: [])
    /// ```
    public init(inserted: [Id], updated: [Id], removed: [Id], isComplete: Bool = true) {
        self.inserted = inserted.sorted()
        self.updated = updated.sorted()
        self.removed = removed.sorted()
        self.isComplete = isComplete
    }

    init(_ changes: ChangeSet.EntityChanges) {
        self.init(inserted: Array(changes.inserted), updated: Array(changes.put.subtracting(changes.inserted)),
                  removed: Array(changes.removed), isComplete: changes.isComplete)
    }
}
