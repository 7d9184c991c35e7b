@_spi(CofferSync) import Coffer
import Foundation

extension SyncReplica {
    /// Pushes outbox batches until every change recorded before the call is acknowledged
    /// (changes made meanwhile wait for the next pass, so a busy writer cannot hold the pass
    /// in pushing forever). Each batch is taken (raising the send floor), sent, and
    /// acknowledged through its last mid once the server answered; a batch that fails is taken
    /// again by the next attempt and resent (the server skips the mids it applied). A change
    /// the server refused is recorded (`store.syncRejections()`) in the acknowledging
    /// transaction, and the pull that follows fetches the server's state of its object.
    ///
    /// The replica's work overlaps the server's: while the server applies a batch, the next
    /// one is taken and encoded, and it is sent as soon as the answer came, before that batch
    /// is acknowledged. One batch is on its way at a time, so the server receives the mids in
    /// order, as without the overlap.
    ///
    /// `through`: only changes up to that mid are pushed (``answerLostPush(client:)``).
    ///
    /// When a batch was sent and its answer did not come, the server may have applied it:
    /// its first mid is kept (``RunState/unansweredPushFrom``) until the server says.
    func pushOutbox(client: UUID, through: UInt64 = .max) async throws {
        channel.update { $0.phase = .pushing }
        guard try store.pendingSyncCount() > 0 else {
            state.withLock { $0.unansweredPushFrom = nil }
            channel.update { $0.pending = 0 }
            return
        }
        let recordedBefore = min(through, try store.syncLastMutationId())
        var current = try takeBatch(after: 0, carrying: [], through: through)
        var inFlight = send(current, client: client)
        do {
            while let batch = current.batch {
                try Task.checkCancellation()
                // The next batch is taken and encoded while the server applies this one; it
                // begins with the changes this one had no room for.
                let next: TakenBatch? = try batch.lastMid < recordedBefore
                    ? takeBatch(after: batch.lastMid, carrying: current.leftover, through: through) : nil
                // Changes the server could never store are refused here, and end as its refusals do.
                var rejected = batch.refusedLocally
                if let call = inFlight {
                    inFlight = nil
                    let reply = try await call.value
                    // The server answers with the highest mid it has applied; below the last
                    // one sent, it skipped some, and acknowledging them would lose them.
                    guard reply.lastMid >= batch.lastSentMid else {
                        throw SyncReplicaError.pushNotApplied(sent: batch.lastSentMid, applied: reply.lastMid)
                    }
                    if !reply.rejected.isEmpty { rejected = (rejected + reply.rejected).sorted { $0.mid < $1.mid } }
                }
                if let next { inFlight = send(next, client: client) }
                if rejected.isEmpty {
                    try store.acknowledgeSyncChanges(through: batch.lastMid)
                } else {
                    // Each refused change is recorded with its values, and its object listed
                    // for a fetch of the server's state, in the transaction that acknowledges it.
                    let byMid = Dictionary(current.changes.map { ($0.mid, $0) }, uniquingKeysWith: { first, _ in first })
                    let refused = rejected.compactMap { rejection in byMid[rejection.mid].map { (change: $0, reason: rejection.reason) } }
                    try store.acknowledgeSyncChanges(through: batch.lastMid, rejected: refused)
                }
                let pending = try store.pendingSyncCount()
                channel.update { status in
                    status.pushed += batch.count
                    status.pending = pending
                    if !rejected.isEmpty {
                        status.rejectedCount += rejected.count
                        status.rejections = Array((status.rejections + rejected).suffix(100))
                    }
                }
                // Past the changes recorded before the pass (or with nothing left), it ends.
                guard let next else { break }
                current = next
            }
        } catch {
            // A batch sent ahead is not acknowledged: the next attempt sends it again, and
            // the server skips what it applied. It ends before the replica's next call.
            await inFlight?.drop()
            // The oldest change not acknowledged was sent (the batches before it were
            // answered): the server may have applied it and those after it, unless the server
            // answered with an error (its transaction rolled back).
            if let first = current.changes.first?.mid, current.batch != nil, !Self.rolledBack(error) {
                state.withLock { $0.unansweredPushFrom = min($0.unansweredPushFrom ?? first, first) }
            }
            throw error
        }
        // Every change recorded before the call is acknowledged, those of a lost answer too.
        state.withLock { $0.unansweredPushFrom = nil }
    }

