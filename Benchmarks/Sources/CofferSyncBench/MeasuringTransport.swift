import CofferSync
import Foundation

/// A transport that forwards to another and counts what crosses it: the bytes of each push
/// batch and pulled page (the payload, without PostgreSQL's framing) and the moment the last
/// push reply arrived, which is where a pass's push phase ends and its pull begins.
final class MeasuringTransport: SyncTransport, @unchecked Sendable {
    struct Counts {
        var pushedBytes = 0
        var pushedChanges = 0
        var pulledBytes = 0
        var pushEnded: ContinuousClock.Instant?
        /// Time from each push and pull call to its answer: the server's part (with the
        /// network). The replica works during these calls (it takes and encodes the next
        /// batch, it applies the previous page), so they overlap its own work.
        var pushWait = Duration.zero
        var pullWait = Duration.zero
    }

    let base: PostgresTransport
    private let lock = NSLock()
    private var counts = Counts()

    init(_ base: PostgresTransport) {
        self.base = base
    }

    var stream: String { base.stream }

    /// The counts so far, and zero counts from now on.
    func take() -> Counts {
        lock.withLock {
            let taken = counts
            counts = Counts()
            return taken
        }
    }

    func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply {
        let start = ContinuousClock.now
        let reply = try await base.push(client: client, batch: batch)
        let now = ContinuousClock.now
        lock.withLock {
            counts.pushWait += now - start
            counts.pushedBytes += batch.json.utf8.count
            counts.pushedChanges += batch.count
            counts.pushEnded = now
        }
        return reply
    }

    func lastMutationId(client: UUID) async throws -> UInt64 {
        try await base.lastMutationId(client: client)
    }

    func pull(entity: String, cursor: String, limit: Int) async throws -> Data {
        let start = ContinuousClock.now
        let page = try await base.pull(entity: entity, cursor: cursor, limit: limit)
        let waited = ContinuousClock.now - start
        lock.withLock {
            counts.pulledBytes += page.count
            counts.pullWait += waited
        }
        return page
    }

    func fetch(entity: String, ids: [UUID]) async throws -> Data {
        try await base.fetch(entity: entity, ids: ids)
    }

    func waitForChanges(timeout: Duration) async throws -> Bool {
        try await base.waitForChanges(timeout: timeout)
    }

    func close() async {
        await base.close()
    }
}
