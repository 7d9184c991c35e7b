import Foundation

/// What a gateway listens on, which database it calls as which role, how it checks tokens,
/// and its limits. Read from a JSON file (every member optional but the database's and the
/// token key's), then from the environment, which wins (for secrets):
///
/// ```json
/// {"listen": {"host": "127.0.0.1", "port": 8080},
///  "database": {"host": "db.internal", "port": 5432, "user": "coffer_gateway", "database": "app",
///               "schema": "coffer", "role": "app_user", "tls": "require", "connections": 20},
///  "token": {"hmacSecret": "…", "issuer": "https://auth.example.com", "audience": "app"},
///  "limits": {"requestBytes": 75497472, "requestsPerSecond": 20, "burst": 40, "waitSeconds": 25}}
/// ```
///
/// Environment: `COFFER_GATEWAY_HOST`, `COFFER_GATEWAY_PORT`, `COFFER_GATEWAY_DATABASE_PASSWORD`,
/// `COFFER_GATEWAY_TOKEN_SECRET` (an HMAC secret), `COFFER_GATEWAY_TOKEN_PUBLIC_KEY` (a PEM
/// file of an ES256 or RS256 public key).
///
/// ```swift
/// let configuration = try GatewayConfiguration(file: "gateway.json", environment: ProcessInfo.processInfo.environment)
/// ```
public struct GatewayConfiguration: Sendable, Equatable {
    /// Where the gateway accepts HTTP (TLS is terminated in front of it).
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (``Gateway/run(onListening:)`` reports it).
    public var port = 8080

    /// The PostgreSQL server and what the gateway does there.
    public struct Database: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port = 5432
        /// The role the gateway logs in as: a member of ``role`` and of the role the schema
        /// trusts as a gateway (`coffer_trust_gateway`).
        public var user = "coffer_gateway"
        public var password: String?
        public var database = "postgres"
        /// The sync schema.
        public var schema = "coffer"
        /// The role every request runs as (`SET LOCAL ROLE`), granted with `coffer_grant`; its
        /// row-level security policies decide what each user may see and change.
        public var role = "app_user"
        /// `disable` (loopback only) or `require` (TLS, the server's certificate verified
        /// against the system's roots and the host name).
        public var tls = "require"
        /// The most connections the gateway keeps open (besides the one that listens).
        public var connections = 20

