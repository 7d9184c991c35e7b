/// The sequence of ``ObjectChanges`` of one entity (see ``Box/changes()``).
///
/// ```swift
/// for await change in store.box(for: Person.self).changes() { print(change) }
/// ```
public struct BoxChanges<E: Entity>: AsyncSequence, Sendable {
    /// One value per commit (or per coalesced run of commits) that touched the entity.
    ///
    /// ```swift
    /// let element: BoxChanges<Person>.Element = ObjectChanges(inserted: [1], updated: [], removed: [])
    /// ```
    public typealias Element = ObjectChanges

    /// The sequence never throws.
    ///
    /// ```swift
    /// for await change in people.changes() { print(change) }   // no `try`
    /// ```
    public typealias Failure = Never

    let box: Box<E>

    /// Starts observing.
    ///
    /// ```swift
    /// var iterator = people.changes().makeAsyncIterator()
    /// let next = await iterator.next()
    /// ```
    public func makeAsyncIterator() -> Iterator {
        Iterator(store: box.store)
    }

    /// Delivers the changes; dropping it unsubscribes.
    ///
    /// ```swift
    /// var iterator = people.changes().makeAsyncIterator()
    /// while let change = await iterator.next() { print(change) }
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        /// The iterator never throws.
        ///
        /// ```swift
        /// let next = await iterator.next()   // no `try`
        /// ```
        public typealias Failure = Never

        private let channel: ObservationChannel<ChangeSet.EntityChanges>
        private let subscription: StoreSubscription

        init(store: Store) {
            let entity = E._cofferSchema.storedName
            let channel = ObservationChannel<ChangeSet.EntityChanges> { $0.append($1) }
            self.channel = channel
            subscription = StoreSubscription(store: store, channel: channel) { changes in
                // A set without ids comes from a transaction that began before this
                // subscription: not observed (see `CommitPublisher`); or from another
                // process, whose ids are not known.
                if let own = changes.entities[entity], !own.isEmpty {
                    channel.send(own)
                } else if changes.isExternal {
                    var unknown = ChangeSet.EntityChanges()
                    unknown.isComplete = false
                    channel.send(unknown)
                }
            }
        }

        /// The next change, or nil when the store closed or the task was cancelled.
        ///
        /// ```swift
        /// if let change = await iterator.next() { print(change.inserted) }
        /// ```
        public mutating func next() async -> ObjectChanges? {
            while await channel.wait() {
                if let pending = channel.take(), !pending.isEmpty { return ObjectChanges(pending) }
            }
            subscription.cancel()
            return nil
        }
    }
}
