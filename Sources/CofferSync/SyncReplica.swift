@_spi(CofferGenerated) @_spi(CofferSync) import Coffer
import Foundation

/// Keeps a store's `@Sync` entities in step with a server: pushes the outbox (every local
/// change, in batches, each acknowledged once the server answers) and pulls each entity's
/// changes page by page into the store, each page and its cursor in one LMDB transaction.
///
/// ``syncNow()`` makes one pass; ``run()`` makes passes until stopped, waking on the server's
/// notifications and on local changes, polling with backoff otherwise, and retrying failures
/// with backoff (a failure is reported in ``status``, never fatal). Passes never overlap: a
/// push and a pull of the store never run at once.
///
/// Rules: one replica per store and server. A change the server refuses is reported
/// (``SyncStatus/rejections``) and acknowledged; the queue goes on. When the server has
/// applied more changes of this replica's client id than the store ever recorded (the store
/// was restored from a backup), the replica takes a new client id before pushing, so that no
/// new change is mistaken for one already applied.
///
/// ```swift
/// let transport = PostgresTransport(configuration: .init(host: "127.0.0.1", username: "app", password: nil,
///                                                        database: "app", tls: .disable))
/// let replica = try SyncReplica(store: store, entities: [Task.self, Folder.self], transport: transport)
/// let syncing = Task { await replica.run() }
/// for await status in replica.status { print(status.phase, status.pending) }
/// replica.stop()
/// ```
public final class SyncReplica: Sendable {
    /// The store this replica syncs.
    ///
    /// ```swift
    /// replica.store.path
    /// ```
    public let store: Store
    /// The stored names of the synced entities, in the order they are pulled.
    ///
    /// ```swift
    /// replica.entityNames   // ["Folder", "Task"]
    /// ```
    public let entityNames: [String]
    /// How this replica reaches the server.
    ///
    /// ```swift
    /// replica.transport.stream   // "postgres://127.0.0.1:5432/app#coffer"
    /// ```
    public let transport: any SyncTransport
    /// Batch sizes and waits.
    ///
    /// ```swift
    /// replica.options.pushBatchSize   // 1000
    /// ```
    public let options: Options

    let entityTypes: [any Entity.Type]
    let gate = SerialGate()
    let channel = StatusChannel(SyncStatus())
    let localWake = WakeSignal()
    let state = LockedState(RunState())

    struct RunState {
        /// The store's client id as last checked against the server.
        var clientId: UUID?
        var running: Task<Void, Never>?
        var stopRequested = false
        /// When the replica was last in step (or created).
        var inStepSince = ContinuousClock.now
        /// Conflicts parked in the store at the last look; nil before the first.
        var parkedConflicts: Int?
        /// The first mid of a push whose answer never came (the server may have applied it);
        /// nil when every push sent was answered. No pull runs while it is set.
        var unansweredPushFrom: UInt64?
        /// The last mid the server said it applied for the client id, read by the client id's
        /// check and not yet used to settle (``SyncReplica/answerLostPush(client:)``): the
        /// first pass does not ask twice.
        var appliedAtCheck: UInt64?
        /// The entities whose pull failed, with when ``run()`` tries each again.
        var pullBackoff: [String: EntityBackoff] = [:]
        /// The wake key of each stream pulled (``wakeKeyIndex(_:stream:)``), from its last page.
        var wakeKeys: [String: String] = [:]
        /// What the per-entity backoff takes for now (a test moves it instead of waiting).
        var clock: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    }

    /// A replica of `store`'s `entities` (each declared `@Sync`) through `transport`. Nothing
    /// is sent until ``syncNow()`` or ``run()``.
    ///
    /// ```swift
    /// let replica = try SyncReplica(store: store, entities: [Task.self], transport: transport,
    ///                               options: .init(pushBatchSize: 200))
    /// ```
    ///
    /// - Throws: ``SyncReplicaError/notSynced(_:)`` for an entity without `@Sync`, and
    ///   ``SyncReplicaError/duplicateEntity(_:)`` when two types share a stored name.
    public init(store: Store, entities: [any Entity.Type], transport: any SyncTransport, options: Options = Options()) throws {
        var names: [String] = []
        for entity in entities {
            let schema = entity._cofferSchema
            guard schema.isSynced else { throw SyncReplicaError.notSynced(schema.name) }
            guard !names.contains(schema.storedName) else { throw SyncReplicaError.duplicateEntity(schema.storedName) }
            names.append(schema.storedName)
        }
        self.store = store
        self.entityNames = names
        self.entityTypes = entities
        self.transport = transport
        self.options = options
    }

