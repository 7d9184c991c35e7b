import Foundation

/// One outbox entry as a pusher sends it: which object (entity, sync id), what happened, and
/// the changed fields with their values read from the current record (the latest state,
/// whatever the entry's age).
///
/// ```swift
/// let batch = try store.takeSyncChanges(limit: 100)
/// for change in batch {
///     print(change.mid, change.entity, change.syncId, change.operation, change.fields.map(\.name))
/// }
/// try store.acknowledgeSyncChanges(through: batch.last!.mid)
/// ```
@_spi(CofferSync)
public struct SyncChange: Sendable, Equatable {
    /// What happened to the object.
    ///
    /// ```swift
    /// if change.operation == .delete { ... }
    /// ```
    public enum Operation: String, Sendable, Equatable {
        /// Created or changed: `fields` name what changed since the last entry taken.
        /// ```swift
        /// SyncChange.Operation.upsert
        /// ```
        case upsert
        /// Removed (no fields).
        /// ```swift
        /// SyncChange.Operation.delete
        /// ```
        case delete
    }

    /// The mutation id: ascending, never reused; the server skips mids it has applied.
    ///
    /// ```swift
    /// try store.acknowledgeSyncChanges(through: batch.last!.mid)
    /// ```
    public let mid: UInt64
    /// The entity's stored name.
    ///
    /// ```swift
    /// let table = "coffer.\(change.entity)"   // "coffer.Task"
    /// ```
    public let entity: String
    /// The object's global id.
    ///
    /// ```swift
    /// let key = change.syncId.uuidString.lowercased()
    /// ```
    public let syncId: UUID
    /// Upsert or delete.
    ///
    /// ```swift
    /// let op = change.operation.rawValue   // "upsert" or "delete", as the wire format spells them
    /// ```
    public let operation: Operation
    /// Whether the entry includes the object's creation (the server has never seen it).
    ///
    /// ```swift
    /// if change.isCreation { insertRow(change) } else { patchRow(change) }
    /// ```
    public let isCreation: Bool
    /// The hybrid clock value of the entry's latest change.
    ///
    /// ```swift
    /// let hlc = String(change.clock)   // sent as text: jsonb numbers are doubles
    /// ```
    public let clock: UInt64
    /// The changed fields, in stored-id order.
    ///
    /// ```swift
    /// let names = change.fields.map(\.name)
    /// ```
    public let fields: [SyncFieldValue]
    /// Stored field ids the catalog does not list (written by a build this one does not know
    /// of): carried in the entry, reported here, never dropped silently.
    ///
    /// ```swift
    /// if !change.unknownFieldIds.isEmpty { log("\(change.mid): fields \(change.unknownFieldIds) unknown to this build") }
    /// ```
    public let unknownFieldIds: [UInt16]
    /// False when the object is no longer stored here (removed after the change; its delete
    /// follows in a later entry): `fields` then hold no values.
    ///
    /// ```swift
    /// guard change.objectExists || change.operation == .delete else { continue }
    /// ```
    public let objectExists: Bool
}

/// One changed field of a ``SyncChange``.
///
/// ```swift
/// for field in change.fields { print(field.name, field.type, field.json ?? "absent") }
/// ```
@_spi(CofferSync)
public struct SyncFieldValue: Sendable, Equatable {
    /// The stored property name (`address.city` for an embedded leaf).
    ///
    /// ```swift
    /// let column = field.name   // "title"
    /// ```
    public let name: String
    /// The stable stored id of the property.
    ///
    /// ```swift
    /// let id = field.storedId   // survives renames
    /// ```
    public let storedId: UInt16
    /// The stored value type.
    ///
    /// ```swift
    /// if field.type == .uint64 { /* numeric(20,0) */ }
    /// ```
    public let type: PropertyType
    /// The hybrid clock value of the field's latest change.
    ///
    /// ```swift
    /// clocks[field.name] = String(field.clock)
    /// ```
    public let clock: UInt64
    /// The value as JSON text in the sync server's wire format (the README's type mapping:
    /// the export format of `store.dump`, except numbers the server's columns could not take
    /// as written, `Date` as seconds and `[UInt8]` as base64); `nil` when the record holds
    /// no value (a nil optional) or the object is gone. A `ToOne` link is its target's sync id
    /// as a JSON string, or `null` when the target has none (not synced).
    ///
    /// ```swift
    /// values[field.name] = field.json ?? "null"
    /// ```
    public let json: String?
    /// Whether the property is retired (declared by no current build; its value is still
    /// stored and carried).
    ///
    /// ```swift
    /// if field.isRetired { continue }   // or send it: the server keeps the column
    /// ```
    public let isRetired: Bool
}
