import Observation

/// A ``QueryController``'s window, kept current for a view: an `@Observable` object with the
/// window's objects, the total count and the last change's index sets (for a list that
/// animates its rows, or UIKit code that applies them).
///
/// ```swift
/// let chat = LiveWindow(try messages.query { Message.conversation == id }.ordered(by: Message.position).build(), window: -25)
///
/// struct ChatView: View {
///     let chat: LiveWindow<Message>
///     var body: some View {
///         List(chat.objects, id: \.id) { Text($0.text) }
///         if chat.totalCount > chat.objects.count { Button("Earlier") { chat.window = (chat.window ?? 0) - 25 } }
///     }
/// }
/// ```
///
/// The window is loaded when the object is made; after that each commit that changes it
/// sets ``objects``, ``totalCount`` and ``lastChange`` once, on the object's actor (the main
/// actor unless another is given), with the controller's rules: changes are computed from
/// the ids a commit changed, `updatable` chooses the properties whose changes count, and a
/// slow actor gets the missed commits coalesced into one change. Setting ``window`` (on the
/// actor) grows or shrinks it: the next change reports the rows that enter or leave.
/// Setting ``query`` loads a new window. A failure stops observing and is kept in ``error``.
/// Dropping the object stops observing.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
public final class LiveWindow<E: Entity>: @unchecked Sendable {
    // @unchecked: the observed properties change only on the driver's actor.

    /// The objects in the window, in the query's order.
    ///
    /// ```swift
    /// List(chat.objects, id: \.id) { Text($0.text) }
    /// ```
    public private(set) var objects: [E] = []

    /// How many objects the query matches in all.
    ///
    /// ```swift
    /// let hasEarlier = chat.totalCount > chat.objects.count
    /// ```
    public private(set) var totalCount = 0

    /// The change that led to ``objects`` (nil after a load): deleted, inserted, updated and
    /// moved indices, as ``QueryController/changes()`` reports them.
    ///
    /// ```swift
    /// if let change = chat.lastChange { tableView.insertRows(at: change.inserted.map { IndexPath(row: $0, section: 0) }, with: .fade) }
    /// ```
    public private(set) var lastChange: QueryChange<E>?

    /// Why observing stopped (reading the store failed); nil while the window is current.
    ///
    /// ```swift
    /// if let error = chat.error { Text("\(error)") }
    /// ```
    public private(set) var error: (any Error)?

    /// The window: nil for all results, N > 0 for the first N, N < 0 for the last |N|.
    ///
    /// ```swift
    /// chat.window = -50   // load earlier messages
    /// ```
    public var window: Int? {
        didSet {
            driver.assertOnActor("LiveWindow")
            controller?.window = window
        }
    }

    /// The query; setting it loads the new window at once and observes it.
    ///
    /// ```swift
    /// chat.query = try messages.query { Message.conversation == other }.ordered(by: Message.position).build()
    /// ```
    public var query: Query<E> {
        didSet {
            driver.assertOnActor("LiveWindow")
            restart()
        }
    }

    @ObservationIgnored private let updatable: [any PartialProperty<E>]?
    @ObservationIgnored private var controller: QueryController<E>?
    @ObservationIgnored let driver: LiveDriver

    /// Loads the window of `query` and observes it, updating on `actor` (the main actor
    /// unless given). `window` and `updatable` as for ``QueryController/init(_:window:updatable:)``.
    ///
    /// ```swift
    /// let chat = LiveWindow(query, window: -25, updatable: [Message.text, Message.isUnread])
    /// ```
    public init(_ query: Query<E>, window: Int? = nil, updatable: [any PartialProperty<E>]? = nil,
                on actor: any Actor = MainActor.shared) {
        self.query = query
        self.window = window
        self.updatable = updatable
        driver = LiveDriver(on: actor)
        restart()
    }

    /// What one delivery sets.
    private struct Shown: Sendable {
        let objects: [E]
        let totalCount: Int
        let change: QueryChange<E>?
    }

    private func restart() {
        controller = nil
        let (query, window, updatable) = (query, window, updatable)
        var made: QueryController<E>?
        driver.restart(self, begin: { () -> LiveDriver.Start<Shown> in
            do {
                let controller = try QueryController(query, window: window, updatable: updatable)
                made = controller
                var changes = controller.changes().makeAsyncIterator()
                let current = Shown(objects: controller.objects, totalCount: controller.totalCount, change: nil)
                return .success((current, LiveDriver.Handover(state: {
                    try await changes.next().map { Shown(objects: $0.objects, totalCount: $0.totalCount, change: $0) }
                })))
            } catch {
                return .failure(error)
            }
        }, show: { owner, shown in
            owner.objects = shown.objects
            owner.totalCount = shown.totalCount
            owner.lastChange = shown.change
            if owner.error != nil { owner.error = nil }   // a set notifies even when equal
        }, fail: { owner, error in owner.error = error })
        controller = made
    }
}
