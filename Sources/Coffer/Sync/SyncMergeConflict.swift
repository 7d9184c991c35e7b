import Foundation

/// A pulled change that met local changes the server has not acknowledged yet, as an app's
/// merge for the entity sees it (see ``Store/setSyncMerge(for:_:)``).
///
/// ```swift
/// store.setSyncMerge(for: Note.self) { conflict in
///     var merged = conflict.local
///     merged.tags = Array(Set(conflict.local.tags).union(conflict.remote.tags)).sorted()
///     return merged
/// }
/// ```
public struct SyncMergeConflict<E: Entity>: Sendable {
    /// The object with this replica's values of the colliding properties and the pulled
    /// values of every other field the change sets (as if the local changes won).
    ///
    /// ```swift
    /// let mine = conflict.local.tags   // ["draft", "mine"]
    /// ```
    public let local: E
    /// The object with the pulled values of every field the change sets, the colliding ones
    /// too (as if the pulled change won). Relations are read as stored here.
    ///
    /// ```swift
    /// let theirs = conflict.remote.tags   // ["draft", "theirs"]
    /// ```
    public let remote: E
    /// The stored names of the properties that both the pulled change and an unacknowledged
    /// local change set, in the entity's order.
    ///
    /// ```swift
    /// if conflict.properties.contains("tags") { merged.tags = union }
    /// ```
    public let properties: [String]
}
