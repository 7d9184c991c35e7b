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
    func pushOutbox(client: UUID) async throws {
        channel.update { $0.phase = .pushing }
        guard try store.pendingSyncCount() > 0 else {
            channel.update { $0.pending = 0 }
            return
        }
        let recordedBefore = try store.syncLastMutationId()
        var current = try takeBatch(after: 0, carrying: [])
        var inFlight = send(current, client: client)
        do {
            while let batch = current.batch {
                try Task.checkCancellation()
                // The next batch is taken and encoded while the server applies this one; it
                // begins with the changes this one had no room for.
                let next: TakenBatch? = try batch.lastMid < recordedBefore ? takeBatch(after: batch.lastMid, carrying: current.leftover) : nil
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
            throw error
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
    private func takeBatch(after mid: UInt64, carrying: ArraySlice<SyncChange>) throws -> TakenBatch {
        var changes = Array(carrying)
        let carried = carrying.reduce(0) { $0 + $1.wireSizeEstimate }
        if changes.count < options.pushBatchSize && carried < options.pushBatchBytes {
            changes += try store.takeSyncChanges(limit: options.pushBatchSize - changes.count, after: carrying.last?.mid ?? mid,
                                                 byteBudget: options.pushBatchBytes - carried)
        }
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
