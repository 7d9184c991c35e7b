import CLMDB
import Foundation

/// The sync counters as the last committed write transaction of this store instance that
/// used them left them, and the outbox's handle, so that the next write transaction starts
/// from them instead of reading the catalog and opening the outbox by name.
///
/// The counters are valid only for the write transaction that directly follows that commit:
/// LMDB numbers write transactions, so a transaction whose id is one above the remembered
/// commit's knows that nothing (in this process or another) committed in between. Any other
/// transaction reads the counters from the catalog as before.
final class CommittedSyncState: @unchecked Sendable {
    private let lock = NSLock()
    private var committed: (transactionId: Int, state: SyncState)?
    private var outboxHandle: MDB_dbi = 0

    /// The counters for the write transaction with id `transactionId`, when the remembered
    /// commit directly precedes it.
    func state(forWriteTransaction transactionId: Int) -> SyncState? {
        lock.withLock {
            guard let committed, committed.transactionId &+ 1 == transactionId else { return nil }
            return committed.state
        }
    }

    /// The outbox's handle, once a committed transaction opened it (LMDB keeps a handle a
    /// committed transaction opened, and Coffer never deletes the outbox).
    var outbox: MDB_dbi? {
        lock.withLock { outboxHandle == 0 ? nil : outboxHandle }
    }

    /// After the write transaction that committed as `transactionId` (it wrote something,
    /// so it took that id) left the counters at `state`, with the outbox's handle.
    func remember(_ state: SyncState, committedAs transactionId: Int, outbox: MDB_dbi) {
        lock.withLock {
            committed = (transactionId, state)
            if outbox != 0 { outboxHandle = outbox }
        }
    }
}
