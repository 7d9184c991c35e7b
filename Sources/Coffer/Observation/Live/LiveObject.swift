import Observation

/// One object, kept current for a detail view: an `@Observable` object holding the object
/// with an id as stored now (nil once it is removed, or before it exists).
///
/// ```swift
/// struct MessageView: View {
///     @State private var message: LiveObject<Message>
///     init(messages: Box<Message>, id: Id) { _message = State(initialValue: LiveObject(messages, id: id)) }
///
///     var body: some View {
///         if let message = message.object { Text(message.text) } else { Text("Deleted") }
///     }
/// }
/// ```
///
/// The object is read when the live object is made. After that, each commit that changes
/// its stored values (a put that rewrites the same values is no change), removes it or
/// stores it again sets ``object`` once, on the live object's actor (the main actor unless
/// another is given); reading and decoding happen off that actor. Commits of other processes
/// count too (see ``StoreOptions/externalCommitCheckInterval``). Set ``id`` (on that actor)
/// to show another object. A failure stops observing and is kept in ``error``; setting
/// ``id`` again restarts it. Dropping the live object stops observing.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
public final class LiveObject<E: Entity>: @unchecked Sendable {
    // @unchecked: the observed properties change only on `actor` (checked in debug builds).

    /// The object with ``id`` as stored now; nil when there is none.
    ///
    /// ```swift
    /// Text(message.object?.text ?? "")
    /// ```
    public private(set) var object: E?

    /// Why observing stopped (reading the store failed); nil while ``object`` is current.
    ///
    /// ```swift
    /// if let error = message.error { Text("\(error)") }
    /// ```
    public private(set) var error: (any Error)?

    /// The id of the object shown; setting it reads that object at once and observes it.
    ///
    /// ```swift
    /// detail.id = selection
    /// ```
    public var id: Id {
        didSet {
            driver.assertOnActor("LiveObject")
            restart()
        }
    }

    @ObservationIgnored private let box: Box<E>
    @ObservationIgnored let driver: LiveDriver

    /// Reads the object with `id` from `box` and observes it, updating on `actor` (the main
    /// actor unless given).
    ///
    /// ```swift
    /// let detail = LiveObject(store.box(for: Message.self), id: 42)
    /// ```
    public init(_ box: Box<E>, id: Id, on actor: any Actor = MainActor.shared) {
        self.box = box
        self.id = id
        driver = LiveDriver(on: actor)
        restart()
    }

    /// The query matching only the object with `id`: observing it is observing the object.
    private static func query(_ box: Box<E>, id: Id) -> Query<E> {
        let idPosition = E._cofferSchema.properties.firstIndex { $0.flags.contains(.id) }
        let condition: ConditionNode = idPosition.map { QueryCondition<E>($0, .compare(.equal), [.unsigned(id)]).node }
            ?? .invalid("\(E._cofferSchema.name) has no id property")
        return Query(box: box, condition: condition, orders: [])
    }

    private func restart() {
        let query = Self.query(box, id: id)
        driver.restart(self, begin: { LiveDriver.results(query, offset: 0, limit: nil) },
                       show: { owner, objects in
                           owner.object = objects.first
                           if owner.error != nil { owner.error = nil }   // a set notifies even when equal
                       },
                       fail: { owner, error in owner.error = error })
    }
}
