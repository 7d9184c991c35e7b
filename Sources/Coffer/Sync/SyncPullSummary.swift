import Foundation

/// What applying one pulled page did (``Store/applyPulledPage(_:entity:stream:)``).
///
/// ```swift
/// let summary = try store.applyPulledPage(page, entity: "Task", stream: stream)
/// print("\(summary.upserted) stored, \(summary.deleted) removed, next from \(summary.cursor)")
/// if summary.more { /* pull the next page now */ }
/// ```
@_spi(CofferSync)
public struct SyncPullSummary: Sendable, Equatable {
    /// Objects the page inserted or changed.
    ///
    /// ```swift
    /// pulledCount += summary.upserted
    /// ```
    public var upserted: Int
    /// Objects the page removed (deletes of objects this replica did not hold count nothing).
    ///
    /// ```swift
    /// pulledCount += summary.deleted
    /// ```
    public var deleted: Int
    /// Upserts that changed no stored value (an echo of this replica's own push, a resend).
    ///
    /// ```swift
    /// let echoes = summary.unchanged
    /// ```
    public var unchanged: Int
    /// Upserts skipped because this replica removed the object and the server has not
    /// acknowledged that delete yet (deletes win).
    ///
    /// ```swift
    /// if summary.skipped > 0 { log("\(summary.skipped) changes of locally removed objects ignored") }
    /// ```
    public var skipped: Int
    /// Pulled field values not applied because this replica changed the field later and
    /// has not pushed (or the server has not acknowledged) that change.
    ///
    /// ```swift
    /// let kept = summary.fieldsKeptLocal
    /// ```
    public var fieldsKeptLocal: Int
    /// Pulled objects parked as sync conflicts (a unique value a local object holds); see
    /// `store.syncConflicts()`.
    ///
    /// ```swift
    /// if summary.conflicts > 0 { showConflicts(try store.syncConflicts()) }
    /// ```
    public var conflicts: Int
    /// Rows the server left out as too large to send (its `"oversized"` markers): the
    /// replica keeps what it holds of these objects, and the cursor moves past them.
    ///
    /// ```swift
    /// for row in summary.oversized { log("\(row.syncId) not pulled: \(row.bytes) bytes") }
    /// ```
    public var oversized: [Oversized] = []
    /// The cursor stored for the next pull of this entity and stream.
    ///
    /// ```swift
    /// let next = try await transport.pull(entity: "Task", cursor: summary.cursor, limit: 1000)
    /// ```
    public var cursor: String
    /// Whether the server has more changes below its horizon: pull again at once.
    ///
    /// ```swift
    /// while summary.more { ... }
    /// ```
    public var more: Bool

    /// A row the server left out of a page as too large to send.
    ///
    /// ```swift
    /// let row = SyncPullSummary.Oversized(syncId: id, bytes: 70_000_000)
    /// ```
    public struct Oversized: Sendable, Equatable {
        /// The object's sync id.
        ///
        /// ```swift
        /// let id = row.syncId
        /// ```
        public let syncId: UUID
        /// The row's size as the server counted it, in bytes.
        ///
        /// ```swift
        /// print(row.bytes)   // 70000000
        /// ```
        public let bytes: Int

        /// A row of `bytes` bytes left out.
        ///
        /// ```swift
        /// let row = SyncPullSummary.Oversized(syncId: id, bytes: 70_000_000)
        /// ```
        public init(syncId: UUID, bytes: Int) {
            self.syncId = syncId
            self.bytes = bytes
        }
    }

    /// A summary with the given counts.
    ///
    /// ```swift
    /// let empty = SyncPullSummary(cursor: "0", more: false)
    /// ```
    public init(upserted: Int = 0, deleted: Int = 0, unchanged: Int = 0, skipped: Int = 0, fieldsKeptLocal: Int = 0,
                conflicts: Int = 0, cursor: String, more: Bool) {
        self.upserted = upserted
        self.deleted = deleted
        self.unchanged = unchanged
        self.skipped = skipped
        self.fieldsKeptLocal = fieldsKeptLocal
        self.conflicts = conflicts
        self.cursor = cursor
        self.more = more
    }
}
