import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reaches the server through a `coffer-gateway` over HTTP(S), for public apps that must not
/// hold a database login: each call carries a bearer token (a JWT your sign-in issues), and
/// the gateway calls the same SQL functions as ``PostgresTransport`` does, as the token's
/// user. A replica behaves the same over either transport.
///
/// The token is asked for at every call, so a refreshed token is used as soon as the app has
/// it. Errors map as ``PostgresTransport``'s do: the database's refusals keep their SQLSTATE
/// (`CF001` is ``SyncTransportError/schemaBehind(operation:message:)``); a refused token is
/// `.server(sqlState: "28000")`, a request over the gateway's size limit `"54000"`, one over
/// its rate limit `"53400"` (transient), and an unreachable gateway `.unreachable`.
///
/// ```swift
/// let transport = GatewayTransport(url: URL(string: "https://sync.example.com")!) { try await auth.currentToken() }
/// let replica = try SyncReplica(store: store, entities: [Todo.self], transport: transport)
/// ```
public final class GatewayTransport: SyncTransport, Sendable {
    /// The gateway's base URL (the routes are under `/v1`).
    public let url: URL
    let token: @Sendable () async throws -> String
    let requestTimeout: Duration
    private let state = LockedState(State())

    private struct State {
        var closed = false
        var generation: String?
        /// The gateway does not take a wait with keys (404 or 405): it is older, and waits for all.
        var keysUnsupported = false
        /// Replaced after a call fails on the network: a connection that timed out or broke
        /// mid-request is never reused (as a PostgresTransport closes its connection).
        var session: URLSession = GatewayTransport.makeSession()
        /// The calls under way, so that closing ends them at once.
        var calls: [ObjectIdentifier: GatewayCall] = [:]
        /// How many waits this transport started (each names its place to the gateway).
        var waits: UInt64 = 0
    }

    /// Names this transport's waits to the gateway: a new wait ends the one before it, so a
    /// wait the replica left for a local change does not hold a connection until it times out.
    let waiter = UUID().uuidString.lowercased()

