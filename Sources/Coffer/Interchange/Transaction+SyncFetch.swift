import Foundation

/// Applying the server's current state of chosen objects (`coffer_fetch`): a resync's
/// unseen objects, a rejected change's object.
extension Transaction {
    /// Applies `changes` in remote mode with the rules of pulled changes, except that a
    /// delete (the server has no such object) leaves an object with unacknowledged local
    /// changes alone: those are pushed, and the server's answer to them decides.
    /// The clock moves past the changes' clocks and `serverClock` (the server's time, 0 when
    /// the reply did not give it).
    func applyFetchedChanges(_ changes: [PulledPage.Change], entity: String, file: (device: UInt64, inode: UInt64),
                             serverClock: UInt64 = 0) throws -> SyncPullSummary {
        let clientId = try replicaClientId(file: file, renewing: false)
        let wasApplying = sync.isApplyingRemote
        sync.isApplyingRemote = true
        defer { sync.isApplyingRemote = wasApplying }
        var applier = try PulledPageApplier(entity: entity, clientId: clientId, in: self)
        let local = try unacknowledgedChanges(entityId: applier.binding.entityId)
        var highest: UInt64 = 0
        for change in changes {
            if change.operation == .delete, local[change.syncId] != nil { continue }
            try applier.apply(change)
            highest = max(highest, change.stamp.clock, change.clocks.values.map(\.clock).max() ?? 0)
        }
        if highest > 0 || serverClock > 0 { try receiveSyncClock(highest, serverClock: serverClock) }
        return SyncPullSummary(upserted: applier.upserted, deleted: applier.deleted, unchanged: applier.unchanged,
                               skipped: applier.skipped, fieldsKeptLocal: applier.fieldsKeptLocal, conflicts: applier.conflicts,
                               cursor: "0", more: false)
    }
}