        /// The defaults.
        ///
        /// ```swift
        /// configuration.database = .init()
        /// ```
        public init() {}
    }
    public var database = Database()

    /// How tokens are checked: a JWT in `Authorization: Bearer …`, signed with the HMAC secret
    /// (HS256) or the public key (ES256 or RS256), not expired, with the issuer and audience
    /// given here (when given). The user id is the claim `userClaim` (`sub` by default).
    public struct Token: Sendable, Equatable {
        public var hmacSecret: String?
        /// A PEM file of an ECDSA P-256 or RSA public key.
        public var publicKeyFile: String?
        public var issuer: String?
        public var audience: String?
        /// How long past `exp` a token is still taken, for clocks that differ.
        public var leewaySeconds = 30

        /// The defaults.
        ///
        /// ```swift
        /// configuration.token = .init()
        /// ```
        public init() {}
    }
    public var token = Token()

    /// Limits per request and per user.
    public struct Limits: Sendable, Equatable {
        /// Larger request bodies are refused (413) before they are read whole. At least 72
        /// MiB: a replica sends one change of up to 64 MiB alone in a batch, and a limit it
        /// cannot get under would hold its queue for good.
        public var requestBytes = 72 << 20
        /// Each user's sustained request rate; over it, requests are refused with 429.
        public var requestsPerSecond = 20.0
        /// How many requests a user may make at once after a quiet spell.
        public var burst = 40.0
        /// The longest a wait for changes (`GET /v1/wait`) is held open.
        public var waitSeconds = 25
        /// The most waits held open at once; more are answered at once with "no change".
        public var waiters = 10_000
        /// The longest a database call may take.
        public var callSeconds = 30
        /// The longest a request waits for a database connection (all in use, or the
        /// database unreachable) before it is answered 503.
        public var connectSeconds = 5

        /// The smallest `requestBytes` the gateway takes: a change of 64 MiB (a replica's
        /// largest) with the batch's JSON around it.
        public static let smallestRequestBytes = 72 << 20

        /// The defaults.
        ///
        /// ```swift
        /// var limits = GatewayConfiguration.Limits()
        /// ```
        public init() {}
    }
    public var limits = Limits()

    /// The defaults: a gateway on 127.0.0.1:8080 for schema `coffer`, no token key (which
    /// ``Gateway`` refuses).
    ///
    /// ```swift
    /// var configuration = GatewayConfiguration()
    /// configuration.token.hmacSecret = "a long random secret"
    /// ```
    public init() {}

    /// Reads `file` (JSON; nil: the defaults), then the environment.
    ///
    /// ```swift
    /// let configuration = try GatewayConfiguration(file: "/etc/coffer/gateway.json", environment: ProcessInfo.processInfo.environment)
    /// ```
    ///
    /// - Throws: ``GatewayConfigurationError`` naming the member that is wrong.
    public init(file: String?, environment: [String: String]) throws {
        if let file {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw GatewayConfigurationError(member: file, reason: "cannot be read: \(error.localizedDescription)")
            }
            try read(data)
        }
        if let host = environment["COFFER_GATEWAY_HOST"] { self.host = host }
        if let port = environment["COFFER_GATEWAY_PORT"] {
            guard let value = Int(port), (0...65535).contains(value) else {
                throw GatewayConfigurationError(member: "COFFER_GATEWAY_PORT", reason: "is not a port: \(port)")
            }
            self.port = value
        }
        if let password = environment["COFFER_GATEWAY_DATABASE_PASSWORD"] { database.password = password }
        if let secret = environment["COFFER_GATEWAY_TOKEN_SECRET"] { token.hmacSecret = secret }
        if let key = environment["COFFER_GATEWAY_TOKEN_PUBLIC_KEY"] { token.publicKeyFile = key }
        try check()
    }

    /// Checks the values that would fail later, at the first request, or not at all.
    ///
    /// ```swift
    /// try configuration.check()
    /// ```
    public func check() throws {
        func refuse(_ member: String, _ reason: String) -> GatewayConfigurationError { GatewayConfigurationError(member: member, reason: reason) }
        guard (0...65535).contains(port) else { throw refuse("listen.port", "is not a port: \(port)") }
        guard (1...65535).contains(database.port) else { throw refuse("database.port", "is not a port: \(database.port)") }
        guard ["disable", "require"].contains(database.tls) else { throw refuse("database.tls", "must be \"disable\" or \"require\", not \"\(database.tls)\"") }
        guard database.connections >= 1 else { throw refuse("database.connections", "must be at least 1") }
        guard token.hmacSecret != nil || token.publicKeyFile != nil else {
            throw refuse("token", "needs hmacSecret (or COFFER_GATEWAY_TOKEN_SECRET) or publicKeyFile (or COFFER_GATEWAY_TOKEN_PUBLIC_KEY)")
        }
        if token.hmacSecret != nil && token.publicKeyFile != nil {
            throw refuse("token", "takes hmacSecret or publicKeyFile, not both")
        }
        if let secret = token.hmacSecret, secret.utf8.count < 32 { throw refuse("token.hmacSecret", "must be at least 32 bytes long") }
        guard limits.requestBytes >= Limits.smallestRequestBytes else {
            throw refuse("limits.requestBytes", "must be at least \(Limits.smallestRequestBytes) (72 MiB: a replica may send one change of 64 MiB)")
        }
        guard limits.waiters >= 0 else { throw refuse("limits.waiters", "must not be negative") }
        guard (0...3600).contains(token.leewaySeconds) else { throw refuse("token.leewaySeconds", "must be 0 to 3600") }
        guard limits.requestsPerSecond > 0, limits.burst >= 1 else { throw refuse("limits", "requestsPerSecond must be above 0 and burst at least 1") }
        guard (1...300).contains(limits.waitSeconds) else { throw refuse("limits.waitSeconds", "must be 1 to 300") }
        guard (1...600).contains(limits.callSeconds) else { throw refuse("limits.callSeconds", "must be 1 to 600") }
        guard (1...120).contains(limits.connectSeconds) else { throw refuse("limits.connectSeconds", "must be 1 to 120") }
    }

    private mutating func read(_ data: Data) throws {
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw GatewayConfigurationError(member: "the file", reason: "is not a JSON object")
            }
            root = object
        } catch let error as GatewayConfigurationError {
            throw error
        } catch {
            throw GatewayConfigurationError(member: "the file", reason: "is not JSON: \(error.localizedDescription)")
        }
        if let unknown = root.keys.sorted().first(where: { !["listen", "database", "token", "limits"].contains($0) }) {
            throw GatewayConfigurationError(member: unknown, reason: "is not a setting (listen, database, token, limits)")
        }
        let reader = MemberReader(root: root)
        try reader.section("listen") { r in
            try r.string("host") { host = $0 }
            try r.int("port") { port = $0 }
        }
        try reader.section("database") { r in
            try r.string("host") { database.host = $0 }
            try r.int("port") { database.port = $0 }
            try r.string("user") { database.user = $0 }
            try r.string("password") { database.password = $0 }
            try r.string("database") { database.database = $0 }
            try r.string("schema") { database.schema = $0 }
            try r.string("role") { database.role = $0 }
            try r.string("tls") { database.tls = $0 }
            try r.int("connections") { database.connections = $0 }
        }
        try reader.section("token") { r in
            try r.string("hmacSecret") { token.hmacSecret = $0 }
            try r.string("publicKeyFile") { token.publicKeyFile = $0 }
            try r.string("issuer") { token.issuer = $0 }
            try r.string("audience") { token.audience = $0 }
            try r.int("leewaySeconds") { token.leewaySeconds = $0 }
        }
        try reader.section("limits") { r in
            try r.int("requestBytes") { limits.requestBytes = $0 }
            try r.double("requestsPerSecond") { limits.requestsPerSecond = $0 }
            try r.double("burst") { limits.burst = $0 }
            try r.int("waitSeconds") { limits.waitSeconds = $0 }
            try r.int("waiters") { limits.waiters = $0 }
            try r.int("callSeconds") { limits.callSeconds = $0 }
            try r.int("connectSeconds") { limits.connectSeconds = $0 }
        }
    }

    /// Reads the members of one JSON object, refusing a member of the wrong type or unknown
    /// to the format (a misspelt limit must not silently keep its default).
    private struct MemberReader {
        let root: [String: Any]
        var path = ""
        var known: Set<String> = []

        init(root: [String: Any]) {
            self.root = root
        }

        func section(_ name: String, _ body: (inout MemberReader) throws -> Void) throws {
            guard let value = root[name] else { return }
            guard let object = value as? [String: Any] else {
                throw GatewayConfigurationError(member: name, reason: "must be a JSON object")
            }
            var reader = MemberReader(root: object)
            reader.path = name + "."
            try body(&reader)
            if let unknown = object.keys.sorted().first(where: { !reader.known.contains($0) }) {
                throw GatewayConfigurationError(member: name + "." + unknown, reason: "is not a setting")
            }
        }

        mutating func string(_ name: String, _ set: (String) -> Void) throws {
            known.insert(name)
            guard let value = root[name] else { return }
            guard let text = value as? String else { throw GatewayConfigurationError(member: path + name, reason: "must be a string") }
            set(text)
        }

        mutating func int(_ name: String, _ set: (Int) -> Void) throws {
            known.insert(name)
            guard let value = root[name] else { return }
            guard let number = value as? NSNumber, !Self.isBoolean(number),
                  let exact = Int(exactly: number.doubleValue) else {
                throw GatewayConfigurationError(member: path + name, reason: "must be a whole number")
            }
            set(exact)
        }

        /// JSON's true and false come back as numbers of the C type `char`.
        static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

        mutating func double(_ name: String, _ set: (Double) -> Void) throws {
            known.insert(name)
            guard let value = root[name] else { return }
            guard let number = value as? NSNumber, !Self.isBoolean(number), number.doubleValue.isFinite else {
                throw GatewayConfigurationError(member: path + name, reason: "must be a number")
            }
            set(number.doubleValue)
        }
    }
}

/// A gateway setting that is missing or wrong, naming it.
///
/// ```swift
/// GatewayConfigurationError(member: "limits.burst", reason: "must be at least 1").description
/// ```
public struct GatewayConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting, as `section.member`, or the file.
    public let member: String
    /// What is wrong with it.
    public let reason: String

    /// Names the setting and what is wrong.
    ///
    /// ```swift
    /// let error = GatewayConfigurationError(member: "database.tls", reason: "must be \"disable\" or \"require\"")
    /// ```
    public init(member: String, reason: String) {
        self.member = member
        self.reason = reason
    }

    /// `<member> <reason>`, one line.
    ///
    /// ```swift
    /// print(error.description)   // "limits.burst must be at least 1"
    /// ```
    public var description: String { "\(member) \(reason)" }
}
