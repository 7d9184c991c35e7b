/// One registration of a channel with a store's commit handlers; dropping it (or calling
/// `cancel()`) unregisters and finishes the channel, so an observer that is no longer
/// referenced stops observing.
final class StoreSubscription: Sendable {
    let store: Store
    private let token: Int
    private let finish: @Sendable () -> Void

    /// Registers `onCommit` for every published change set; `channel` finishes when the
    /// store closes or the subscription ends.
    init<Pending>(store: Store, channel: ObservationChannel<Pending>, onCommit: @escaping @Sendable (ChangeSet) -> Void) {
        self.store = store
        self.finish = { [weak channel] in channel?.finish() }
        self.token = store.addChangeHandler(onCommit, onClose: { [weak channel] in channel?.finish() })
    }

    func cancel() {
        store.removeChangeHandler(token)
        finish()
    }

    deinit {
        cancel()
    }
}