    deinit {
        channel.finish()
    }

    /// The replica's status: the current value first, then every change of it. Each call
    /// returns a new sequence; ending its loop unsubscribes.
    ///
    /// ```swift
    /// for await status in replica.status where status.phase == .waiting { print("in step") }
    /// ```
    public var status: AsyncStream<SyncStatus> { channel.subscribe() }

    /// The status now.
    ///
    /// ```swift
    /// replica.currentStatus.pending   // 0
    /// ```
    public var currentStatus: SyncStatus { channel.current }

    /// Makes one pass: pushes the outbox in batches (each acknowledged after the server's
    /// reply) until the changes recorded before the pass are sent, then pulls every entity
    /// page by page to the server's horizon, then, when pulled objects are parked as
    /// conflicts, applies them again (see `Store.retrySyncConflicts()`). Waits for a pass already running (from ``run()``
    /// or another call) to end first. Returns the status after the pass.
    ///
    /// ```swift
    /// try store.write { try tasks.put(&task) }
    /// try await replica.syncNow()        // the change is on the server, and the server's are here
    /// ```
    ///
    /// - Throws: what failed (usually a ``SyncTransportError``; the push's failure before a
    ///   pull's); what was acknowledged or applied before the failure stays done, the rest
    ///   is sent or fetched by the next pass. A failed push does not keep the pull from
    ///   running, unless its answer was lost (see the README's "Failures stay where they
    ///   are"), and an entity that cannot be pulled does not keep the others from it
    ///   (``SyncStatus/pullFailures``).
    @discardableResult
    public func syncNow() async throws -> SyncStatus {
        try await pass(skippingBackedOff: false)
    }

    /// A pass (see ``syncNow()``). `skippingBackedOff`: entities whose pull failed and whose
    /// next attempt is not due are left out (``run()``'s passes); an explicit ``syncNow()``
    /// tries every entity.
    func pass(skippingBackedOff: Bool) async throws -> SyncStatus {
        try await gate.run {
            do {
                try Task.checkCancellation()
                let client = try await checkedClientId()
                // A push that fails does not keep the pull from running (pulled values never
                // overwrite fields with unacknowledged local changes that order after them),
                // unless its answer was lost; the pass still fails, with the push's error first.
                var failure: (any Error)?
                // A push whose answer was lost may have been applied: until the server says
                // which of its changes it applied (and refused), no pull runs.
                do {
                    try await answerLostPush(client: client)
                } catch where !(error is CancellationError) && !Task.isCancelled {
                    failure = error
                }
                // An entity with an app's merge is pulled before the push too: changes other
                // replicas pushed then meet this replica's unacknowledged changes here, where
                // the merge decides, instead of on the server, where the later clock would.
                // When that pull fails for a passing reason (the network, a timeout), the push
                // waits for the next pass: pushed now, the local changes would overwrite the
                // other replicas' on the server by their clocks, and the merge would never run.
                let merging = entityNames.filter { store.hasSyncMerge(entity: $0) }
                var pushWaits = false
                // While a lost answer is unsettled the merge pull cannot run, so neither may
                // the push it guards.
                if !merging.isEmpty, pushAnswerLost, try store.pendingSyncCount() > 0 { pushWaits = true }
                if !merging.isEmpty, !pushAnswerLost, try store.pendingSyncCount() > 0 {
                    do {
                        for entity in merging { try await pullEntity(entity) }
                    } catch where !(error is CancellationError) && !Task.isCancelled {
                        failure = error
                        pushWaits = (error as? SyncTransportError)?.isTransient ?? false
                    }
                }
                if !pushWaits {
                    do {
                        try await pushOutbox(client: client)
                    } catch where !(error is CancellationError) && !Task.isCancelled {
                        failure = error
                        do {
                            try await answerLostPush(client: client)
                        } catch where !(error is CancellationError) && !Task.isCancelled {}
                    }
                }
                let conflictsBefore = channel.current.conflicts
                if !pushAnswerLost {
                    do {
                        try await pullEntities(skippingBackedOff: skippingBackedOff)
                    } catch where !(error is CancellationError) && !Task.isCancelled {
                        failure = failure ?? error
                    }
                }
                do {
                    try retryParkedConflicts(parkedByThisPass: channel.current.conflicts - conflictsBefore)
                } catch where !(error is CancellationError) && !Task.isCancelled {
                    failure = failure ?? error
                }
                if let failure { throw failure }
                let now = ContinuousClock.now
                state.withLock { $0.inStepSince = now }
                return channel.update { status in
                    // An entity left out while it backs off is still failing.
                    status.lastError = status.pullFailures.first?.error
                    status.lastSyncedAt = Date()
                    status.lag = .zero
                    if status.phase != .stopped { status.phase = .idle }
                }
            } catch {
                guard !(error is CancellationError), !Task.isCancelled else { throw error }
                let since = state.withLock { $0.inStepSince }
                channel.update { status in
                    status.lastError = error
                    status.lag = ContinuousClock.now - since
                }
                throw error
            }
        }
    }

