import Foundation

/// Drives a list from a query: keeps a window of its results and reports every change of
/// that window as a ``QueryChange`` with index-based deletes, inserts, moves and updates
/// (Layer's `LYRQueryController`, Core Data's `NSFetchedResultsController`).
///
/// ```swift
/// let latest = try messages.query { Message.conversation == conversationId }
///     .ordered(by: Message.position)
///     .build()
/// let controller = try QueryController(latest, window: -25, updatable: [Message.isUnread, Message.text])
/// show(controller.objects)                       // the last 25 messages, oldest first
/// for try await change in controller.changes() {
///     apply(change)                               // see QueryChange for the index rules
/// }
/// ```
///
/// - `window`: nil shows every result; a positive N the first N; a negative N the last N
///   (anchored at the end: new messages appended to a conversation enter the window and
///   push the oldest out). Change it at any time (``window``) to load more: the next change
///   reports the rows that growing or shrinking the window adds or removes.
/// - `updatable`: the properties whose changes a list shows. A commit that rewrites an
///   object of the window without changing any of them emits no `updated` (a change of a
///   sort key still emits its move). nil watches every property.
///
/// The controller loads the window when it is created (``objects``, ``count`` and
/// ``object(at:)`` serve a data source at once) and from then on observes the commits of
/// this `Store` and of other processes on the same directory (those run the query again,
/// see ``Store/checkForExternalCommits()``). Each ``changes()`` element describes the step from the window the
/// controller showed before (the previous element, or the state at creation) to the new
/// one, and the accessors show the new one from then on. A commit that leaves the window as
/// it was emits nothing. Changes are computed from the ids a commit changed: the controller
/// re-checks only those objects against the query and finds their places by their sort
/// keys, so with a window a change costs about the same with 100 or 100,000 results
/// (without one, each change carries an array of every result, which is O(results)); a
/// query with link steps runs again when the entity it links to changes. A slow consumer gets the
/// commits it missed coalesced into one change. Dropping the controller stops observing;
/// closing the store ends the sequence.
public final class QueryController<E: Entity>: @unchecked Sendable {
    // @unchecked: every mutable member is guarded by `lock`.
    private let lock = NSLock()
    private let live: LiveQuery<E>
    private var currentWindow: Int?
    private var shown: [E] = []
    private var shownTotal = 0

    /// Runs `query` and loads the window.
    ///
    /// ```swift
    /// let controller = try QueryController(query, window: -25, updatable: [Message.isUnread, Message.position])
    /// ```
    ///
    /// - Throws: what running the query throws (``CofferError/storeClosed(path:)`` among
    ///   others); ``CofferError/misuse(_:)`` (`.observeInsideTransaction`) inside `store.read { }` or
    ///   `store.write { }` (the controller reads its own snapshots; create it outside).
    public init(_ query: Query<E>, window: Int? = nil, updatable: [any PartialProperty<E>]? = nil) throws {
        live = LiveQuery(query, watching: updatable.map { $0.map(\.index) })
        currentWindow = window
        _ = try refresh()
    }

    /// The window: nil for all results, N > 0 for the first N, N < 0 for the last |N|.
    /// Setting it makes the next element of ``changes()`` report the rows that enter or
    /// leave the window.
    ///
    /// ```swift
    /// controller.window = -50        // "load earlier messages"
    /// ```
    public var window: Int? {
        get { lock.withLock { currentWindow } }
        set {
            lock.withLock { currentWindow = newValue }
            live.invalidateSlice()
        }
    }

    /// The objects in the window, in the query's order, as of the last change delivered.
    ///
    /// ```swift
    /// let rows = controller.objects
    /// ```
    public var objects: [E] { lock.withLock { shown } }

    /// The number of objects in the window.
    ///
    /// ```swift
    /// func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { controller.count }
    /// ```
    public var count: Int { lock.withLock { shown.count } }

    /// How many objects the query matches in all.
    ///
    /// ```swift
    /// let hasMore = controller.totalCount > controller.count
    /// ```
    public var totalCount: Int { lock.withLock { shownTotal } }

    /// The object at `index` of the window, or nil when `index` is outside it.
    ///
    /// ```swift
    /// if let message = controller.object(at: indexPath.row) { cell.text = message.text }
    /// ```
    public func object(at index: Int) -> E? {
        lock.withLock { shown.indices.contains(index) ? shown[index] : nil }
    }

