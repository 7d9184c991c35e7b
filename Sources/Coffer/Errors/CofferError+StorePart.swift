extension CofferError {
    /// The part of a store that ``CofferError/damagedStore(part:reason:)`` found damaged:
    /// structure that belongs to no single record.
    ///
    /// ```swift
    /// catch CofferError.damagedStore(.index(let entity, let property), _) {
    ///     try rebuildIndex(entity, property)   // drop the index; the next write builds it again
    /// }
    /// ```
    public enum StorePart: Sendable, Hashable, CustomStringConvertible {
        /// The data file's own structure (meta pages, free list, page tree), at `path`.
        ///
        /// ```swift
        /// catch CofferError.damagedStore(.file(let path), _) { restoreBackup(into: path) }
        /// ```
        case file(path: String)

        /// The schema catalog: what the store knows about its entities, properties and indexes.
        ///
        /// ```swift
        /// catch CofferError.damagedStore(.catalog, let reason) { print(reason) }
        /// ```
        case catalog

        /// An entity's table (its keys or its id sequence), not a single record.
        ///
        /// ```swift
        /// catch CofferError.damagedStore(.table(let entity), _) { print("\(entity)'s table is damaged") }
        /// ```
        case table(entity: String)

        /// A value index or full-text index of `entity.property`; dropping it with
        /// `Box.dropIndex(on:)` (after removing the annotation) or rebuilding repairs it.
        ///
        /// ```swift
        /// catch CofferError.damagedStore(.index(let entity, let property), _) { ... }
        /// ```
        case index(entity: String, property: String)

        /// The tables of a many-to-many relation that `entity` owns (declares as `ToMany`).
        ///
        /// ```swift
        /// catch CofferError.damagedStore(.relation(let owner), _) { print("a relation of \(owner) is damaged") }
        /// ```
        case relation(entity: String)

        /// The sync outbox, its pending map, the sync counters or a synced entity's identity
        /// tables (sync id <-> local id).
        ///
        /// ```swift
        /// catch CofferError.damagedStore(.sync, let reason) { print("sync state is damaged: \(reason)") }
        /// ```
        case sync

        /// `the schema catalog`, `the index on Person.email`, ...
        ///
        /// ```swift
        /// print(CofferError.StorePart.index(entity: "Person", property: "email"))
        /// ```
        public var description: String {
            switch self {
            case .file(let path): return "the data file of \(path)"
            case .catalog: return "the schema catalog"
            case .table(let entity): return "the table of \(entity)"
            case .index(let entity, let property): return "the index on \(entity).\(property)"
            case .relation(let entity): return "a relation of \(entity)"
            case .sync: return "the sync outbox and identity tables"
            }
        }
    }
}
