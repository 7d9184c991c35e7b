extension CofferError {
    /// An API called where or how it cannot work; each case says which call and why. The
    /// fix is in the calling code, never in the data.
    ///
    /// ```swift
    /// do {
    ///     try store.read { try people.put(&person) }
    /// } catch CofferError.misuse(.writeInsideRead(let path)) {
    ///     print("make store.write { } the outer transaction of \(path)")
    /// }
    /// ```
    public enum Misuse: Sendable, Hashable, CustomStringConvertible {
        /// A write (a put, remove, upsert, ...) inside `store.read { }`.
        ///
        /// ```swift
        /// catch CofferError.misuse(.writeInsideRead(let path)) { ... }
        /// ```
        case writeInsideRead(path: String)

        /// `store.backup(to:)` inside `store.write { }`: the write's changes are not committed.
        ///
        /// ```swift
        /// catch CofferError.misuse(.backupInsideWrite(let path)) { ... }
        /// ```
        case backupInsideWrite(path: String)

        /// `store.verify()` inside `store.write { }`: the write's changes are not committed.
        ///
        /// ```swift
        /// catch CofferError.misuse(.verifyInsideWrite(let path)) { ... }
        /// ```
        case verifyInsideWrite(path: String)

        /// `store.close()` inside one of the store's own transactions (it would wait forever).
        ///
        /// ```swift
        /// catch CofferError.misuse(.closeInsideTransaction(let path)) { ... }
        /// ```
        case closeInsideTransaction(path: String)

        /// An observed query (`QueryController`, `results()`) started or read inside a
        /// transaction of the store: it reads its own snapshots.
        ///
        /// ```swift
        /// catch CofferError.misuse(.observeInsideTransaction(let path)) { ... }
        /// ```
        case observeInsideTransaction(path: String)

        /// A second `Store` for a directory this process has open already (perhaps under
        /// another path): share the first instance.
        ///
        /// ```swift
        /// catch CofferError.misuse(.storeAlreadyOpen(let path)) { ... }
        /// ```
        case storeAlreadyOpen(path: String)

        /// Two entity types with the same stored name (`Shop.Item`, `Inventory.Item`) used
        /// with one store, neither saying so with `@StoredAs`.
        ///
        /// ```swift
        /// catch CofferError.misuse(.sharedStoredName(let storedName, let type, let other, _)) { ... }
        /// ```
        case sharedStoredName(storedName: String, type: String, otherType: String, path: String)

        /// `Box.modifyEach` changed an object's id from `from` to `to`.
        ///
        /// ```swift
        /// catch CofferError.misuse(.idChangedInModify(let entity, let from, let to)) { ... }
        /// ```
        case idChangedInModify(entity: String, from: Id, to: Id)

        /// `Box.dropIndex(on:)` of a property this build still declares `@Index`, `@Unique`
        /// or `@FullText` on.
        ///
        /// ```swift
        /// catch CofferError.misuse(.indexStillDeclared(let entity, let property)) { ... }
        /// ```
        case indexStillDeclared(entity: String, property: String)

        /// `ToMany.remove(at:)` with a position outside the collection of `count` elements
        /// of `entity`.
        ///
        /// ```swift
        /// catch CofferError.misuse(.positionOutOfRange(let entity, let position, let count)) { ... }
        /// ```
        case positionOutOfRange(entity: String, position: Int, count: Int)

        /// `Store.copySchema(of:from:)` into a store that has the entity already.
        ///
        /// ```swift
        /// catch CofferError.misuse(.entityAlreadyStored(let entity, _)) { try store.importObjects(entity: entity, jsonLines: data) }
        /// ```
        case entityAlreadyStored(entity: String, path: String)

        /// `Store.backup(to:)` into a directory that holds a store already.
        ///
        /// ```swift
        /// catch CofferError.misuse(.destinationHoldsStore(let path)) { ... }
        /// ```
        case destinationHoldsStore(path: String)

        /// Generated code applied a to-many relation at a property position that is not one
        /// (the generated file does not match the entity).
        ///
        /// ```swift
        /// catch CofferError.misuse(.notARelation(let entity, let position)) { ... }
        /// ```
        case notARelation(entity: String, position: Int)

        /// A sync call named an entity that is not synced (declare it with `@Sync`).
        ///
        /// ```swift
        /// catch CofferError.misuse(.notSynced(let entity)) { print("\(entity) is not @Sync") }
        /// ```
        case notSynced(entity: String)

        /// A pusher acknowledged mutation ids it never took from the outbox.
        ///
        /// ```swift
        /// catch CofferError.misuse(.acknowledgedUntakenSyncChange(let mid, let floor)) { ... }
        /// ```
        case acknowledgedUntakenSyncChange(mid: UInt64, sendFloor: UInt64)

        /// Outbox entries were taken inside an open transaction: the send floor that keeps
        /// later changes out of entries on their way would rise only when that transaction
        /// commits, and not at all if it rolled back after the entries were sent.
        ///
        /// ```swift
        /// catch CofferError.misuse(.syncBatchInsideTransaction(let path)) { ... }
        /// ```
        case syncBatchInsideTransaction(path: String)

        /// What was called where, and what to do instead.
        ///
        /// ```swift
        /// print(CofferError.Misuse.writeInsideRead(path: store.path))
        /// ```
        public var description: String {
            switch self {
            case .writeInsideRead(let path):
                return "cannot write inside store.read { } of the store at \(path); make store.write { } the outer transaction"
            case .backupInsideWrite(let path):
                return "cannot back up the store at \(path) inside store.write { }: its changes are not committed; back up after the write returns"
            case .verifyInsideWrite(let path):
                return "cannot verify the store at \(path) inside store.write { }: its changes are not committed; verify after the write returns"
            case .closeInsideTransaction(let path):
                return "cannot close the store at \(path) inside one of its own transactions; close it after store.read { } or store.write { } returns"
            case .observeInsideTransaction(let path):
                return "cannot read the changes of an observed query inside a transaction of the store at \(path)"
            case .storeAlreadyOpen(let path):
                return "the store at \(path) is already open in this process (perhaps under another path); share that Store instance"
            case let .sharedStoredName(storedName, type, otherType, path):
                return "\(type) and \(otherType) are both stored as \(storedName) in \(path): give one of them its own name with @StoredAs(\"...\"), or write @StoredAs(\"\(storedName)\") on the one that is meant to share it"
            case let .idChangedInModify(entity, from, to):
                return "\(entity): modifyEach changed the id of object \(from) to \(to); put a copy to store it under another id"
            case let .indexStillDeclared(entity, property):
                return "\(entity).\(property) is declared with @Index, @Unique or @FullText in this build; remove the annotation before dropping its index"
            case let .positionOutOfRange(entity, position, count):
                return "ToMany<\(entity)>.remove(at: \(position)): the collection has \(count) elements"
            case let .entityAlreadyStored(entity, path):
                return "the store at \(path) already has \(entity); import into it directly"
            case .destinationHoldsStore(let path):
                return "\(path) already holds a store; back up into an empty directory"
            case let .notARelation(entity, position):
                return "\(entity) has no relation tables for property #\(position)"
            case .notSynced(let entity):
                return "\(entity) is not synced; declare it with @Sync"
            case let .acknowledgedUntakenSyncChange(mid, sendFloor):
                return "cannot acknowledge the outbox through mutation \(mid): pushers have taken entries through \(sendFloor) only"
            case .syncBatchInsideTransaction(let path):
                return "cannot take outbox entries of \(path) inside store.read or store.write: take them in their own transaction"
            }
        }
    }
}
