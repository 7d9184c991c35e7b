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
