extension Projection {
    /// The selected properties of the query's matches now, then again after every commit
    /// that changes them (see ``Query/results(offset:limit:)``). A commit that changes only
    /// properties that are not selected yields nothing.
    ///
    /// ```swift
    /// for try await rows in query.select(Person.firstName, Person.age).results() {
    ///     print(rows)   // [(String, Int)]
    /// }
    /// ```
    public func results() -> ProjectionResults<E, repeat each Value> {
        ProjectionResults(projection: self)
    }

    /// The rows of the ids in `transaction`.
    func rows(_ ids: [Id], in transaction: Transaction, binding: EntityBinding) throws -> [(repeat each Value)] {
        var rows: [(repeat each Value)] = []
        rows.reserveCapacity(ids.count)
        for id in ids {
            rows.append(try row(from: try RecordReader(bytes: try LiveQuery<E>.record(id, in: transaction, binding: binding), layout: binding, id: id)))
        }
        return rows
    }
}

/// The live rows of a projection (see ``Projection/results()``).
///
/// ```swift
/// for try await rows in query.select(Order.total).results() { print(rows.map(\.self)) }
/// ```
public struct ProjectionResults<E: Entity, each Value: ProjectableValue>: AsyncSequence, Sendable {
    /// One complete set of rows.
    ///
    /// ```swift
    /// let rows: ProjectionResults<Person, String>.Element = [("Ada")]
    /// ```
    public typealias Element = [(repeat each Value)]

    let projection: Projection<E, repeat each Value>

    /// Starts observing.
    ///
    /// ```swift
    /// var iterator = query.select(Person.age).results().makeAsyncIterator()
    /// ```
    public func makeAsyncIterator() -> Iterator {
        Iterator(projection: projection, live: LiveQuery(projection.query, watching: projection.positions))
    }

    /// Delivers the rows; dropping it unsubscribes.
    ///
    /// ```swift
    /// while let rows = try await iterator.next() { print(rows.count) }
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        let projection: Projection<E, repeat each Value>
        let live: LiveQuery<E>

        init(projection: Projection<E, repeat each Value>, live: LiveQuery<E>) {
            self.projection = projection
            self.live = live
        }

        /// The current rows first, then the rows after each change of them.
        ///
        /// ```swift
        /// let rows = try await iterator.next()
        /// ```
        public mutating func next() async throws -> [(repeat each Value)]? {
            try await live.nextResult { try look() }
        }

        private func look() throws -> [(repeat each Value)]? {
            try live.look(choose: { $0 }) { update, transaction, binding in
                guard update.changesSlice else { return nil }
                guard let binding else { return [] }
                return try projection.rows(update.current, in: transaction, binding: binding)
            }
        }
    }
}
