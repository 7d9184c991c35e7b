/// One change of a ``QueryController``'s window: the objects now in it and, by index, how
/// the window before this change becomes this one.
///
/// ## Index rules (those of `UITableView`/`NSTableView` batch updates)
///
/// - ``deleted``: indices in the **old** window of objects that left it.
/// - ``inserted``: indices in the **new** window (``objects``) of objects that entered it.
/// - ``moved``: objects in both windows whose order relative to the others changed, from
///   their **old** index to their **new** index. The set of moves is minimal: objects that
///   only shift because others were inserted, deleted or moved are not moves.
/// - ``updated``: indices in the **old** window of objects that stayed in place and whose
///   `updatable` properties changed. A moved object whose `updatable` properties changed
///   is not listed here (a row cannot be moved and reloaded in one batch): its move has
///   ``Move/isUpdated`` set; refresh the row at ``Move/to`` after the batch.
///
/// Applying a change to a copy of the old window: remove the rows at `deleted` and at every
/// move's `from`, in descending order; then insert, in ascending order of index, the new
/// objects at `inserted` and the moved objects at their `to`; the rows at `updated` (old
/// indices) and at the `to` of updated moves take their new values from ``objects``. The
/// result is ``objects``, in order (the differential tests check this on random changes).
///
/// ```swift
/// tableView.performBatchUpdates {
///     tableView.deleteRows(at: change.deleted.map { IndexPath(row: $0, section: 0) }, with: .fade)
///     tableView.insertRows(at: change.inserted.map { IndexPath(row: $0, section: 0) }, with: .fade)
///     tableView.reloadRows(at: change.updated.map { IndexPath(row: $0, section: 0) }, with: .none)
///     for move in change.moved {
///         tableView.moveRow(at: IndexPath(row: move.from, section: 0), to: IndexPath(row: move.to, section: 0))
///     }
/// }
/// ```
public struct QueryChange<E: Entity>: Sendable {
    /// A row that moved.
    ///
    /// ```swift
    /// for move in change.moved { print("\(move.from) -> \(move.to)", move.isUpdated) }
    /// ```
    public struct Move: Sendable, Hashable {
        /// Its index in the old window.
        ///
        /// ```swift
        /// let old = previous[move.from]
        /// ```
        public let from: Int
        /// Its index in the new window.
        ///
        /// ```swift
        /// let object = change.objects[move.to]
        /// ```
        public let to: Int
        /// Whether its `updatable` properties changed too.
        ///
        /// ```swift
        /// if move.isUpdated { reconfigureRow(at: move.to) }
        /// ```
        public let isUpdated: Bool

        /// Creates a move.
        ///
        /// ```swift
        /// let move = QueryChange<Message>.Move(from: 3, to: 0, isUpdated: false)
        /// ```
        public init(from: Int, to: Int, isUpdated: Bool) {
            self.from = from
            self.to = to
            self.isUpdated = isUpdated
        }
    }

    /// The objects in the window after this change, in the query's order.
    ///
    /// ```swift
    /// let titles = change.objects.map(\.text)
    /// ```
    public let objects: [E]
    /// Old indices of objects that left the window, ascending.
    ///
    /// ```swift
    /// tableView.deleteRows(at: change.deleted.map { IndexPath(row: $0, section: 0) }, with: .fade)
    /// ```
    public let deleted: [Int]
    /// New indices of objects that entered the window, ascending.
    ///
    /// ```swift
    /// tableView.insertRows(at: change.inserted.map { IndexPath(row: $0, section: 0) }, with: .fade)
    /// ```
    public let inserted: [Int]
    /// Old indices of objects that stayed in place and whose `updatable` properties
    /// changed, ascending.
    ///
    /// ```swift
    /// tableView.reloadRows(at: change.updated.map { IndexPath(row: $0, section: 0) }, with: .none)
    /// ```
    public let updated: [Int]
    /// Objects that moved, from old to new index, in ascending order of new index.
    ///
    /// ```swift
    /// for move in change.moved { tableView.moveRow(at: .init(row: move.from, section: 0), to: .init(row: move.to, section: 0)) }
    /// ```
    public let moved: [Move]
    /// How many objects the query matches in all (the window shows at most that many).
    ///
    /// ```swift
    /// loadMoreButton.isHidden = change.totalCount <= change.objects.count
    /// ```
    public let totalCount: Int
}
