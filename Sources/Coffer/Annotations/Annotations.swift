// The annotations are marker macros: they expand to nothing, the compiler checks their
// spelling and arguments, and the CofferPlugin generator reads them from the source.

/// Keeps an index on the property so that queries and upserts by it are lookups, not scans.
///
/// ```swift
/// @Index var lastName: String
/// ```
@attached(peer)
public macro Index() = #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// Makes the property's values unique across all objects of the entity (nil never
/// collides). A unique property is also indexed.
///
/// ```swift
/// @Unique var email: String?
/// @Unique(onConflict: .update) var externalId: String
/// ```
@attached(peer)
public macro Unique(onConflict: ConflictStrategy = .fail) =
    #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// Keeps a full-text index of the property's words, searched with `matches(_:)`:
/// `.simple` (Unicode words, case- and diacritic-folded) or `.porter` (the same, then
/// English stemming). Several properties of an entity may have one.
///
/// ```swift
/// @FullText(.porter) var body: String
/// @FullText var title: String?        // .simple
/// ```
@attached(peer)
public macro FullText(_ tokenizer: TextTokenizer = .simple) = #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// Excludes the property from storage. It needs a default value, which loaded objects get.
///
/// ```swift
/// @Transient var scratch = 0
/// ```
@attached(peer)
public macro Transient() = #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// Stores the property (or entity) under another name than its Swift name.
///
/// ```swift
/// @Name("family_name") var lastName: String
/// ```
@attached(peer)
public macro Name(_ storedName: String) = #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// Stores the entity under `storedName` instead of its simple type name.
///
/// Two entity types with the same simple name (`Shop.Item`, `Inventory.Item`) would share
/// one stored entity: using both with one store without saying so throws
/// ``CofferError/misuse(_:)`` (`.sharedStoredName`) naming both types. Give one of them its
/// own name, or declare a deliberate second version of a stored entity (migration code,
/// an app extension built from another version) by naming it explicitly:
///
/// ```swift
/// enum Inventory {
///     @StoredAs("InventoryItem")
///     struct Item: Entity { var id: Id = 0; var sku: String }
/// }
///
/// enum V2 {
///     @StoredAs("Person")          // the same stored entity as `Person`, on purpose
///     struct Person: Entity { var id: Id = 0; var name: String; var nickname: String? }
/// }
/// ```
@attached(extension)
public macro StoredAs(_ storedName: String) = #externalMacro(module: "CofferMacros", type: "EntityMarkerMacro")

/// Opts an entity into sync: every write of it records, in the same transaction, what
/// changed for a pusher to send (see "Sync" in the README). Entities without it pay nothing.
///
/// A synced object gets a global id (a UUIDv7 `syncId`) at its first put; its local `Id`
/// stays local. Once a build declaring `@Sync` has written to an entity, the store keeps it
/// synced for every writer, imports and builds without the annotation included, so no change
/// escapes the outbox.
///
/// ```swift
/// @Sync
/// struct Task: Entity {
///     var id: Id = 0
///     var title: String
///     var done = false
/// }
///
/// let id = try store.box(for: Task.self).put(Task(title: "Write"))
/// let global = try store.box(for: Task.self).syncId(of: id)   // a UUIDv7
/// ```
@attached(extension)
public macro Sync() = #externalMacro(module: "CofferMacros", type: "EntityMarkerMacro")

/// Declares the name a property was stored under before it was renamed in Swift, so that
/// stored values carry over.
///
/// ```swift
/// @Renamed(from: "surname") var lastName: String
/// ```
@attached(peer)
public macro Renamed(from oldName: String) =
    #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// A `Date` property set by `put` when the object is first stored, and kept afterwards.
///
/// ```swift
/// @CreatedAt var created: Date = .distantPast
/// ```
@attached(peer)
public macro CreatedAt() = #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// A `Date` property set by every `put`.
///
/// ```swift
/// @UpdatedAt var modified: Date = .distantPast
/// ```
@attached(peer)
public macro UpdatedAt() = #externalMacro(module: "CofferMacros", type: "MarkerMacro")

/// Declares a `ToMany` as the read side of another entity's `ToOne`: the objects whose link
/// points here.
///
/// ```swift
/// @Backlink(\Order.customer) var orders: ToMany<Order> = []
/// ```
@attached(peer)
public macro Backlink<Root, Value>(_ link: KeyPath<Root, Value>) =
    #externalMacro(module: "CofferMacros", type: "MarkerMacro")
