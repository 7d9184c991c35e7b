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
    func pushOutbox(client: UUID) async throws {
        channel.update { $0.phase = .pushing }
        guard try store.pendingSyncCount() > 0 else {
            channel.update { $0.pending = 0 }
            return
        }
        let recordedBefore = try store.syncLastMutationId()
        while true {
            try Task.checkCancellation()
            let changes = try store.takeSyncChanges(limit: options.pushBatchSize)
            guard let batch = SyncPushBatch(changes: changes) else { break }
            // Changes the server could never store are refused here, and end as its refusals do.
            var rejected = batch.refusedLocally
            if batch.count > 0 {
                let reply = try await transport.push(client: client, batch: batch)
                // The server answers with the highest mid it has applied; below the last one
                // sent, it skipped some, and acknowledging them would lose them.
                guard reply.lastMid >= batch.lastSentMid else {
                    throw SyncReplicaError.pushNotApplied(sent: batch.lastSentMid, applied: reply.lastMid)
                }
                if !reply.rejected.isEmpty { rejected = (rejected + reply.rejected).sorted { $0.mid < $1.mid } }
            }
            if rejected.isEmpty {
                try store.acknowledgeSyncChanges(through: batch.lastMid)
            } else {
                // Each refused change is recorded with its values, and its object listed for
                // a fetch of the server's state, in the transaction that acknowledges it.
                let byMid = Dictionary(changes.map { ($0.mid, $0) }, uniquingKeysWith: { first, _ in first })
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
            if batch.lastMid >= recordedBefore || pending == 0 { break }
        }
    }
}
