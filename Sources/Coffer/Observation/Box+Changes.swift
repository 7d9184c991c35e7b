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
    /// write transactions of this `Store` that begin after that; a commit of another process
    /// on the same directory comes as a change whose ``ObjectChanges/isComplete`` is false
    /// (its ids are not known; see ``Store/checkForExternalCommits()``). A consumer slower than the writes receives the commits it missed
    /// coalesced into one value (memory never grows with the backlog). Breaking out of the
    /// loop or cancelling its task unsubscribes; closing the store ends the sequence.
    public func changes() -> BoxChanges<E> {
        BoxChanges(box: self)
    }
}
