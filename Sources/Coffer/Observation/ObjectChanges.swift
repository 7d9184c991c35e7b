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
/// removed and stored again under its id counts as updated. Ids ascend in each list.
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

    /// Creates a value from its id lists (each is sorted).
    ///
    /// ```swift
    /// let expected = ObjectChanges(inserted: [3], updated: [1], removed: [])
    /// ```
    public init(inserted: [Id], updated: [Id], removed: [Id]) {
        self.inserted = inserted.sorted()
        self.updated = updated.sorted()
        self.removed = removed.sorted()
    }

    init(_ changes: ChangeSet.EntityChanges) {
        self.init(inserted: Array(changes.inserted), updated: Array(changes.put.subtracting(changes.inserted)),
                  removed: Array(changes.removed))
    }
}

extension Box {
    /// The changes of this entity, one value per commit that touched it: the ids inserted,
    /// updated and removed.
    ///
    /// ```swift
    /// let task = Task {
    ///     for await change in people.changes() {
    ///         print("\(change.put.count) written, \(change.removed.count) removed")
    ///     }
    /// }
    /// try people.put(&ada)     // the loop prints "1 written, 0 removed"
    /// task.cancel()            // ends the loop and unsubscribes
    /// ```
    ///
    /// Observation starts when iteration starts (`makeAsyncIterator()`) and covers the
    /// write transactions of this `Store` that begin after that; writes of other processes
    /// are not seen. A consumer slower than the writes receives the commits it missed
    /// coalesced into one value (memory never grows with the backlog). Breaking out of the
    /// loop or cancelling its task unsubscribes; closing the store ends the sequence.
    public func changes() -> BoxChanges<E> {
        BoxChanges(box: self)
    }
}

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
        private let channel: ObservationChannel<ChangeSet.EntityChanges>
        private let subscription: StoreSubscription

        init(store: Store) {
            let entity = E.cofferSchema.storedName
            let channel = ObservationChannel<ChangeSet.EntityChanges> { $0.append($1) }
            self.channel = channel
            subscription = StoreSubscription(store: store, channel: channel) { changes in
                // A set without ids comes from a transaction that began before this
                // subscription: not observed (see `Store+Observation`).
                if let own = changes.entities[entity], !own.isEmpty { channel.send(own) }
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
