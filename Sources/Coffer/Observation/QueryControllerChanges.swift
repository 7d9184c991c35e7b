/// The changes of a ``QueryController``'s window (see ``QueryController/changes()``).
///
/// ```swift
/// for try await change in controller.changes() { apply(change) }
/// ```
public struct QueryControllerChanges<E: Entity>: AsyncSequence, Sendable {
    /// One change of the window.
    ///
    /// ```swift
    /// let first: QueryControllerChanges<Message>.Element? = try await iterator.next()
    /// ```
    public typealias Element = QueryChange<E>

    let controller: QueryController<E>

    /// Starts delivering changes.
    ///
    /// ```swift
    /// var iterator = controller.changes().makeAsyncIterator()
    /// ```
    public func makeAsyncIterator() -> Iterator {
        Iterator(controller: controller)
    }

    /// Delivers the changes of one controller; it keeps the controller alive while it
    /// exists.
    ///
    /// ```swift
    /// var iterator = controller.changes().makeAsyncIterator()
    /// while let change = try await iterator.next() { apply(change) }
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        let controller: QueryController<E>

        /// The next change of the window, or nil when observation ended.
        ///
        /// ```swift
        /// let change = try await iterator.next()
        /// ```
        public mutating func next() async throws -> QueryChange<E>? {
            try await controller.nextChange()
        }
    }
}
