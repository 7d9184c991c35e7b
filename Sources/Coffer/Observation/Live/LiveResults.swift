import Observation

/// A query's objects, kept current for a view: an `@Observable` object that SwiftUI (or any
/// `withObservationTracking` code) observes with no further wiring (SwiftData's `@Query`,
/// Realm's `@ObservedResults`).
///
/// ```swift
/// let unread = LiveResults(try messages.query { Message.isUnread == true }.ordered(by: Message.position).build())
///
/// struct UnreadView: View {
///     let unread: LiveResults<Message>
///     var body: some View {
///         List(unread.objects, id: \.id) { Text($0.text) }
///         if let error = unread.error { Text("\(error)") }
///     }
/// }
/// ```
///
/// The first result is read when the object is made (``objects`` is filled at once). After
/// that, each commit that changes the result (an object entering or leaving it, a change of
/// order, a change of a stored value of an object in it; commits of other processes too,
/// see ``StoreOptions/externalCommitCheckInterval``) sets ``objects`` once, on the object's
/// actor (the main actor unless another is given): the query runs and the objects decode
/// off that actor, only the assignment happens on it. Commits that arrive while the actor is
/// busy coalesce into one update with the latest result.
///
/// Set ``query``, ``offset`` or ``limit`` (on the object's actor) to re-target it: the new
/// result is read at once and observed from then on. A failure stops the observation and
/// is kept in ``error`` (never thrown into the void); setting the query again restarts it.
/// Dropping the object stops observing; closing the store ends it, keeping the last result.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
public final class LiveResults<E: Entity>: @unchecked Sendable {
    // @unchecked: the observed properties change only on `actor` (checked in debug builds);
    // the task computes off it and hops there to assign.

    /// The objects of the result, in the query's order (the page given by ``offset`` and
    /// ``limit``).
    ///
    /// ```swift
    /// List(unread.objects, id: \.id) { Text($0.text) }
    /// ```
    public private(set) var objects: [E] = []

    /// Why observing stopped: reading the store failed (a damaged record, a closed store when
    /// re-targeting, an invalid page). nil while the objects are current.
    ///
    /// ```swift
    /// if let error = unread.error { Text("Cannot show messages: \(error)") }
    /// ```
    public private(set) var error: (any Error)?

    /// The query whose result this is; setting it reads the new result at once and observes
    /// that from then on.
    ///
    /// ```swift
    /// results.query = try messages.query { Message.conversation == selected }.build()
    /// ```
    public var query: Query<E> {
        didSet { retarget() }
    }

    /// How many of the ordered matches to skip; setting it re-targets like ``query``.
    ///
    /// ```swift
    /// results.offset += 50   // the next page
    /// ```
    public var offset: Int {
        didSet { retarget() }
    }

    /// How many objects at most (nil: all); setting it re-targets like ``query``.
    ///
    /// ```swift
    /// results.limit = 100
    /// ```
    public var limit: Int? {
        didSet { retarget() }
    }

    @ObservationIgnored let driver: LiveDriver

    /// Reads `query`'s result and observes it, updating on `actor` (the main actor unless
    /// given).
    ///
    /// ```swift
    /// let people = LiveResults(try box.query().ordered(by: Person.lastName).build())
    /// // on an actor of the app's: read and re-target it there
    /// let page = LiveResults(query, offset: 0, limit: 20, on: catalogActor)
    /// ```
    public init(_ query: Query<E>, offset: Int = 0, limit: Int? = nil, on actor: any Actor = MainActor.shared) {
        self.query = query
        self.offset = offset
        self.limit = limit
        driver = LiveDriver(on: actor)
        restart()
    }

    /// A re-target from the app, on the object's actor.
    private func retarget() {
        driver.assertOnActor("LiveResults")
        restart()
    }

    /// Stops the running observation and starts one for the current query and page.
    private func restart() {
        let (query, offset, limit) = (query, offset, limit)
        driver.restart(self, begin: { LiveDriver.results(query, offset: offset, limit: limit) },
                       show: { owner, objects in
                           owner.objects = objects
                           if owner.error != nil { owner.error = nil }   // a set notifies even when equal
                       },
                       fail: { owner, error in owner.error = error })
    }
}
