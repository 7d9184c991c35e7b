import Foundation

/// An object the server holds but could not send, its row being too large for a page (a
/// value written by plain SQL, say a `text` or `bytea` of hundreds of MB), as
/// ``SyncStatus/oversizedRows`` lists it. The pull goes on past it: the replica keeps what it
/// had of the object (or does not have it), and gets it again once a write makes the row
/// small enough.
///
/// ```swift
/// for row in status.oversizedRows { log("\(row.entity) \(row.syncId): \(row.bytes) bytes, not pulled") }
/// ```
public struct SyncOversizedRow: Sendable, Equatable {
    /// The entity's stored name.
    ///
    /// ```swift
    /// row.entity   // "Attachment"
    /// ```
    public let entity: String
    /// The object's sync id (its row's `sync_id` on the server).
    ///
    /// ```swift
    /// let id = row.syncId
    /// ```
    public let syncId: UUID
    /// The row's size as the server counted it (above the largest row it sends, 64 MiB).
    ///
    /// ```swift
    /// row.bytes   // 300000160
    /// ```
    public let bytes: Int
    /// When the replica met it.
    ///
    /// ```swift
    /// row.seenAt   // 2026-11-26 12:40:02 +0000
    /// ```
    public let seenAt: Date

    /// A row of `entity` left out of a pull.
    ///
    /// ```swift
    /// let row = SyncOversizedRow(entity: "Attachment", syncId: id, bytes: 300_000_160, seenAt: Date())
    /// ```
    public init(entity: String, syncId: UUID, bytes: Int, seenAt: Date) {
        self.entity = entity
        self.syncId = syncId
        self.bytes = bytes
        self.seenAt = seenAt
    }
}
