import Foundation

/// A pulled object this replica could not store because a local object holds the same
/// value of a unique property. It is parked, not dropped: the rest of its page was applied,
/// and it is applied when a later pull brings the same object again or
/// `store.retrySyncConflicts()` finds the value free (change or remove the local object
/// first).
///
/// ```swift
/// for conflict in try store.syncConflicts() {
///     print("\(conflict.entity) \(conflict.syncId): \(conflict.property) = \(conflict.value) is taken here")
/// }
/// ```
public struct SyncConflict: Sendable, Equatable {
    /// The entity's stored name.
    ///
    /// ```swift
    /// conflict.entity   // "Person"
    /// ```
    public let entity: String
    /// The sync id of the pulled object.
    ///
    /// ```swift
    /// let remoteId = conflict.syncId
    /// ```
    public let syncId: UUID
    /// The unique property whose value a local object holds.
    ///
    /// ```swift
    /// conflict.property   // "email"
    /// ```
    public let property: String
    /// The value, as JSON text.
    ///
    /// ```swift
    /// conflict.value   // "\"ada@example.com\""
    /// ```
    public let value: String
    /// The pulled change as the server sent it (JSON text with `fields` and `clocks`).
    ///
    /// ```swift
    /// let row = try JSONSerialization.jsonObject(with: Data(conflict.remoteRow.utf8))
    /// ```
    public let remoteRow: String

    /// A conflict with these parts.
    ///
    /// ```swift
    /// let conflict = SyncConflict(entity: "Person", syncId: id, property: "email", value: "\"a@b.c\"", remoteRow: "{}")
    /// ```
    public init(entity: String, syncId: UUID, property: String, value: String, remoteRow: String) {
        self.entity = entity
        self.syncId = syncId
        self.property = property
        self.value = value
        self.remoteRow = remoteRow
    }
}
