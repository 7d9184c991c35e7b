import Foundation

/// What the server answered to a push: the highest mid of the client it has now applied,
/// the transaction that applied it, and the changes it rejected (recorded on the server in
/// the `rejections` table; the queue goes on past them).
///
/// ```swift
/// let reply = try await transport.push(client: clientId, batch: batch)
/// for rejection in reply.rejected { print("change \(rejection.mid) refused: \(rejection.reason)") }
/// ```
public struct SyncPushReply: Sendable, Equatable {
    /// The highest mid of this client the server has applied or rejected.
    ///
    /// ```swift
    /// try store.acknowledgeSyncChanges(through: min(reply.lastMid, batch.lastMid))
    /// ```
    public let lastMid: UInt64
    /// The server transaction id (xid8, as text) that applied the batch.
    ///
    /// ```swift
    /// print(reply.txid)   // "7412"
    /// ```
    public let txid: String
    /// The changes the server refused, with why.
    ///
    /// ```swift
    /// reply.rejected.map(\.mid)   // [12]
    /// ```
    public let rejected: [SyncRejection]

    /// A reply as a transport decoded it.
    ///
    /// ```swift
    /// let reply = SyncPushReply(lastMid: 12, txid: "7412", rejected: [])
    /// ```
    public init(lastMid: UInt64, txid: String, rejected: [SyncRejection]) {
        self.lastMid = lastMid
        self.txid = txid
        self.rejected = rejected
    }

    /// Decodes the JSON text `coffer_push` returns:
    /// `{"lastMid": 12, "txid": "7412", "rejected": [{"mid": 12, "reason": "..."}]}`.
    ///
    /// ```swift
    /// let reply = try SyncPushReply(json: #"{"lastMid": 1, "txid": "9", "rejected": []}"#)
    /// ```
    ///
    /// - Throws: ``SyncTransportError/malformedReply(operation:detail:)`` when the text is not
    ///   such an object.
    public init(json: String) throws {
        let wire: WireReply
        do {
            wire = try JSONDecoder().decode(WireReply.self, from: Data(json.utf8))
        } catch {
            throw SyncTransportError.malformedReply(
                operation: "push", detail: "expected {lastMid, txid, rejected: [{mid, reason}]}, got \(json.prefix(200))")
        }
        self.init(lastMid: wire.lastMid, txid: wire.txid,
                  rejected: wire.rejected.map { SyncRejection(mid: $0.mid, reason: $0.reason) })
    }

    private struct WireReply: Decodable {
        struct Rejected: Decodable {
            let mid: UInt64
            let reason: String
        }

        let lastMid: UInt64
        let txid: String
        let rejected: [Rejected]
    }
}

/// A change the server refused: its mid and the server's reason (a value it cannot store, a
/// constraint, an object deleted on the server, ...).
///
/// ```swift
/// SyncRejection(mid: 12, reason: "deleted: the object was deleted, a change does not bring it back")
/// ```
public struct SyncRejection: Sendable, Equatable, Hashable {
    /// The mutation id of the refused change.
    ///
    /// ```swift
    /// rejection.mid   // 12
    /// ```
    public let mid: UInt64
    /// Why the server refused it.
    ///
    /// ```swift
    /// rejection.reason   // "field \"title\": text cannot hold U+0000"
    /// ```
    public let reason: String

    /// A rejection of `mid` for `reason`.
    ///
    /// ```swift
    /// let rejection = SyncRejection(mid: 3, reason: "missing")
    /// ```
    public init(mid: UInt64, reason: String) {
        self.mid = mid
        self.reason = reason
    }
}
