import Foundation
import Hummingbird
import NIOCore

extension Gateway {
    /// A request refused before it reaches the database, or the database's refusal, as the
    /// HTTP answer it becomes.
    struct Refusal: Error {
        let status: HTTPResponse.Status
        let error: String
        var sqlState: String?
        var message: String

        init(_ status: HTTPResponse.Status, _ error: String, _ message: String, sqlState: String? = nil) {
            self.status = status
            self.error = error
            self.message = message
            self.sqlState = sqlState
        }
    }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("health") { _, _ -> Response in
            do {
                _ = try await self.database.withLease { connection in
                    try await connection.query("SELECT 1", logger: self.logger).collect()
                }
                return Self.json(.ok, #"{"status":"ok"}"#)
            } catch {
                return Self.json(.serviceUnavailable, #"{"status":"unavailable"}"#)
            }
        }
        router.get("metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: .init(byteBuffer: ByteBuffer(string: self.metrics.text(waiting: self.hub.waiting))))
        }
        router.post("v1/push") { request, _ -> Response in
            try await self.answer("push", request) { user, request in
                let client = try Self.uuid(request, "client")
                let batch = try await self.body(of: &request)
                return try await self.call(user, "SELECT \(self.schemaSQL).coffer_push($1::uuid, $2::jsonb)::text", [client, batch])
            }
        }
        router.get("v1/pull") { request, _ -> Response in
            try await self.answer("pull", request) { user, request in
                let entity = try Self.entity(request)
                let cursor = try Self.parameter(request, "cursor", maximumLength: 200)
                let limit = try Self.integer(request, "limit", 1...100_000)
                if request.uri.queryParameters["scope"] != nil {
                    let scope = try Self.parameter(request, "scope", maximumLength: 200)
                    let parameters = request.uri.queryParameters["parameters"].map(String.init) ?? "{}"
                    guard parameters.utf8.count <= 4096,
                          (try? JSONSerialization.jsonObject(with: Data(parameters.utf8))) is [String: Any] else {
                        throw Refusal(.badRequest, "malformed", "query parameter parameters must be a JSON object of at most 4096 bytes")
                    }
                    let bytes = request.uri.queryParameters["bytes"] == nil ? 4 << 20 : try Self.integer(request, "bytes", 1...(64 << 20))
                    return try await self.call(
                        user, "SELECT \(self.schemaSQL).coffer_pull($1, $2, $3::integer, $4::bigint, $5, $6::jsonb)::text",
                        [entity, cursor, String(limit), String(bytes), scope, parameters])
                }
                if request.uri.queryParameters["bytes"] != nil {
                    let bytes = try Self.integer(request, "bytes", 1...(64 << 20))
                    return try await self.call(user, "SELECT \(self.schemaSQL).coffer_pull($1, $2, $3::integer, $4::bigint)::text",
                                               [entity, cursor, String(limit), String(bytes)])
                }
                return try await self.call(user, "SELECT \(self.schemaSQL).coffer_pull($1, $2, $3::integer)::text",
                                           [entity, cursor, String(limit)])
            }
        }
        router.post("v1/fetch") { request, _ -> Response in
            try await self.answer("fetch", request) { user, request in
                let entity = try Self.entity(request)
                let ids = try await self.body(of: &request)
                return try await self.call(
                    user, "SELECT \(self.schemaSQL).coffer_fetch($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb))::uuid[])::text",
                    [entity, ids])
            }
        }
        router.post("v1/scope-ids") { request, _ -> Response in
            try await self.answer("scope-ids", request) { user, request in
                let entity = try Self.entity(request)
                let limit = try Self.integer(request, "limit", 1...100_000)
                let after = request.uri.queryParameters["after"] == nil ? "" : try Self.uuid(request, "after")
                let subscriptions = try await self.body(of: &request)
                return try await self.call(
                    user, "SELECT \(self.schemaSQL).coffer_scope_ids($1, $2::jsonb, nullif($3, '')::uuid, $4::integer)::text",
                    [entity, subscriptions, after, String(limit)])
            }
        }
        router.get("v1/last-mid") { request, _ -> Response in
            try await self.answer("last-mid", request) { user, request in
                let client = try Self.uuid(request, "client")
                let mid = try await self.call(user, "SELECT \(self.schemaSQL).coffer_last_mid($1::uuid)::text", [client])
                return #"{"lastMid":""# + mid + #""}"#
            }
        }
        router.get("v1/wait") { request, _ -> Response in
            try await self.answer("wait", request) { user, request in try await self.wait(request, user: user, keys: nil) }
        }
        router.post("v1/wait") { request, _ -> Response in
            try await self.answer("wait", request) { user, request in
                try await self.wait(request, user: user, keys: try await self.wakeKeys(of: &request))
            }
        }
    }

    /// The most keys one wait may name, and the longest key.
    static let waitKeyLimit = 10_000
    static let waitKeyLength = 512

    /// A wait for changes that concern `keys` (nil: any change). `waiter`, when given, names
    /// the client's transport and `wait` the wait's place among its waits: its next wait
    /// ends this one (see `GatewayWakeHub`).
    private func wait(_ request: Request, user: String, keys: Set<String>?) async throws -> String {
        // A longer wait than the gateway holds is shortened, not refused.
        let seconds = min(try Self.integer(request, "timeout", 0...86_400), configuration.limits.waitSeconds)
        let after = request.uri.queryParameters["after"].map(String.init)
        var owner: (name: String, sequence: UInt64)?
        if let waiter = request.uri.queryParameters["waiter"] {
            guard (1...64).contains(waiter.utf8.count),
                  waiter.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                      || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
                throw Refusal(.badRequest, "malformed", "waiter must be 1 to 64 letters, digits and dashes")
            }
            let sequence = try request.uri.queryParameters["wait"].map { text -> UInt64 in
                guard let sequence = UInt64(text) else {
                    throw Refusal(.badRequest, "malformed", "wait must be a whole number")
                }
                return sequence
            } ?? 0
            // Per user: one user can never end another's wait.
            owner = ("\(user.utf8.count):\(user)/\(waiter)", sequence)
        }
        guard let (changed, generation) = await hub.wait(after: after, keys: keys, timeout: .seconds(seconds), owner: owner) else {
            throw Refusal(.serviceUnavailable, "busy", "too many clients wait for changes; try again shortly")
        }
        return #"{"changed":\#(changed),"generation":"\#(generation)"}"#
    }

