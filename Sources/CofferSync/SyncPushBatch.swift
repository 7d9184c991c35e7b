import Foundation

/// A batch of outbox changes in the wire format `coffer_push` takes: a JSON array of
/// `{"mid", "entity", "id", "op": "upsert" | "delete", "create", "fields", "clocks", "hlc"}`
/// objects, mids ascending, hybrid clocks as decimal text (JSON numbers are doubles).
///
/// ```swift
/// let batch = SyncPushBatch(json: #"[{"mid": 1, "entity": "Task", "id": "0190…", "op": "delete", "hlc": "112233"}]"#,
///                           count: 1, lastMid: 1)
/// let reply = try await transport.push(client: clientId, batch: batch)
/// ```
public struct SyncPushBatch: Sendable, Equatable {
    /// The JSON array, as text.
    ///
    /// ```swift
    /// print(batch.json)   // [{"mid":3,"entity":"Task",...}]
    /// ```
    public let json: String
    /// How many changes the array holds.
    ///
    /// ```swift
    /// pushed += batch.count
    /// ```
    public let count: Int
    /// The highest mid the batch covers (changes left out of the array, such as an update of
    /// an object removed since, are covered too: acknowledging through it is right).
    ///
    /// ```swift
    /// try store.acknowledgeSyncChanges(through: batch.lastMid)
    /// ```
    public let lastMid: UInt64
    /// Changes the pusher refused before sending (their values hold U+0000, which the server
    /// cannot store): recorded as rejections when the batch is acknowledged.
    var refusedLocally: [SyncRejection] = []
    /// The highest mid the array holds (0 when it holds none): the server's answer must
    /// reach it.
    var lastSentMid: UInt64 = 0

    /// A batch of `count` changes through `lastMid`, already encoded.
    ///
    /// ```swift
    /// let empty = SyncPushBatch(json: "[]", count: 0, lastMid: 7)
    /// ```
    public init(json: String, count: Int, lastMid: UInt64) {
        self.json = json
        self.count = count
        self.lastMid = lastMid
        lastSentMid = count > 0 ? lastMid : 0
    }
}