    static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 4
        return URLSession(configuration: configuration)
    }

    /// Drops `failed` (if it is still the current session) and its connections.
    private func replace(_ failed: URLSession) {
        let dropped = state.withLock { state -> URLSession? in
            guard state.session === failed, !state.closed else { return nil }
            state.session = Self.makeSession()
            return failed
        }
        // Its other calls run to their end (none is cancelled: see `perform`).
        dropped?.finishTasksAndInvalidate()
    }

    /// A transport to the gateway at `url`, asking `token` for the bearer token of each call.
    /// `requestTimeout` bounds each call (a wait for changes is given its own time on top); it
    /// is at least one second (URLSession on Linux timed every call out under shorter ones).
    ///
    /// ```swift
    /// let transport = GatewayTransport(url: URL(string: "http://127.0.0.1:8080")!, requestTimeout: .seconds(30)) { token }
    /// ```
    public init(url: URL, requestTimeout: Duration = .seconds(30), token: @escaping @Sendable () async throws -> String) {
        self.url = url
        self.token = token
        self.requestTimeout = max(requestTimeout, .seconds(1))
    }

    /// The gateway's URL: a store keeps its cursors per stream.
    ///
    /// ```swift
    /// transport.stream   // "https://sync.example.com"
    /// ```
    public var stream: String { url.absoluteString }

    /// True: the gateway's long poll (`/v1/wait`) returns when the server changes.
    ///
    /// ```swift
    /// transport.notifiesChanges   // true
    /// ```
    public var notifiesChanges: Bool { true }

    /// Sends a batch (`POST /v1/push`).
    ///
    /// ```swift
    /// let reply = try await transport.push(client: clientId, batch: batch)
    /// ```
    public func push(client: UUID, batch: SyncPushBatch) async throws -> SyncPushReply {
        let data = try await call("push", "POST", "v1/push", ["client": client.uuidString.lowercased()], body: Data(batch.json.utf8))
        return try SyncPushReply(json: String(decoding: data, as: UTF8.self))
    }

    /// The client's last applied mid (`GET /v1/last-mid`).
    ///
    /// ```swift
    /// let applied = try await transport.lastMutationId(client: clientId)
    /// ```
    public func lastMutationId(client: UUID) async throws -> UInt64 {
        let operation = "read the last mutation id"
        let data = try await call(operation, "GET", "v1/last-mid", ["client": client.uuidString.lowercased()])
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let text = object["lastMid"] as? String, let value = UInt64(text) else {
            throw SyncTransportError.malformedReply(operation: operation, detail: String(decoding: data.prefix(100), as: UTF8.self))
        }
        return value
    }

    /// One page of changes (`GET /v1/pull`).
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 500)
    /// ```
    public func pull(entity: String, cursor: String, limit: Int) async throws -> Data {
        try await call("pull \(entity)", "GET", "v1/pull", ["entity": entity, "cursor": cursor, "limit": String(limit)])
    }

    /// One page of changes of about `bytes` at most (`GET /v1/pull`).
    ///
    /// ```swift
    /// let page = try await transport.pull(entity: "Task", cursor: "0", limit: 1000, bytes: 4 << 20)
    /// ```
    public func pull(entity: String, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        try await call("pull \(entity)", "GET", "v1/pull",
                       ["entity": entity, "cursor": cursor, "limit": String(limit), "bytes": String(bytes)])
    }

    /// One page of a subscription's scope (`GET /v1/pull` with `scope` and `parameters`).
    ///
    /// ```swift
    /// let page = try await transport.pull(subscription: mine, cursor: "0", limit: 1000, bytes: 4 << 20)
    /// ```
    public func pull(subscription: SyncSubscription, cursor: String, limit: Int, bytes: Int) async throws -> Data {
        guard !subscription.isWholeTable else {
            return try await pull(entity: subscription.entity, cursor: cursor, limit: limit, bytes: bytes)
        }
        return try await call("pull \(subscription)", "GET", "v1/pull",
                              ["entity": subscription.entity, "cursor": cursor, "limit": String(limit), "bytes": String(bytes),
                               "scope": subscription.scope, "parameters": subscription.parametersJSON])
    }

    /// The ids of the rows of `entity` in any of `subscriptions` (`POST /v1/scope-ids`).
    ///
    /// ```swift
    /// let listing = try await transport.scopeIds(entity: "Message", subscriptions: [mine], after: nil, limit: 10_000)
    /// ```
    public func scopeIds(entity: String, subscriptions: [SyncSubscription], after: UUID?, limit: Int) async throws -> Data {
        var query = ["entity": entity, "limit": String(limit)]
        if let after { query["after"] = after.uuidString.lowercased() }
        return try await call("list the ids of \(entity)'s scopes", "POST", "v1/scope-ids", query,
                              body: Data(SyncSubscription.wireJSON(subscriptions).utf8))
    }

    /// The server's state of chosen objects (`POST /v1/fetch`).
    ///
    /// ```swift
    /// let page = try await transport.fetch(entity: "Task", ids: [rejectedId])
    /// ```
    public func fetch(entity: String, ids: [UUID]) async throws -> Data {
        let body = "[" + ids.map { "\"\($0.uuidString.lowercased())\"" }.joined(separator: ",") + "]"
        return try await call("fetch \(entity)", "POST", "v1/fetch", ["entity": entity], body: Data(body.utf8))
    }

    /// Waits on the gateway for a change after the last one this transport saw (`GET
    /// /v1/wait`); the first call returns true at once.
    ///
    /// ```swift
    /// if try await transport.waitForChanges(timeout: .seconds(25)) { try await replica.syncNow() }
    /// ```
    public func waitForChanges(timeout: Duration) async throws -> Bool {
        try await waitForChanges(timeout: timeout, keys: nil)
    }

    /// Waits on the gateway for a change that concerns one of `keys` (`POST /v1/wait` with
    /// the keys as a JSON array; nil: any change, `GET /v1/wait`). A gateway too old to take
    /// keys is asked for any change from then on.
    ///
    /// ```swift
    /// let woken = try await transport.waitForChanges(timeout: .seconds(25), keys: ["Post/"])
    /// ```
    public func waitForChanges(timeout: Duration, keys: Set<String>?) async throws -> Bool {
        // The gateway counts whole seconds: a shorter wait is rounded up, not down to a
        // wait that returns at once (which made a replica's short polls a busy loop).
        let (whole, fraction) = timeout.components
        let seconds = max(0, min(Int(whole) + (fraction > 0 ? 1 : 0), 300))
        let (generation, sequence) = state.withLock { state in
            state.waits &+= 1
            return (state.generation, state.waits)
        }
        var query = ["timeout": String(seconds), "waiter": waiter, "wait": String(sequence)]
        if let generation { query["after"] = generation }
        let data: Data
        if let keys, !state.withLock({ $0.keysUnsupported }) {
            let body = try JSONSerialization.data(withJSONObject: keys.sorted())
            do {
                data = try await call("wait for changes", "POST", "v1/wait", query, body: body, extraTime: .seconds(seconds))
            } catch SyncTransportError.server(_, let sqlState, _) where sqlState == "0A000" {
                state.withLock { $0.keysUnsupported = true }
                return try await waitForChanges(timeout: timeout, keys: nil)
            }
        } else {
            data = try await call("wait for changes", "GET", "v1/wait", query, extraTime: .seconds(seconds))
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let changed = object["changed"] as? Bool, let generation = object["generation"] as? String else {
            throw SyncTransportError.malformedReply(operation: "wait for changes", detail: String(decoding: data.prefix(100), as: UTF8.self))
        }
        state.withLock { $0.generation = generation }
        return changed
    }

    /// Stops the transport: later calls fail with ``SyncTransportError/closed``.
    ///
    /// ```swift
    /// await transport.close()
    /// ```
    public func close() async {
        let (session, calls) = state.withLock { state -> (URLSession, [GatewayCall]) in
            state.closed = true
            defer { state.calls.removeAll() }
            return (state.session, Array(state.calls.values))
        }
        for call in calls { call.finish(.failure(SyncTransportError.closed)) }
        session.finishTasksAndInvalidate()
    }

    private func call(_ operation: String, _ method: String, _ path: String, _ query: [String: String],
                      body: Data? = nil, extraTime: Duration = .zero) async throws -> Data {
        guard !state.withLock({ $0.closed }) else { throw SyncTransportError.closed }
        var components = URLComponents(url: url.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        components?.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // '+' is a space in a query string: cursors and names may hold one.
        let encoded = components?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        components?.percentEncodedQuery = encoded
        guard let target = components?.url else {
            throw SyncTransportError.malformedReply(operation: operation, detail: "cannot form a URL from \(url) and \(path)")
        }
        var request = URLRequest(url: target)
        request.httpMethod = method
        let limit = requestTimeout + extraTime
        request.timeoutInterval = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        let bearer: String
        do {
            bearer = try await token()
        } catch {
            throw SyncTransportError.server(operation: operation, sqlState: "28000", message: "no token: \(error)")
        }
        request.setValue("Bearer " + bearer, forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await perform(request)
        } catch let failure as Failure {
            // (A cancelled call and a closed transport throw as they are.)
            replace(failure.session)
            if state.withLock({ $0.closed }) { throw SyncTransportError.closed }
            if let error = failure.error as? URLError, error.code == .timedOut {
                throw SyncTransportError.timedOut(operation: operation, after: limit)
            }
            throw SyncTransportError.unreachable(operation: operation, detail: "\(failure.error)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw SyncTransportError.malformedReply(operation: operation, detail: "not an HTTP response")
        }
        if http.statusCode == 200 { return data }
        throw Self.error(operation: operation, status: http.statusCode, body: data)
    }

    /// A call that failed, and the session it ran on (replaced when the network failed).
    private struct Failure: Error {
        let error: any Error
        let session: URLSession
    }

    /// `request` on the current session; a cancelled calling task or a closed transport ends
    /// the call at once.
    ///
    /// The URL task itself is never cancelled. On Linux, `URLSessionTask.cancel()` races with
    /// a transfer that is completing: the cancellation reaches the session after the finished
    /// task left it, and FoundationNetworking stops the process ("Trying to access a behaviour
    /// for a task that in not in the registry"); cancelling synchronously instead deadlocks
    /// with the session's queue (as `URLSession.data(for:)` did when a replica stopped a wait
    /// as it returned). So a call the caller gave up on returns at once and its transfer runs
    /// to its end unheard: a wait is ended by the gateway when the transport's next wait
    /// starts (`waiter`), any call by its own timeout.
    private func perform(_ request: URLRequest) async throws -> GatewayCall.Reply {
        let call = GatewayCall()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<GatewayCall.Reply, any Error>) in
                // Already cancelled: the continuation is resumed, and nothing is sent.
                guard call.start(continuation) else { return }
                // The task is made under the state's lock, so that the session is the current
                // one and not yet invalidated (making a task on an invalidated session traps).
                let task = state.withLock { state -> URLSessionDataTask? in
                    guard !state.closed else { return nil }
                    let session = state.session
                    let task = session.dataTask(with: request) { data, response, error in
                        self.state.withLock { _ = $0.calls.removeValue(forKey: ObjectIdentifier(call)) }
                        if let data, let response, error == nil {
                            call.finish(.success((data, response)))
                        } else {
                            call.finish(.failure(Failure(error: error ?? URLError(.badServerResponse), session: session)))
                        }
                    }
                    state.calls[ObjectIdentifier(call)] = call
                    return task
                }
                guard let task else {
                    call.finish(.failure(SyncTransportError.closed))
                    return
                }
                task.resume()
            }
        } onCancel: {
            call.finish(.failure(CancellationError()))
        }
    }

    /// A gateway's refusal as the transport error it stands for.
    static func error(operation: String, status: Int, body: Data) -> SyncTransportError {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let message = object?["message"] as? String ?? String(decoding: body.prefix(200), as: UTF8.self)
        if let state = object?["sqlState"] as? String {
            if state == "CF001" { return .schemaBehind(operation: operation, message: message) }
            return .server(operation: operation, sqlState: state, message: message)
        }
        switch status {
        case 401: return .server(operation: operation, sqlState: "28000", message: "the gateway refused the token: \(message)")
        case 413: return .server(operation: operation, sqlState: "54000", message: "the gateway's size limit: \(message)")
        case 429: return .server(operation: operation, sqlState: "53400", message: "the gateway's rate limit: \(message)")
        // A route or a method the gateway does not have: it is older than this client.
        case 404, 405: return .server(operation: operation, sqlState: "0A000", message: "the gateway does not support this call: \(message)")
        case 500...599: return .unreachable(operation: operation, detail: "HTTP \(status): \(message)")
        default: return .malformedReply(operation: operation, detail: "HTTP \(status): \(message)")
        }
    }
}
