import Observation

/// A value computed from a query (a count, a sum, whether anything matches), kept current
/// for a view: an `@Observable` object recomputed after each commit that may change it.
///
/// ```swift
/// let unread = LiveValue(count: try messages.query { Message.isUnread == true }.build())
/// let total = LiveValue(try orders.query().build()) { try $0.property(Order.amount).sum() }
///
/// struct BadgeView: View {
///     let unread: LiveValue<Message, Int>
///     var body: some View { Text("\(unread.value ?? 0) unread") }
/// }
/// ```
///
/// `compute` runs off the live value's actor with the query as its argument, when the value
/// is made and after each commit that touches the query's entity (or an entity its link
/// conditions follow; commits of other processes too, see
/// ``StoreOptions/externalCommitCheckInterval``). ``value`` is set on the actor (the main
/// actor unless another is given) only when the result differs from the last one. Commits
/// that arrive while the actor is busy coalesce into one computation. A failure stops
/// observing and is kept in ``error``; setting ``query`` restarts it. Dropping the live value
/// stops observing.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
public final class LiveValue<E: Entity, Value: Sendable & Equatable>: @unchecked Sendable {
    // @unchecked: the observed properties change only on the driver's actor.

    /// The last value computed; nil only when the first computation failed (see ``error``).
    ///
    /// ```swift
    /// Text("\(unread.value ?? 0) unread")
    /// ```
    public private(set) var value: Value?

    /// Why observing stopped (`compute` or reading the store threw); nil while ``value`` is
    /// current.
    ///
    /// ```swift
    /// if let error = total.error { Text("\(error)") }
    /// ```
    public private(set) var error: (any Error)?

    /// The query `compute` reads; setting it computes the value anew at once (on the live
    /// value's actor).
    ///
    /// ```swift
    /// unread.query = try messages.query { Message.isUnread == true && Message.conversation == selected }.build()
    /// ```
    public var query: Query<E> {
        didSet {
            driver.assertOnActor("LiveValue")
            restart()
        }
    }

    @ObservationIgnored private let compute: @Sendable (Query<E>) throws -> Value
    @ObservationIgnored let driver: LiveDriver

    /// Computes `compute(query)` and observes it, updating on `actor` (the main actor unless
    /// given).
    ///
    /// ```swift
    /// let oldest = LiveValue(try people.query().build()) { try $0.property(Person.age).max() }
    /// ```
    public init(_ query: Query<E>, on actor: any Actor = MainActor.shared,
                _ compute: @escaping @Sendable (Query<E>) throws -> Value) {
        self.query = query
        self.compute = compute
        driver = LiveDriver(on: actor)
        restart()
    }

    private func restart() {
        let (query, compute) = (query, compute)
        driver.restart(self, begin: { Self.observe(query, compute) },
                       show: { owner, value in
                           owner.value = value
                           if owner.error != nil { owner.error = nil }   // a set notifies even when equal
                       },
                       fail: { owner, error in owner.error = error })
    }

    /// Computes the value now and prepares the step that computes it again after each commit
    /// that may change it, returning only values that differ from the last.
    private static func observe(_ query: Query<E>, _ compute: @escaping @Sendable (Query<E>) throws -> Value)
        -> LiveDriver.Start<Value> {
        let entity = E._cofferSchema.storedName
        let dependencies = MatchTracker(condition: query.condition, orders: query.orders, entity: entity).dependencies
        // Subscribed before the first computation: a commit after it is never missed.
        let channel = ObservationChannel<Bool> { pending, later in pending = pending || later }
        let subscription = StoreSubscription(store: query.box.store, channel: channel) { changes in
            if MatchTracker.isAffected(by: changes, entity: entity, dependencies: dependencies) { channel.send(true) }
        }
        do {
            var last = try compute(query)
            let step: () async throws -> Value? = {
                while await channel.wait() {
                    // Taken before computing: a commit during the computation wakes it again.
                    _ = channel.take()
                    let now = try compute(query)
                    if now != last {
                        last = now
                        return now
                    }
                }
                subscription.cancel()
                return nil
            }
            return .success((last, LiveDriver.Handover(state: step)))
        } catch {
            subscription.cancel()
            return .failure(error)
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension LiveValue where Value == Int {
    /// The number of objects `query` matches, kept current.
    ///
    /// ```swift
    /// let unread = LiveValue(count: try messages.query { Message.isUnread == true }.build())
    /// ```
    public convenience init(count query: Query<E>, on actor: any Actor = MainActor.shared) {
        self.init(query, on: actor) { try $0.count() }
    }
}
