@_spi(CofferSync) import Coffer
import Foundation

extension SyncReplica {
    /// Applies the parked conflicts again at the end of a pass, when any are parked: a local
    /// change since they were parked (the app removed the object holding the value, or gave
    /// it another) may have freed their values. Those that still collide stay parked. Costs
    /// nothing while none are parked: the count is kept from the last look, and a pull that
    /// parks one says so.
    ///
    /// - Throws: what `Store.retrySyncConflicts()` throws (a parked change that no longer
    ///   fits its entity): the pass fails and reports it, after its push and pull.
    func retryParkedConflicts(parkedByThisPass: Int) throws {
        let known = state.withLock { $0.parkedConflicts }
        guard known != 0 || parkedByThisPass > 0 else { return }
        let applied = try store.retrySyncConflicts()
        let parked = try store.syncConflicts().count
        state.withLock { $0.parkedConflicts = parked }
        channel.update { status in
            status.parkedConflicts = parked
            status.resolvedConflicts += applied
        }
    }
}