    /// The keys a wait names: its body, a JSON array of strings, each an entity's name, a
    /// slash and what follows (as pull pages give them under `"wake"`).
    private func wakeKeys(of request: inout Request) async throws -> Set<String> {
        let text = try await body(of: &request)
        guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any],
              array.count <= Self.waitKeyLimit else {
            throw Refusal(.badRequest, "malformed", "the body must be an array of at most \(Self.waitKeyLimit) keys")
        }
        var keys = Set<String>()
        for element in array {
            guard let key = element as? String, key.contains("/"), key.utf8.count <= Self.waitKeyLength,
                  !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw Refusal(.badRequest, "malformed",
                              "each key must be a string of at most \(Self.waitKeyLength) bytes holding a slash, with no control characters")
            }
            keys.insert(key)
        }
        return keys
    }

    /// Authenticates, rate-limits and runs `body`, turning every refusal into its answer.
    private func answer(_ route: String, _ request: Request,
                        _ body: (String, inout Request) async throws -> String) async throws -> Response {
        let started = ContinuousClock.now
        var request = request
        let response: Response
        do {
            let user: String
            do {
                user = try await authenticator.user(authorization: request.headers[.authorization])
            } catch let refusal as GatewayAuthenticator.Refusal {
                logger.info("refused a token", metadata: ["route": "\(route)", "reason": "\(refusal)"])
                throw Refusal(.unauthorized, "unauthorized", "a valid bearer token is required")
            }
            guard limiter.admit(user) else {
                throw Refusal(.tooManyRequests, "rate limited", "too many requests; try again shortly")
            }
            response = Self.json(.ok, try await body(user, &request))
        } catch let refusal as Refusal {
            var answer = Self.json(refusal.status, Self.errorJSON(refusal))
            if refusal.status == .unauthorized { answer.headers[.wwwAuthenticate] = "Bearer" }
            if refusal.status == .tooManyRequests || refusal.error == "busy" { answer.headers[.retryAfter] = "1" }
            response = answer
        }
        let elapsed = ContinuousClock.now - started
        metrics.record(route: route, status: response.status.code,
                       seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        return response
    }

    /// Calls the database as the app's role for `user`, mapping its refusals.
    private func call(_ user: String, _ sql: String, _ values: [String]) async throws -> String {
        do {
            return try await database.call(user: user, sql, values)
        } catch GatewayDatabase.Failure.refused(let state, let message) {
            let status: HTTPResponse.Status
            if ["08", "40", "53", "55", "57", "58"].contains(String(state.prefix(2))) {
                status = .serviceUnavailable
            } else if state == "CF001" {
                status = .conflict
            } else if ["CF005", "CF006", "42501"].contains(state) || state.hasPrefix("28") {
                status = .forbidden
            } else {
                status = .unprocessableContent
            }
            throw Refusal(status, status == .serviceUnavailable ? "unavailable" : "refused", message, sqlState: state)
        } catch GatewayDatabase.Failure.unavailable(let detail) {
            logger.warning("database unavailable", metadata: ["detail": "\(detail)"])
            throw Refusal(.serviceUnavailable, "unavailable", "the database cannot be reached", sqlState: "08000")
        }
    }

    /// The request's body as text, refusing more than the limit (413) and what is not UTF-8.
    private func body(of request: inout Request) async throws -> String {
        let limit = configuration.limits.requestBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw Refusal(.contentTooLarge, "too large", "the body is larger than \(limit) bytes")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw Refusal(.contentTooLarge, "too large", "the body is larger than \(limit) bytes")
        }
        guard let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes), !text.isEmpty else {
            throw Refusal(.badRequest, "malformed", "the body must be JSON text")
        }
        // The database parses it; what is not JSON at all is refused here.
        guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) is [Any] else {
            throw Refusal(.badRequest, "malformed", "the body must be a JSON array")
        }
        return text
    }

    static func parameter(_ request: Request, _ name: String, maximumLength: Int) throws -> String {
        guard let value = request.uri.queryParameters[Substring(name)].map(String.init), !value.isEmpty,
              value.utf8.count <= maximumLength, !value.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw Refusal(.badRequest, "malformed", "query parameter \(name) is missing or too long")
        }
        return value
    }

    static func entity(_ request: Request) throws -> String {
        try parameter(request, "entity", maximumLength: 63)
    }

    static func uuid(_ request: Request, _ name: String) throws -> String {
        let text = try parameter(request, name, maximumLength: 36)
        guard let id = UUID(uuidString: text) else { throw Refusal(.badRequest, "malformed", "\(name) must be a UUID") }
        return id.uuidString.lowercased()
    }

    static func integer(_ request: Request, _ name: String, _ range: ClosedRange<Int>) throws -> Int {
        let text = try parameter(request, name, maximumLength: 20)
        guard let value = Int(text), range.contains(value) else {
            throw Refusal(.badRequest, "malformed", "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func errorJSON(_ refusal: Refusal) -> String {
        var object: [String: String] = ["error": refusal.error, "message": refusal.message]
        if let state = refusal.sqlState { object["sqlState"] = state }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return #"{"error":"internal"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }
}
