@testable import CofferSync
import Foundation

/// A transport that forwards to another and lets a test watch or interrupt each call: it
/// records the client ids the replica checks, and runs hooks around pushes, pulls and fetches
/// (a crash test's child kills itself in one, at a named point).
final class InterceptingTransport: SyncTransport {
    /// What the hooks see: the call and, after it, the server's answer.
    enum Event {
        case beforePush(client: UUID, batch: SyncPushBatch)
        case afterPush(client: UUID, reply: SyncPushReply)
        case beforePull(entity: String, cursor: String)
        case afterPull(entity: String, cursor: String, page: Data)
        case pullFailed(entity: String, cursor: String, error: any Error)
        case beforeFetch(entity: String, ids: [UUID])
        case afterFetch(entity: String, ids: [UUID], page: Data)
    }

    let inner: any SyncTransport
    private let hook: @Sendable (Event) -> Void
    private let checked = LockedState<[UUID]>([])

    init(_ inner: any SyncTransport, hook: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.inner = inner
        self.hook = hook
    }

    /// The client ids the replica asked the server about, in order.
    var checkedClients: [UUID] { checked.withLock { $0 } }

    var stream: String { inner.stream }

    func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply {
        hook(.beforePush(client: client, batch: batch))
        let reply = try await inner.push(client: client, batch: batch)
        hook(.afterPush(client: client, reply: reply))
        return reply
    }

    func lastMutationId(client: UUID) async throws -> UInt64 {
        checked.withLock { $0.append(client) }
        return try await inner.lastMutationId(client: client)
    }

    func pull(entity: String, cursor: String, limit: Int) async throws -> Data {
        hook(.beforePull(entity: entity, cursor: cursor))
        let page: Data
        do {
            page = try await inner.pull(entity: entity, cursor: cursor, limit: limit)
        } catch {
            hook(.pullFailed(entity: entity, cursor: cursor, error: error))
            throw error
        }
        hook(.afterPull(entity: entity, cursor: cursor, page: page))
        return page
    }

    func pull(entity: String, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        hook(.beforePull(entity: entity, cursor: cursor))
        let page: Data
        do {
            page = try await inner.pull(entity: entity, cursor: cursor, limit: limit, bytes: bytes)
        } catch {
            hook(.pullFailed(entity: entity, cursor: cursor, error: error))
            throw error
        }
        hook(.afterPull(entity: entity, cursor: cursor, page: page))
        return page
    }

    func pull(subscription: SyncSubscription, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        hook(.beforePull(entity: subscription.entity, cursor: cursor))
        let page: Data
        do {
            page = try await inner.pull(subscription: subscription, cursor: cursor, limit: limit, bytes: bytes)
        } catch {
            hook(.pullFailed(entity: subscription.entity, cursor: cursor, error: error))
            throw error
        }
        hook(.afterPull(entity: subscription.entity, cursor: cursor, page: page))
        return page
    }

    func scopeIds(entity: String, subscriptions: [SyncSubscription], after: UUID?, limit: Int) async throws -> Data {
        try await inner.scopeIds(entity: entity, subscriptions: subscriptions, after: after, limit: limit)
    }

    func fetch(entity: String, ids: [UUID]) async throws -> Data {
        hook(.beforeFetch(entity: entity, ids: ids))
        let page = try await inner.fetch(entity: entity, ids: ids)
        hook(.afterFetch(entity: entity, ids: ids, page: page))
        return page
    }

    func waitForChanges(timeout: Duration) async throws -> Bool {
        try await inner.waitForChanges(timeout: timeout)
    }

    func close() async {
        await inner.close()
    }
}