    /// The changes of the window, one ``QueryChange`` per commit (or window change) that
    /// changed it.
    ///
    /// ```swift
    /// for try await change in controller.changes() {
    ///     print(change.inserted, change.deleted, change.updated, change.moved)
    /// }
    /// ```
    ///
    /// Iterate it from one task at a time: a second loop running at the same time ends at
    /// once. The sequence ends when the store closes or the iterating task is cancelled
    /// (then the controller stops observing); it throws what reading the store throws.
    public func changes() -> QueryControllerChanges<E> {
        QueryControllerChanges(controller: self)
    }

    /// How many times the query ran from scratch (tests check that one change does not).
    var reloads: Int { lock.withLock { live.reloads } }

    /// The next change, waiting for commits; nil when observation ended.
    func nextChange() async throws -> QueryChange<E>? {
        while await live.channel.wait() {
            do {
                if let change = try refresh() { return change }
            } catch CofferError.storeClosed {
                break
            }
        }
        // Finished (store closed, task cancelled): unsubscribe now rather than at deinit.
        // A second concurrent loop also gets here, without finishing the first one's.
        if live.channel.isFinished { live.cancel() }
        return nil
    }

    /// Brings the window up to date; returns the change, or nil when the window looks as
    /// it did.
    private func refresh() throws -> QueryChange<E>? {
        lock.lock(); defer { lock.unlock() }
        let window = currentWindow
        var total = 0
        return try live.look(choose: { all in
            total = all.count
            return Self.windowed(all, window)
        }) { update, transaction, binding in
            let diff = update.diff
            let objects = try newObjects(update, transaction: transaction, binding: binding)
            // New index of every changed object (they are all in the new window).
            var positions = update.rewrittenPositions ?? [:]
            if update.rewrittenPositions == nil {
                for (index, id) in update.current.enumerated() { positions[id] = index }
            }
            let movedFrom = Set(diff.moved.map(\.from))
            var updated: [Int] = []
            for id in update.changed {
                guard let index = positions[id], let old = diff.oldIndex(ofNew: index, id: id), !movedFrom.contains(old) else { continue }
                updated.append(old)
            }
            updated.sort()
            let moved = diff.moved.map { move in
                QueryChange<E>.Move(from: move.from, to: move.to, isUpdated: update.changed.contains(update.previous[move.from]))
            }
            shown = objects
            shownTotal = total
            guard !update.isFirst, !(diff.isEmpty && updated.isEmpty) else { return nil }
            return QueryChange(objects: objects, deleted: diff.deleted, inserted: diff.inserted,
                               updated: updated, moved: moved, totalCount: total)
        }
    }

    /// The objects of the new window: those of the old window reused where the record was
    /// not rewritten (the unchanged prefix and suffix are copied as a block), the others
    /// decoded.
    private func newObjects(_ update: SliceUpdate, transaction: Transaction, binding: EntityBinding?) throws -> [E] {
        guard let binding else { return [] }
        guard let rewritten = update.rewrittenPositions, shown.count == update.previous.count else {
            return try update.current.map { try LiveQuery<E>.decode($0, in: transaction, binding: binding) }
        }
        let diff = update.diff
        var objects: [E] = []
        objects.reserveCapacity(update.current.count)
        objects.append(contentsOf: shown[0..<diff.prefix])
        for index in diff.prefix..<diff.newSuffixStart {
            let id = update.current[index]
            if let old = diff.oldIndex(ofNew: index, id: id) {
                objects.append(shown[old])
            } else {
                objects.append(try LiveQuery<E>.decode(id, in: transaction, binding: binding))
            }
        }
        objects.append(contentsOf: shown[diff.oldSuffixStart...])
        for (id, index) in rewritten where diff.oldIndex(ofNew: index, id: id) != nil {
            objects[index] = try LiveQuery<E>.decode(id, in: transaction, binding: binding)
        }
        return objects
    }

    /// The part of the results a window shows.
    static func windowed<C: Collection>(_ all: C, _ window: Int?) -> C.SubSequence {
        guard let window else { return all[...] }
        if window >= 0 { return all.prefix(window) }
        // `-Int.min` would trap: its magnitude exceeds any count anyway.
        return all.suffix(window == Int.min ? Int.max : -window)
    }
}
