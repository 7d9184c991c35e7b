extension Query {
    /// The query's results now, then again after every commit that changes them.
    ///
    /// ```swift
    /// let unread = try messages.query { Message.isUnread == true }.ordered(by: Message.position).build()
    /// for try await list in unread.results() {
    ///     badge.count = list.count
    /// }
    /// ```
    ///
    /// The first element is the current result. After that, an element comes after each
    /// commit of this `Store` (or of another process on the same directory, noticed as
    /// ``StoreOptions/externalCommitCheckInterval`` says) that changes the result: an object entering or leaving it, a
    /// change of order, or a change of any stored value of an object in it (a put that
    /// rewrites the same values is no change). A commit that does not change the result
    /// yields nothing. With `offset`/`limit`, the result is that page of the ordered
    /// matches. Link steps count: a change of the linked entity re-runs the query.
    /// Commits a slow consumer missed are coalesced: it gets the latest result. Observation
    /// starts when iteration starts; breaking out of the loop or cancelling its task
    /// unsubscribes, and closing the store ends the sequence.
    public func results(offset: Int = 0, limit: Int? = nil) -> QueryResults<E> {
        QueryResults(query: self, offset: offset, limit: limit)
    }
}
