import Foundation

/// How a ``SyncReplica`` reaches the server: it sends push batches and asks for pages of
/// changes, both as the wire JSON the server's `coffer_push` and `coffer_pull` functions
/// take and return, and waits for the server's wake-ups. The transport carries bytes; the
/// replica decides what to send, what to apply and when to retry.
///
/// ``PostgresTransport`` talks to PostgreSQL directly. A test or another kind of server (a
/// gateway in front of the same SQL functions) provides its own.
///
/// ```swift
/// let transport = PostgresTransport(configuration: .init(host: "127.0.0.1", username: "app",
///                                                        password: nil, database: "app", tls: .disable))
/// let reply = try await transport.push(client: clientId, batch: batch)
/// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 500)
/// ```
public protocol SyncTransport: Sendable {
    /// Names the server and schema, so that a store keeps its pull cursors per server: the
    /// same store synced with two servers keeps two cursors per entity.
    ///
    /// ```swift
    /// transport.stream   // "postgres://127.0.0.1:5432/app#coffer"
    /// ```
    var stream: String { get }

    /// Sends one batch of changes of `client` (the server applies it in one transaction and
    /// skips the mids it has applied before, so resending a batch is safe).
    ///
    /// ```swift
    /// let reply = try await transport.push(client: clientId, batch: batch)
    /// try store.acknowledgeSyncChanges(through: reply.lastMid)
    /// ```
    func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply

    /// The highest mutation id of `client` the server has applied (0 when it never heard of
    /// the client).
    ///
    /// ```swift
    /// if try await transport.lastMutationId(client: clientId) > store.syncLastMutationId() { ... }
    /// ```
    func lastMutationId(client: UUID) async throws -> UInt64

    /// One page of `entity`'s changes after `cursor`, at most `limit` of them, as the JSON
    /// text `coffer_pull` returns (`{"changes": [...], "cursor": "...", "more": false}`),
    /// untouched.
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 500)
    /// ```
    func pull(entity: String, cursor: String, limit: Int) async throws -> Data

    /// One page as ``pull(entity:cursor:limit:)`` returns it, ending also after the change
    /// that takes it to about `bytes` bytes (at least one change: the cursor always moves).
    /// A row the server cannot send at all comes as a marker (`"op": "oversized"`). A
    /// transport without this call pulls pages of the server's default size (4 MiB).
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 1000, bytes: 4 << 20)
    /// ```
    func pull(entity: String, cursor: String, limit: Int, bytes: Int) async throws -> Data

    /// One page of the rows of `subscription`'s scope that changed after `cursor` (with
    /// every tombstone of its entity), in the format of
    /// ``pull(entity:cursor:limit:bytes:)``, plus `"moved": true` when rows may have entered
    /// or left the scope in the page's span without a change of their own (the replica then
    /// compares its ids with ``scopeIds(entity:subscriptions:after:limit:)``). The server
    /// refuses a scope it does not define (SQLSTATE CF008). A transport without scopes pulls
    /// the whole table and refuses the others.
    ///
    /// ```swift
    /// let page = try await transport.pull(subscription: mine, cursor: "0", limit: 1000, bytes: 4 << 20)
    /// ```
    func pull(subscription: SyncSubscription, cursor: String, limit: Int, bytes: Int) async throws -> Data

    /// The ids of `entity`'s rows the caller sees that match any of `subscriptions`, after
    /// `after` in id order, at most `limit` (1 to 100,000), as the JSON text
    /// `coffer_scope_ids` returns: `{"ids": ["<uuid>", ...], "more": false}`.
    ///
    /// ```swift
    /// let listing = try await transport.scopeIds(entity: "Message", subscriptions: [mine], after: nil, limit: 10_000)
    /// ```
    func scopeIds(entity: String, subscriptions: [SyncSubscription], after: UUID?, limit: Int) async throws -> Data

    /// The server's current state of the objects `ids` of `entity` (at most 10,000), as the
    /// JSON text `coffer_fetch` returns: a page in the pull format with an upsert for each
    /// object the server has and a delete for each it has not. The replica applies it without
    /// moving its cursor, after a resync and after a push the server refused part of.
    ///
    /// ```swift
    /// let page = try await transport.fetch(entity: "Task", ids: [rejectedId])
    /// ```
    func fetch(entity: String, ids: [UUID]) async throws -> Data

    /// Waits until the server says something changed since the last call (true), or until
    /// `timeout` passes (false). A transport without wake-ups sleeps and returns false; one
    /// whose wake-up channel was down returns true once it is back (it may have missed one).
    ///
    /// ```swift
    /// if try await transport.waitForChanges(timeout: .seconds(30)) { try await replica.syncNow() }
    /// ```
    func waitForChanges(timeout: Duration) async throws -> Bool

    /// Waits as ``waitForChanges(timeout:)``, for changes that concern one of `keys` (the
    /// `"wake"` keys of the pages of everything the replica pulls; nil: any change). A
    /// transport may wake for more than the keys, never for less.
    ///
    /// ```swift
    /// if try await transport.waitForChanges(timeout: .seconds(30), keys: ["Message/", "Post/3f2a..."]) { ... }
    /// ```
    func waitForChanges(timeout: Duration, keys: Set<String>?) async throws -> Bool

    /// Whether ``waitForChanges(timeout:)`` returns when the server changes (a LISTEN, a
    /// gateway's long poll). A replica then waits for the longest of its
    /// ``SyncReplica/Options/poll`` between passes unless woken, instead of polling from the
    /// shortest after each change: with many replicas, those polls were most of the server's
    /// work.
    ///
    /// ```swift
    /// transport.notifiesChanges   // true for PostgresTransport and GatewayTransport
    /// ```
    var notifiesChanges: Bool { get }

    /// Closes the transport's connections; later calls fail with ``SyncTransportError/closed``.
    ///
    /// ```swift
    /// await transport.close()
    /// ```
    func close() async
}