    /// Whether a push's answer was lost and the server has not said since what it applied.
    var pushAnswerLost: Bool { state.withLock { $0.unansweredPushFrom != nil } }

    /// Learns what became of a push whose answer was lost (nothing to do when none was).
    ///
    /// Until it is known, a pulled row could meet changes the server applied as if they were
    /// still on their way: pulled values do not overwrite fields whose taken changes order
    /// after them, and an applied change whose object a plain-SQL write then changed with a
    /// lower clock (stamped at the server's time, the replica's clock being ahead) would keep
    /// the replica's value, for good once acknowledged. So the server is asked for the last
    /// mid it applied: below the lost batch, nothing of it was applied. Otherwise the changes
    /// through that mid are sent again: the server applies nothing new and answers with the
    /// rejections it recorded for them, and they are acknowledged as a first answer would
    /// have acknowledged them.
    ///
    /// Throws what the calls throw, and the answer stays lost, except when the server refuses
    /// the question or the resend outright (``rolledBack(_:)``: a missing privilege, a client
    /// id of another user, a schema behind): asking again would not help, and pulls must not
    /// wait for ever. Any other failure (the network, an answer that cannot be read) keeps it
    /// lost: the server may have answered, and the next pass asks again.
    func answerLostPush(client: UUID) async throws {
        let (lost, known) = state.withLock { state in
            defer { state.appliedAtCheck = nil }
            return (state.unansweredPushFrom, state.appliedAtCheck)
        }
        guard let first = lost else { return }
        do {
            let applied: UInt64
            if let known { applied = known } else { applied = try await transport.lastMutationId(client: client) }
            if applied >= first {
                try await pushOutbox(client: client, through: applied)
            }
        } catch where Self.rolledBack(error) {
            state.withLock { $0.unansweredPushFrom = nil }
            throw error
        }
        state.withLock { $0.unansweredPushFrom = nil }
    }

    /// Whether a push that failed with `error` certainly applied nothing: the server answered
    /// that it refused the statement (its transaction rolled back). Any other failure (the
    /// network, a timeout, an answer that could not be read, an odd HTTP status) may have
    /// come after the server applied the batch.
    static func rolledBack(_ error: any Error) -> Bool {
        guard let failure = error as? SyncTransportError else { return false }
        switch failure {
        case .server: return !failure.isTransient
        case .schemaBehind: return true
        case .unreachable, .timedOut, .malformedReply, .closed: return false
        }
    }

    /// Outbox changes taken for a push: those the batch covers, their encoding (nil when
    /// there were none), and those taken that had no room in it (sent first in the next
    /// batch, without being read again).
    private typealias TakenBatch = (changes: ArraySlice<SyncChange>, batch: SyncPushBatch?, leftover: ArraySlice<SyncChange>)

    /// Takes the outbox entries after mid `after` (up to a batch: ``Options/pushBatchSize``
    /// changes, ``Options/pushBatchBytes`` bytes) after the `carrying` ones taken before, and
    /// encodes them. Reading stops once the bytes are reached, so a change's values are read
    /// and encoded once, whatever their size.
    private func takeBatch(after mid: UInt64, carrying: ArraySlice<SyncChange>, through: UInt64) throws -> TakenBatch {
        var changes = Array(carrying)
        let carried = carrying.reduce(0) { $0 + $1.wireSizeEstimate }
        if changes.count < options.pushBatchSize && carried < options.pushBatchBytes {
            changes += try store.takeSyncChanges(limit: options.pushBatchSize - changes.count, after: carrying.last?.mid ?? mid,
                                                 byteBudget: options.pushBatchBytes - carried)
        }
        // (Only when settling a lost answer: those taken past `through` stay taken and
        // unacknowledged, and the next push sends them.)
        if let last = changes.last, last.mid > through { changes = changes.filter { $0.mid <= through } }
        guard let (batch, covered) = SyncPushBatch.encoding(changes[...], byteLimit: options.pushBatchBytes,
                                                            largestChange: options.largestChange) else {
            return ([], nil, [])
        }
        return (changes[..<covered], batch, changes[covered...])
    }

    /// Starts pushing `taken`; nil when it has nothing to send (no changes, or only updates
    /// of objects removed since).
    private func send(_ taken: TakenBatch, client: UUID) -> PendingCall<SyncPushReply>? {
        guard let batch = taken.batch, batch.count > 0 else { return nil }
        let transport = transport
        return PendingCall { try await transport.push(client: client, batch: batch) }
    }
}
