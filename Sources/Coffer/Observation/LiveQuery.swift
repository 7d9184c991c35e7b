/// The machinery shared by `query.results()`, projections' `results()` and
/// `QueryController`: a subscription to the store's commits, a `MatchTracker`, and the
/// fingerprints of the watched fields of the slice delivered last.
///
/// Not thread-safe: one task (an iterator) or one lock (the controller's) owns it.
///
/// A fingerprint is a hash of the bytes of the watched fields (or of the whole record);
/// "changed" means the hash differs, so a put that rewrites identical values is no change.
final class LiveQuery<E: Entity> {
    let query: Query<E>
    let channel: ObservationChannel<ObservedChanges>
    private let subscription: StoreSubscription
    private var tracker: MatchTracker
    /// Positions of the watched properties; nil watches the whole record.
    private let watched: [Int]?
    private var slice: [Id] = []
    private var fingerprints: [Id: Int] = [:]
    private var hasLooked = false

    /// Subscribes at once: every commit after this call reaches the next `look`.
    init(_ query: Query<E>, watching watched: [Int]?) {
        self.query = query
        self.watched = watched
        let entity = E.cofferSchema.storedName
        let tracker = MatchTracker(condition: query.condition, orders: query.orders, entity: entity)
        self.tracker = tracker
        let channel = ObservationChannel<ObservedChanges> { $0.append($1) }
        self.channel = channel
        let dependencies = tracker.dependencies
        subscription = StoreSubscription(store: query.box.store, channel: channel) { changes in
            if MatchTracker.isAffected(by: changes, entity: entity, dependencies: dependencies) {
                channel.send(ObservedChanges(changes: changes))
            }
        }
    }

    var store: Store { query.box.store }

    /// How many times the query ran from scratch.
    var reloads: Int { tracker.reloads }

    /// Asks the next `look` to recompute the slice (a new window) even without commits.
    func invalidateSlice() {
        channel.send(ObservedChanges(windowChanged: true))
    }

    /// Stops observing: the channel finishes and the store forgets the handler.
    func cancel() {
        subscription.cancel()
    }

    /// Takes the pending changes, reads a snapshot holding exactly them, brings the matches
    /// up to date and calls `body` with how the slice (`choose` applied to all matches in
    /// order) changed, inside that snapshot so `body` can read the slice's records.
    func look<T>(choose: (ArraySlice<MatchTracker.Entry>) -> ArraySlice<MatchTracker.Entry>,
                 _ body: (SliceUpdate, Transaction, EntityBinding?) throws -> T) throws -> T {
        try store.prepareForReading(E.self)
        var pending: ObservedChanges?
        return try store.performObservedRead(taking: { pending = channel.take() }) { transaction in
            let binding = try store.binding(for: E.self, in: transaction)
            let taken = pending ?? ObservedChanges()
            let rewritten = try tracker.apply(taken.changes, in: transaction, binding: binding, store: store)
            let current = choose(tracker.entries[...]).map(\.id)
            var newFingerprints: [Id: Int] = [:]
            newFingerprints.reserveCapacity(current.count)
            var changed = Set<Id>()
            for id in current {
                if let old = fingerprints[id], let rewritten, !rewritten.contains(id) {
                    newFingerprints[id] = old
                    continue
                }
                let fingerprint = try self.fingerprint(of: id, in: transaction, binding: binding)
                newFingerprints[id] = fingerprint
                if let old = fingerprints[id], old != fingerprint { changed.insert(id) }
            }
            let update = SliceUpdate(previous: slice, current: current, changed: changed, rewritten: rewritten,
                                     windowChanged: taken.windowChanged, isFirst: !hasLooked)
            let result = try body(update, transaction, binding)
            // Only after `body` succeeded: a failed look leaves the last delivered state.
            slice = current
            fingerprints = newFingerprints
            hasLooked = true
            return result
        }
    }

    /// The hash of the watched fields of the record of `id`.
    private func fingerprint(of id: Id, in transaction: Transaction, binding: EntityBinding?) throws -> Int {
        guard let binding else { return 0 }
        let record = try Self.record(id, in: transaction, binding: binding)
        var hasher = Hasher()
        guard let watched else {
            hasher.combine(bytes: record)
            return hasher.finalize()
        }
        let fields = RecordFields(bytes: record, entity: binding.schema.name, id: id)
        try fields.validate()
        for position in watched {
            let storedId = binding.storedIds[position]
            // The id never changes; a property the catalog does not know has no value.
            guard !binding.schema.properties[position].flags.contains(.id), storedId != 0,
                  let field = try fields.field(storedId) else {
                hasher.combine(-1)
                continue
            }
            hasher.combine(field.kind.rawValue)
            hasher.combine(bytes: field.payload)
        }
        return hasher.finalize()
    }

    /// The record of a matching id; its absence is damage (the snapshot listed it).
    static func record(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> UnsafeRawBufferPointer {
        guard let record = try transaction.record(id, table: binding.table, entity: binding.schema.name) else {
            throw CofferError.corruptRecord(entity: binding.schema.name, id: id, reason: "an observed query matched this id, which is not stored")
        }
        return record
    }

    /// Decodes the object with `id` in `transaction`.
    static func decode(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> E {
        var reader = try RecordReader(bytes: try record(id, in: transaction, binding: binding), binding: binding, id: id)
        return try E.cofferDecode(id: id, from: &reader)
    }
}
