import Foundation

/// What a ``SyncReplica`` is doing and has done, as ``SyncReplica/status`` publishes it:
/// counts since the replica was created, the outbox size, the server's recent rejections,
/// the last failure and how long the replica has been out of step.
///
/// ```swift
/// for await status in replica.status {
///     label.text = status.pending == 0 ? "Up to date" : "\(status.pending) to upload"
///     if let error = status.lastError { banner.show("\(error)") }
/// }
/// ```
public struct SyncStatus: Sendable {
    /// What the replica is doing now.
    ///
    /// ```swift
    /// if status.phase == .backingOff { spinner.stop() }
    /// ```
    public enum Phase: String, Sendable, Equatable {
        /// Created, or between calls of ``SyncReplica/syncNow()`` without ``SyncReplica/run()``.
        /// ```swift
        /// SyncStatus.Phase.idle
        /// ```
        case idle
        /// Checking the replica's client id against the server (once, before the first push).
        /// ```swift
        /// SyncStatus.Phase.connecting
        /// ```
        case connecting
        /// Sending outbox changes.
        /// ```swift
        /// SyncStatus.Phase.pushing
        /// ```
        case pushing
        /// Fetching and applying pages of server changes.
        /// ```swift
        /// SyncStatus.Phase.pulling
        /// ```
        case pulling
        /// In step with the server; waiting for a notification, a local change or the next poll.
        /// ```swift
        /// SyncStatus.Phase.waiting
        /// ```
        case waiting
        /// A pass failed (see ``SyncStatus/lastError``); waiting before the next attempt.
        /// ```swift
        /// SyncStatus.Phase.backingOff
        /// ```
        case backingOff
        /// ``SyncReplica/run()`` ended (stopped or cancelled).
        /// ```swift
        /// SyncStatus.Phase.stopped
        /// ```
        case stopped
    }

    /// What the replica is doing now.
    ///
    /// ```swift
    /// status.phase   // .pulling
    /// ```
    public var phase: Phase = .idle
    /// Changes the server accepted or rejected from this replica (each counted once, however
    /// often it was resent).
    ///
    /// ```swift
    /// status.pushed   // 1200
    /// ```
    public var pushed = 0
    /// Pulled changes applied to the store (upserts and deletes).
    ///
    /// ```swift
    /// status.pulled   // 5400
    /// ```
    public var pulled = 0
    /// Outbox changes not yet acknowledged by the server, as of the last look.
    ///
    /// ```swift
    /// status.pending   // 3
    /// ```
    public var pending = 0
    /// The most recent changes the server refused (up to 100; ``rejectedCount`` counts them
    /// all; `store.syncRejections()` keeps every one with its refused values until the app
    /// clears them). A refused change is acknowledged like an applied one: the queue goes on,
    /// and the replica fetches the server's state of the object and applies it.
    ///
    /// ```swift
    /// for rejection in status.rejections { log("change \(rejection.mid): \(rejection.reason)") }
    /// ```
    public var rejections: [SyncRejection] = []
    /// How many changes the server refused since the replica was created.
    ///
    /// ```swift
    /// status.rejectedCount   // 1
    /// ```
    public var rejectedCount = 0
    /// Pulled objects parked as conflicts (a unique value taken locally) since the replica was
    /// created; `store.syncConflicts()` lists the ones still parked, ``parkedConflicts``
    /// counts them.
    ///
    /// ```swift
    /// if status.conflicts > 0 { showConflicts(try store.syncConflicts()) }
    /// ```
    public var conflicts = 0
    /// Pulled objects parked as conflicts now, as of the end of the last pass (each pass
    /// that finds some applies them again: those whose value a local change freed are
    /// stored, the rest stay).
    ///
    /// ```swift
    /// conflictBadge.count = status.parkedConflicts
    /// ```
    public var parkedConflicts = 0
    /// Parked conflicts the replica applied on a later pass, once a local change had freed
    /// their values, since the replica was created.
    ///
    /// ```swift
    /// status.resolvedConflicts   // 1
    /// ```
    public var resolvedConflicts = 0
    /// The entities whose last pull failed, in pull order, each with its error (a page that
    /// cannot be applied, a protocol error, the server refusing the call). The other entities
    /// pull on; a failing entity is tried again from where it stopped (no row is passed
    /// over): by ``SyncReplica/run()`` once its own backoff is over
    /// (``SyncPullFailure/retryAt``), by ``SyncReplica/syncNow()`` at once. An entity leaves
    /// the list when it pulls to the horizon.
    ///
    /// ```swift
    /// for failure in status.pullFailures { log("\(failure.entity) is not pulling: \(failure.error)") }
    /// ```
    public var pullFailures: [SyncPullFailure] = []
    /// The most recent rows the server could not send, too large for a page (up to 100;
    /// ``oversizedCount`` counts them all). Each pull that meets such a row records it here
    /// and goes on past it, so the entity's other rows keep arriving; the object stays as
    /// this replica had it until a write makes its row small enough to send. A row is met
    /// once per pull that passes it: after a restart the replica does not meet it again
    /// unless it changes.
    ///
    /// ```swift
    /// for row in status.oversizedRows { log("\(row.entity) \(row.syncId) not pulled: \(row.bytes) bytes") }
    /// ```
    public var oversizedRows: [SyncOversizedRow] = []
    /// How many oversized rows the replica met since it was created.
    ///
    /// ```swift
    /// if status.oversizedCount > 0 { showWarning() }
    /// ```
    public var oversizedCount = 0
    /// How many resyncs began since the replica was created: the server had collected
    /// tombstones past an entity's cursor, so the entity was pulled again from the start and
    /// the local objects the server no longer has were removed (unpushed changes are kept
    /// and pushed).
    ///
    /// ```swift
    /// status.resyncs   // 1
    /// ```
    public var resyncs = 0
    /// Objects removed because they left this replica's subscriptions (an unsubscribe, or
    /// the server moved them out of a scope or out of what the user may see). The server
    /// still has them; they come back if they enter again.
    ///
    /// ```swift
    /// print("\(status.leftScope) objects left the scopes")
    /// ```
    public var leftScope = 0
    /// The failure of the last pass, nil once a pass succeeds. Usually a
    /// ``SyncTransportError``; the replica retries it.
    ///
    /// ```swift
    /// if let error = status.lastError as? SyncTransportError, error.isTransient { showOffline() }
    /// ```
    public var lastError: (any Error)?
    /// When the last complete pass ended (everything pushed, every entity pulled to the
    /// server's horizon).
    ///
    /// ```swift
    /// status.lastSyncedAt   // 2026-11-26 04:12:09 +0000
    /// ```
    public var lastSyncedAt: Date?
    /// How long the replica had been out of step when this status was published: zero right
    /// after a complete pass, else the time since the last complete one (or since the
    /// replica was created).
    ///
    /// ```swift
    /// if status.lag > .seconds(60) { showStale() }
    /// ```
    public var lag: Duration = .zero
    /// The id this replica pushes as (known after the first pass).
    ///
    /// ```swift
    /// status.clientId   // 0193b7e2-…
    /// ```
    public var clientId: UUID?

    /// An empty status: idle, nothing counted.
    ///
    /// ```swift
    /// let status = SyncStatus()
    /// ```
    public init() {}
}
