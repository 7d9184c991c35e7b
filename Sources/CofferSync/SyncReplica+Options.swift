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
        /// How many changes one pull page holds (one LMDB transaction each).
        ///
        /// ```swift
        /// options.pullPageSize = 2000
        /// ```
        public var pullPageSize: Int
        /// Polling when no notification comes: the first wait after a pass that found
        /// something, doubling (with jitter) after each quiet pass up to the longest. With
        /// LISTEN working, notifications and local changes end the wait at once.
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

        /// The defaults: batches and pages of 1000, polls from 1 s to 60 s, retries from
        /// 250 ms to 30 s.
        ///
        /// ```swift
        /// let options = SyncReplica.Options(pushBatchSize: 200)
        /// ```
        public init(pushBatchSize: Int = 1000, pullPageSize: Int = 1000,
                    poll: (first: Duration, longest: Duration) = (.seconds(1), .seconds(60)),
                    retry: (first: Duration, longest: Duration) = (.milliseconds(250), .seconds(30))) {
            self.pushBatchSize = max(1, pushBatchSize)
            self.pullPageSize = max(1, pullPageSize)
            self.poll = poll
            self.retry = retry
        }
    }
}