extension SyncTransport {
    /// False: a transport says when it can wake a replica.
    ///
    /// ```swift
    /// if !transport.notifiesChanges { print("this transport polls") }
    /// ```
    public var notifiesChanges: Bool { false }

    /// Waits for any change: transports that cannot narrow their wake-ups wake for all.
    ///
    /// ```swift
    /// let woken = try await transport.waitForChanges(timeout: .seconds(30), keys: nil)
    /// ```
    public func waitForChanges(timeout: Duration, keys: Set<String>?) async throws -> Bool {
        try await waitForChanges(timeout: timeout)
    }

    /// Pulls with the server's default page size in bytes, for transports that do not pass one.
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 1000, bytes: 1 << 20)
    /// ```
    public func pull(entity: String, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        try await pull(entity: entity, cursor: cursor, limit: limit)
    }

    /// The whole table through ``pull(entity:cursor:limit:bytes:)``; a transport without
    /// scopes refuses the others (SQLSTATE 0A000, not supported).
    ///
    /// ```swift
    /// let page = try await transport.pull(subscription: .wholeTable(Task.self), cursor: "0", limit: 1000, bytes: 1 << 20)
    /// ```
    public func pull(subscription: SyncSubscription, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        guard subscription.isWholeTable else { throw SyncTransportError.scopesUnsupported(operation: "pull \(subscription)") }
        return try await pull(entity: subscription.entity, cursor: cursor, limit: limit, bytes: bytes)
    }

    /// Refused (SQLSTATE 0A000): this transport has no scopes.
    ///
    /// ```swift
    /// _ = try await transport.scopeIds(entity: "Message", subscriptions: [mine], after: nil, limit: 10_000)   // throws
    /// ```
    public func scopeIds(entity: String, subscriptions: [SyncSubscription], after: UUID?, limit: Int) async throws -> Data {
        throw SyncTransportError.scopesUnsupported(operation: "list the ids of \(entity)'s scopes")
    }
}

extension SyncTransportError {
    /// A transport that does not implement scopes was asked for one.
    static func scopesUnsupported(operation: String) -> SyncTransportError {
        .server(operation: operation, sqlState: "0A000", message: "this transport does not support scopes")
    }
}
