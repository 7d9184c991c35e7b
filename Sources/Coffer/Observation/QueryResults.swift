/// The live results of a query (see ``Query/results(offset:limit:)``).
///
/// ```swift
/// for try await people in query.results() { print(people.count) }
/// ```
public struct QueryResults<E: Entity>: AsyncSequence, Sendable {
    /// One complete result.
    ///
    /// ```swift
    /// let first: QueryResults<Person>.Element? = try await iterator.next()
    /// ```
    public typealias Element = [E]

    let query: Query<E>
    let offset: Int
    let limit: Int?

    /// Starts observing.
    ///
    /// ```swift
    /// var iterator = query.results().makeAsyncIterator()
    /// ```
    public func makeAsyncIterator() -> Iterator {
        Iterator(live: LiveQuery(query, watching: nil), offset: offset, limit: limit)
    }

    /// Delivers the results; dropping it unsubscribes.
    ///
    /// ```swift
    /// var iterator = query.results().makeAsyncIterator()
    /// let now = try await iterator.next()
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        private let live: LiveQuery<E>
        private let offset: Int
        private let limit: Int?
        /// The objects delivered last, by id: only rewritten ones are decoded again.
        private var delivered: [Id: E] = [:]

        init(live: LiveQuery<E>, offset: Int, limit: Int?) {
            self.live = live
            self.offset = offset
            self.limit = limit
        }

        /// The next result: the current one first, then one per change.
        ///
        /// ```swift
        /// while let people = try await iterator.next() { show(people) }
        /// ```
        public mutating func next() async throws -> [E]? {
            guard offset >= 0, (limit ?? 0) >= 0 else {
                live.cancel()
                throw CofferError.invalidPaging(entity: E._cofferSchema.name, offset: offset, limit: limit)
            }
            return try await live.nextResult { try look() }
        }

        /// The current result, read now: what the first ``next()`` would return (the next
        /// `next()` then waits for a change). Throws what reading throws, and observation
        /// has stopped then.
        mutating func current() throws -> [E] {
            guard offset >= 0, (limit ?? 0) >= 0 else {
                live.cancel()
                throw CofferError.invalidPaging(entity: E._cofferSchema.name, offset: offset, limit: limit)
            }
            return try live.startResults { try look() } ?? []
        }

        /// Stops observing.
        func cancel() {
            live.cancel()
        }

        /// The result when it changed since the last one delivered.
        private mutating func look() throws -> [E]? {
            let (offset, limit) = (self.offset, self.limit)
            var delivered = self.delivered
            let result = try live.look(choose: { all in
                let start = all.index(all.startIndex, offsetBy: Swift.min(offset, all.count))
                let page = all[start...]
                return limit.map { page.prefix($0) } ?? page
            }) { update, transaction, binding -> [E]? in
                guard update.changesSlice else { return nil }
                var objects: [E] = []
                objects.reserveCapacity(update.current.count)
                var next: [Id: E] = [:]
                next.reserveCapacity(update.current.count)
                for id in update.current {
                    let object: E
                    if let known = delivered[id], !update.changed.contains(id), !(update.rewritten?.contains(id) ?? true) {
                        object = known
                    } else if let binding {
                        object = try LiveQuery<E>.decode(id, in: transaction, binding: binding)
                    } else {
                        continue
                    }
                    objects.append(object)
                    next[id] = object
                }
                delivered = next
                return objects
            }
            if result != nil { self.delivered = delivered }
            return result
        }
    }
}
