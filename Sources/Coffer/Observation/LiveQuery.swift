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
        let entity = E._cofferSchema.storedName
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

    /// The next element of a results sequence (`query.results()`, `projection.results()`):
    /// `look` runs at once the first time, then after each wake-up until it returns a
    /// value. nil once the store closed, the task was cancelled or a look threw (which
    /// rethrows); then observation has stopped.
    func nextResult<T>(_ look: () throws -> T?) async throws -> T? {
        guard !resultsEnded else { return nil }
        do {
            if !resultsStarted {
                resultsStarted = true
                if let value = try look() { return value }
            }
            while await channel.wait() {
                if let value = try look() { return value }
            }
        } catch CofferError.storeClosed {
        } catch {
            resultsEnded = true
            cancel()
            throw error
        }
        resultsEnded = true
        cancel()
        return nil
    }

    /// Runs the first `look` of a results sequence now (see `nextResult`), so that the next
    /// call waits for a change.
    func startResults<T>(_ look: () throws -> T?) throws -> T? {
        assert(!resultsStarted, "the first look of a results sequence runs once")
        resultsStarted = true
        do {
            return try look()
        } catch {
            resultsEnded = true
            cancel()
            throw error
        }
    }

    private var resultsStarted = false
    private var resultsEnded = false

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
        // `taking` runs again when the read reruns (a table created by another process):
        // the changes it took the first time are kept, and applying them twice is the same
        // as once (an apply re-evaluates every id it names).
        return try store.performObservedRead(taking: {
            if let taken = channel.take() {
                if pending == nil { pending = taken } else { pending?.append(taken) }
            }
        }) { transaction in
            let binding = try store.binding(for: E.self, in: transaction)
            let taken = pending ?? ObservedChanges()
            let rewritten = try tracker.apply(taken.changes, in: transaction, binding: binding, store: store)
            let chosen = choose(tracker.entries[...])
            let current = chosen.map(\.id)
            let diff = ListDiff(old: slice, new: current)
            let prints: FingerprintChanges
            if let rewritten, let binding {
                prints = try fingerprintChanges(rewritten: rewritten, diff: diff, chosen: chosen, current: current,
                                                in: transaction, binding: binding)
            } else {
                prints = try allFingerprints(of: current, in: transaction, binding: binding)
            }
            let update = SliceUpdate(previous: slice, current: current, diff: diff, changed: prints.changed, rewritten: rewritten,
                                     rewrittenPositions: prints.rewrittenPositions, windowChanged: taken.windowChanged, isFirst: !hasLooked)
            let result = try body(update, transaction, binding)
            // Only after `body` succeeded: a failed look leaves the last delivered state.
            remember(current, prints)
            return result
        }
    }

    /// How the fingerprints of a look change the ones kept: computed inside the snapshot,
    /// stored only once the look's `body` succeeded.
    private struct FingerprintChanges {
        /// Ids in the slice before and after whose watched fields changed.
        var changed = Set<Id>()
        /// New fingerprints of single ids (nil: the id left the slice).
        var updates: [(id: Id, fingerprint: Int?)] = []
        /// Every fingerprint of the slice, replacing the kept ones (after a re-run).
        var rebuilt: [Id: Int]?
        /// Positions in the slice of the rewritten ids it holds.
        var rewrittenPositions: [Id: Int]?
    }

    /// After an incremental apply: fingerprints only for ids that entered, left or were
    /// rewritten.
    private func fingerprintChanges(rewritten: Set<Id>, diff: ListDiff, chosen: ArraySlice<MatchTracker.Entry>, current: [Id],
                                    in transaction: Transaction, binding: EntityBinding) throws -> FingerprintChanges {
        var prints = FingerprintChanges()
        for index in diff.deleted { prints.updates.append((slice[index], nil)) }
        for index in diff.inserted { prints.updates.append((current[index], try fingerprint(of: current[index], in: transaction, binding: binding))) }
        var positions: [Id: Int] = [:]
        for id in rewritten {
            guard let position = tracker.position(of: id, binding: binding), chosen.indices.contains(position) else { continue }
            positions[id] = position - chosen.startIndex
            guard let old = fingerprints[id] else { continue }   // entered: done above
            let now = try fingerprint(of: id, in: transaction, binding: binding)
            if now != old {
                prints.changed.insert(id)
                prints.updates.append((id, now))
            }
        }
        prints.rewrittenPositions = positions
        return prints
    }

    /// After a re-run (or without a table): the fingerprint of every id in the slice.
    private func allFingerprints(of current: [Id], in transaction: Transaction, binding: EntityBinding?) throws -> FingerprintChanges {
        var prints = FingerprintChanges()
        var all: [Id: Int] = [:]
        all.reserveCapacity(current.count)
        for id in current {
            let now = try fingerprint(of: id, in: transaction, binding: binding)
            all[id] = now
            if let old = fingerprints[id], old != now { prints.changed.insert(id) }
        }
        prints.rebuilt = all
        return prints
    }

    /// Keeps the slice and fingerprints a look delivered.
    private func remember(_ current: [Id], _ prints: FingerprintChanges) {
        slice = current
        if let rebuilt = prints.rebuilt {
            fingerprints = rebuilt
        } else {
            for (id, fingerprint) in prints.updates { fingerprints[id] = fingerprint }
        }
        hasLooked = true
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
            throw CofferError.damagedRecord(entity: binding.schema.name, id: id, reason: "an observed query matched this id, which is not stored")
        }
        return record
    }

    /// Decodes the object with `id` in `transaction`.
    static func decode(_ id: Id, in transaction: Transaction, binding: EntityBinding) throws -> E {
        var reader = try RecordReader(bytes: try record(id, in: transaction, binding: binding), layout: binding, id: id)
        return try E._cofferDecode(id: id, from: &reader)
    }
}
