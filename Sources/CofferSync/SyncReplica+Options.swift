import Foundation

extension SyncReplica {
    /// Batch and page sizes, and the waits of ``SyncReplica/run()``.
    ///
    /// ```swift
    /// var options = SyncReplica.Options()
    /// options.poll = (first: .seconds(1), longest: .seconds(30))
    /// let replica = try SyncReplica(store: store, entities: [Task.self], transport: transport, options: options)
    /// ```
    public struct Options: Sendable {
        /// How many outbox changes go in one push (one server transaction each).
        ///
        /// ```swift
        /// options.pushBatchSize = 200
        /// ```
        public var pushBatchSize: Int
        /// How many bytes of JSON one push batch holds at most (4 MiB by default), counted
        /// from each change's values as the outbox holds them: the batch ends before the
        /// change that would take it past this, so large values travel in smaller batches.
        /// A batch always holds at least one change; a change larger than a push ever sends
        /// (64 MiB) is refused without being sent and recorded as a rejection.
        ///
        /// ```swift
        /// options.pushBatchBytes = 1 << 20   // batches of at most 1 MiB (or one larger change)
        /// ```
        public var pushBatchBytes: Int
        /// How many changes one pull page holds (one LMDB transaction each).
        ///
        /// ```swift
        /// options.pullPageSize = 2000
        /// ```
        public var pullPageSize: Int
        /// How many bytes one pull page holds, about (4 MiB by default): the server ends a
        /// page after the row that takes it past this, as the server sizes its rows (a page
        /// holds at least one row, so the cursor always moves).
        ///
        /// ```swift
        /// options.pullPageBytes = 1 << 20
        /// ```
        public var pullPageBytes: Int
        /// The largest change a push sends, in bytes of JSON: ``SyncPushBatch/largestChange``;
        /// lowered by tests, never raised.
        var largestChange = SyncPushBatch.largestChange
        /// Polling when no notification comes: the first wait after a pass that found
        /// something, doubling (with jitter) after each quiet pass up to the longest. With a
        /// transport that notifies changes (``SyncTransport/notifiesChanges``: a LISTEN, a
        /// gateway's long poll), a pass runs at least once per longest, a safety net:
        /// notifications and local changes end the wait at once, and a wait the server ends
        /// with nothing changed is followed by another wait, not a pass.
        ///
        /// ```swift
        /// options.poll = (first: .milliseconds(500), longest: .seconds(60))
        /// ```
        public var poll: (first: Duration, longest: Duration)
        /// Retrying after a failed pass: the first wait, doubling (with jitter) after each
        /// failure in a row up to the longest.
        ///
        /// ```swift
        /// options.retry = (first: .milliseconds(200), longest: .seconds(30))
        /// ```
        public var retry: (first: Duration, longest: Duration)
        /// Retrying one entity whose pull failed: ``SyncReplica/run()``'s passes leave it out
        /// until then (the others pull on), the wait doubling (with jitter) after each failure
        /// in a row up to the longest; a success resets it (``SyncPullFailure/retryAt``).
        ///
        /// ```swift
        /// options.entityRetry = (first: .seconds(5), longest: .minutes(10))
        /// ```
        public var entityRetry: (first: Duration, longest: Duration)

        /// The defaults: batches and pages of 1000 changes and at most 4 MiB, polls from 1 s
        /// to 60 s, retries from 250 ms to 30 s, an entity's retries from 1 s to 5 minutes.
        ///
        /// ```swift
        /// let options = SyncReplica.Options(pushBatchSize: 200, pushBatchBytes: 1 << 20)
        /// ```
        public init(pushBatchSize: Int = 1000, pullPageSize: Int = 1000,
                    pushBatchBytes: Int = 4 << 20, pullPageBytes: Int = 4 << 20,
                    poll: (first: Duration, longest: Duration) = (.seconds(1), .seconds(60)),
                    retry: (first: Duration, longest: Duration) = (.milliseconds(250), .seconds(30)),
                    entityRetry: (first: Duration, longest: Duration) = (.seconds(1), .seconds(300))) {
            self.pushBatchSize = max(1, pushBatchSize)
            self.pullPageSize = max(1, pullPageSize)
            self.pushBatchBytes = max(1, pushBatchBytes)
            self.pullPageBytes = max(1, pullPageBytes)
            self.poll = poll
            self.retry = retry
            self.entityRetry = entityRetry
        }
    }
}
