@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation

/// A transport in front of a real one that a test scripts: pushes that fail, a pull call
/// that fails, fetches that fail, pages rewritten on their way, and a log of the pull
/// cursors and fetched ids.
final class ScriptedTransport: SyncTransport {
    struct Script {
        /// Every push fails (as a server that is unreachable would make it).
        var failPushes = false
        /// The next this many pushes reach the server, which applies them, and then fail as
        /// a connection lost before the reply would make them.
        var lostReplies = 0
        /// Once a reply was lost, every push fails (`failPushes` is set): the connection
        /// stays down for pushes while other calls get through.
        var failPushesAfterLostReply = false
        /// What a failing push throws (`failPushes`).
        var failPushesAs = SyncTransportError.unreachable(operation: "push", detail: "scripted")
        /// Failures of the next calls of `lastMutationId`, one per call, in order.
        var lastMidFailures: [SyncTransportError] = []
        /// What a push whose reply is lost throws.
        var lostReplyError = SyncTransportError.unreachable(operation: "push", detail: "scripted: the reply was lost")
        /// The pull calls made so far, with the cursor each asked from.
        var pulls: [(entity: String, cursor: String)] = []
        /// The pull call (counted from 1 over the transport's life) that fails instead of
        /// reaching the server.
        var failingPull: Int?
        /// Replaces a page (entity, cursor asked from, page) before the replica sees it.
        var rewrite: (@Sendable (String, String, Data) -> Data)?
        /// The ids asked for by fetches, in order.
        var fetched: [UUID] = []
        /// Every fetch fails.
        var failFetches = false
        /// Fetches of more ids fail as a reply too large for the server would.
        var largestFetch = Int.max
        /// Whether the transport says it notifies changes (nil: as the inner one says).
        var notifies: Bool?
        /// Waits return false ("nothing changed") after a millisecond, as a server that
        /// ends its waits early would make them; counted in `waits`.
        var quietWaits = false
        var waits = 0
    }

    let inner: any SyncTransport
    let script = LockedState(Script())

    init(_ inner: any SyncTransport) {
        self.inner = inner
    }

    var stream: String { inner.stream }

    func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply {
        if let failure = script.withLock({ $0.failPushes ? $0.failPushesAs : nil }) { throw failure }
        let reply = try await inner.push(client: client, batch: batch)
        let loss = script.withLock { script -> SyncTransportError? in
            guard script.lostReplies > 0 else { return nil }
            script.lostReplies -= 1
            if script.failPushesAfterLostReply { script.failPushes = true }
            return script.lostReplyError
        }
        if let loss { throw loss }
        return reply
    }

    func lastMutationId(client: UUID) async throws -> UInt64 {
        if let failure = script.withLock({ $0.lastMidFailures.isEmpty ? nil : $0.lastMidFailures.removeFirst() }) { throw failure }
        return try await inner.lastMutationId(client: client)
    }

    func pull(entity: String, cursor: String, limit: Int) async throws -> Data {
        let (call, failing, rewrite) = script.withLock { script in
            script.pulls.append((entity, cursor))
            return (script.pulls.count, script.failingPull, script.rewrite)
        }
        if call == failing { throw SyncTransportError.unreachable(operation: "pull \(entity)", detail: "scripted") }
        let page = try await inner.pull(entity: entity, cursor: cursor, limit: limit)
        return rewrite.map { $0(entity, cursor, page) } ?? page
    }

    func fetch(entity: String, ids: [UUID]) async throws -> Data {
        let (failing, largest) = script.withLock { script in
            script.fetched += ids
            return (script.failFetches, script.largestFetch)
        }
        if failing { throw SyncTransportError.unreachable(operation: "fetch \(entity)", detail: "scripted") }
        if ids.count > largest {
            throw SyncTransportError.server(operation: "fetch \(entity)", sqlState: "54000",
                                            message: "total size of jsonb array elements exceeds the maximum of 268435455 bytes")
        }
        return try await inner.fetch(entity: entity, ids: ids)
    }

    var notifiesChanges: Bool { script.withLock { $0.notifies } ?? inner.notifiesChanges }

    func waitForChanges(timeout: Duration) async throws -> Bool {
        try await waitForChanges(timeout: timeout, keys: nil)
    }

    func waitForChanges(timeout: Duration, keys: Set<String>?) async throws -> Bool {
        let quiet = script.withLock { script in
            script.waits += 1
            return script.quietWaits
        }
        if quiet {
            try await Task.sleep(for: .milliseconds(1))
            return false
        }
        return try await inner.waitForChanges(timeout: timeout, keys: keys)
    }

    func close() async {
        await inner.close()
    }
}
