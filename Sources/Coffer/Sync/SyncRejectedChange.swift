import Foundation

/// A local change the server refused (a unique value taken there, a value it cannot store, a
/// constraint, an object deleted there), kept so that the app loses nothing: the replica
/// acknowledged it and took the server's state of the object (the refused values were
/// replaced, a refused creation was removed), and this record holds what was refused.
/// `store.syncRejections()` lists them; `store.clearSyncRejections(through:)` drops those the
/// app has dealt with.
///
/// ```swift
/// for rejection in try store.syncRejections() where rejection.kind == .creation {
///     print("\(rejection.entity) \(rejection.syncId) was refused (\(rejection.reason)): \(rejection.values)")
/// }
/// ```
public struct SyncRejectedChange: Sendable, Equatable {
    /// What the refused change did.
    ///
    /// ```swift
    /// if rejection.kind == .creation { recreate(from: rejection.values) }
    /// ```
    public enum Kind: String, Sendable, Equatable, Codable {
        /// It created the object (the server has no such object: the replica removed it).
        /// ```swift
        /// SyncRejectedChange.Kind.creation
        /// ```
        case creation
        /// It changed fields of an object.
        /// ```swift
        /// SyncRejectedChange.Kind.update
        /// ```
        case update
        /// It removed the object.
        /// ```swift
        /// SyncRejectedChange.Kind.deletion
        /// ```
        case deletion
    }

    /// The mutation id of the refused change (ascending with the order of local changes).
    ///
    /// ```swift
    /// try store.clearSyncRejections(through: rejection.mid)
    /// ```
    public let mid: UInt64
    /// The entity's stored name.
    ///
    /// ```swift
    /// rejection.entity   // "Person"
    /// ```
    public let entity: String
    /// The object's sync id.
    ///
    /// ```swift
    /// let localId = try people.id(forSyncId: rejection.syncId)   // nil once a refused creation was removed
    /// ```
    public let syncId: UUID
    /// Creation, update or deletion.
    ///
    /// ```swift
    /// rejection.kind   // .update
    /// ```
    public let kind: Kind
    /// The refused field values as a JSON object in the export format, by stored property
    /// name (`{}` for a deletion).
    ///
    /// ```swift
    /// let refused = try JSONSerialization.jsonObject(with: Data(rejection.values.utf8)) as? [String: Any]
    /// ```
    public let values: String
    /// The server's reason.
    ///
    /// ```swift
    /// rejection.reason   // "unique: Key (email)=(ada@example.com) already exists."
    /// ```
    public let reason: String
    /// When the replica recorded it.
    ///
    /// ```swift
    /// rejection.rejectedAt   // 2026-11-26 07:02:11 +0000
    /// ```
    public let rejectedAt: Date

    /// A rejection with these parts.
    ///
    /// ```swift
    /// let rejection = SyncRejectedChange(mid: 12, entity: "Person", syncId: id, kind: .creation,
    ///                                    values: #"{"email": "a@b.c"}"#, reason: "unique", rejectedAt: Date())
    /// ```
    public init(mid: UInt64, entity: String, syncId: UUID, kind: Kind, values: String, reason: String, rejectedAt: Date) {
        self.mid = mid
        self.entity = entity
        self.syncId = syncId
        self.kind = kind
        self.values = values
        self.reason = reason
        self.rejectedAt = rejectedAt
    }
}