    /// The client id to push as: the store's current one, checked against the server once
    /// per id. When the server has applied mids of this id beyond the highest the store ever
    /// handed out, the store was restored from a copy older than what it sent: it takes a new
    /// id.
    ///
    /// The store's id is read at every pass, not kept: it changes when the data file is
    /// replaced while the store is open (a pull then takes a new id for the new file), and
    /// pushing on under the old id would send mids the server may count as the old file's.
    func checkedClientId() async throws -> UUID {
        var client = try store.syncClientId()
        let checked = state.withLock { $0.clientId }
        if client == checked { return client }
        channel.update { $0.phase = .connecting }
        if checked == nil {
            for type in entityTypes { try register(type) }
        }
        let applied = try await transport.lastMutationId(client: client)
        if applied > (try store.syncLastMutationId()) {
            client = try store.renewSyncClientId()
        }
        // Changes a previous run (or replica) of this store sent may have been applied with
        // their answer lost: when the server applied any under this id, the first pass
        // settles that before it pulls, from the answer just read. (A renewed id has none.)
        let handedOut = try store.syncLastMutationId()
        let pending = try store.pendingSyncCount()
        let settles = checked == nil && applied > 0 && applied <= handedOut && pending > 0
        state.withLock { state in
            state.clientId = client
            if settles {
                state.unansweredPushFrom = 1
                state.appliedAtCheck = applied
            }
        }
        channel.update { $0.clientId = client }
        return client
    }
}

extension SyncReplica {
    /// Makes sure the store's catalog knows the entity (a write that removes nothing), so
    /// that pages of an entity this store never wrote can be applied.
    private func register<E: Entity>(_ type: E.Type) throws {
        try store.box(for: type).remove([Id]())
    }
}

/// Why a ``SyncReplica`` cannot be made as asked.
///
/// ```swift
/// do { _ = try SyncReplica(store: store, entities: [Plain.self], transport: transport) }
/// catch SyncReplicaError.notSynced(let name) { print("\(name) needs @Sync") }
/// ```
public enum SyncReplicaError: Error, Equatable, CustomStringConvertible {
    /// The entity is not declared `@Sync`: it records no changes to send.
    ///
    /// ```swift
    /// SyncReplicaError.notSynced("Plain")
    /// ```
    case notSynced(String)
    /// Two of the entity types are stored under one name.
    ///
    /// ```swift
    /// SyncReplicaError.duplicateEntity("Task")
    /// ```
    case duplicateEntity(String)
    /// The server answered a push with a last mid below the batch's: it did not apply the
    /// whole batch, which the protocol does not allow. Nothing was acknowledged.
    ///
    /// ```swift
    /// SyncReplicaError.pushNotApplied(sent: 40, applied: 12)
    /// ```
    case pushNotApplied(sent: UInt64, applied: UInt64)
    /// A subscription names an entity this replica does not sync.
    ///
    /// ```swift
    /// SyncReplicaError.unknownEntity("Plain")
    /// ```
    case unknownEntity(String)
    /// A subscription the server could not take.
    ///
    /// ```swift
    /// SyncReplicaError.invalidSubscription("Message/conversation{...}", reason: "parameter \"id\" holds NUL")
    /// ```
    case invalidSubscription(String, reason: String)

    /// The message.
    ///
    /// ```swift
    /// print(SyncReplicaError.notSynced("Plain").description)
    /// ```
    public var description: String {
        switch self {
        case .notSynced(let name): return "\(name) is not declared @Sync: it cannot be replicated"
        case .duplicateEntity(let name): return "two entity types are stored as \"\(name)\""
        case .unknownEntity(let name): return "\(name) is not one of this replica's entities: it cannot be subscribed to"
        case .invalidSubscription(let subscription, let reason): return "cannot subscribe to \(subscription): \(reason)"
        case .pushNotApplied(let sent, let applied):
            return "the server acknowledged mid \(applied) for a batch through \(sent); nothing was acknowledged locally"
        }
    }
}
