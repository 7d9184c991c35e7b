import Foundation

/// Why a transport call failed, saying what failed. ``isTransient`` tells whether trying
/// again later may succeed (the network, a server restarting, a timeout): ``SyncReplica``
/// retries every failure with backoff and reports it in its status, so none of these stops
/// a running replica.
///
/// ```swift
/// do { try await replica.syncNow() }
/// catch let error as SyncTransportError where error.isTransient { showOffline() }
/// ```
public enum SyncTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached, or the connection broke (refused, reset, closed,
    /// TLS failure). `detail` is the client library's description.
    ///
    /// ```swift
    /// SyncTransportError.unreachable(operation: "push", detail: "connection refused")
    /// ```
    case unreachable(operation: String, detail: String)
    /// No answer within the configured time; the connection was closed (a push may have been
    /// applied: resending it is safe).
    ///
    /// ```swift
    /// SyncTransportError.timedOut(operation: "pull Task", after: .seconds(30))
    /// ```
    case timedOut(operation: String, after: Duration)
    /// The server's schema lacks an entity or field the replica sends or asks for (SQLSTATE
    /// CF001): install the newer model (`SyncSchema.install`). Nothing was applied.
    ///
    /// ```swift
    /// SyncTransportError.schemaBehind(operation: "push", message: "entity \"Task\" is not installed in schema coffer")
    /// ```
    case schemaBehind(operation: String, message: String)
    /// The server refused the statement (SQLSTATE and message as the server sent them): a
    /// missing schema, missing privileges, a server going down (SQLSTATE class 57), ...
    ///
    /// ```swift
    /// SyncTransportError.server(operation: "pull Task", sqlState: "42883", message: "function coffer.coffer_pull does not exist")
    /// ```
    case server(operation: String, sqlState: String, message: String)
    /// The server's answer is not what the protocol says it is.
    ///
    /// ```swift
    /// SyncTransportError.malformedReply(operation: "push", detail: "expected lastMid")
    /// ```
    case malformedReply(operation: String, detail: String)
    /// The transport was closed.
    ///
    /// ```swift
    /// SyncTransportError.closed
    /// ```
    case closed

    /// Whether the same call may succeed later without anyone changing anything: network
    /// failures, timeouts, and server states that pass (connection and resource classes
    /// 08, 53, 57; serialization failures and deadlocks, class 40).
    ///
    /// ```swift
    /// SyncTransportError.unreachable(operation: "push", detail: "reset").isTransient   // true
    /// ```
    public var isTransient: Bool {
        switch self {
        case .unreachable, .timedOut: return true
        case .server(_, let state, _): return ["08", "40", "53", "55", "57", "58"].contains(String(state.prefix(2)))
        case .schemaBehind, .malformedReply, .closed: return false
        }
    }

    /// Whether the connection the call ran on is still good: the server answered (it refused
    /// the statement) and the failure is not one of a server going away.
    var keepsConnection: Bool {
        switch self {
        case .schemaBehind: return true
        // postgres-nio closes the connection on an error of class 28.
        case .server(_, let state, _): return !isTransient && !state.hasPrefix("28")
        case .unreachable, .timedOut, .malformedReply, .closed: return false
        }
    }

    /// What failed and why, in one line.
    ///
    /// ```swift
    /// print(error.description)   // "push: server unreachable: connection refused"
    /// ```
    public var description: String {
        switch self {
        case .unreachable(let operation, let detail):
            return "\(operation): server unreachable: \(detail)"
        case .timedOut(let operation, let after):
            return "\(operation): no answer within \(after); the connection was closed"
        case .schemaBehind(let operation, let message):
            return "\(operation): the server's sync schema is older than this model (install it again): \(message)"
        case .server(let operation, let sqlState, let message):
            return "\(operation): the server refused it (SQLSTATE \(sqlState)): \(message)"
        case .malformedReply(let operation, let detail):
            return "\(operation): unexpected answer from the server: \(detail)"
        case .closed:
            return "the sync transport is closed"
        }
    }
}
