/// The stored shape of an entity: its name and properties, as the generator read them from
/// the struct declaration.
///
/// The store compares it with the schema catalog kept in the database file, so that old
/// records stay readable when properties are added, removed or renamed.
///
/// ```swift
/// for property in Person._cofferSchema.properties {
///     print(property.name, property.type)
/// }
/// ```
public struct EntitySchema: Sendable {
    /// The Swift type name, e.g. `"Person"`.
    ///
    /// ```swift
    /// Person._cofferSchema.name   // "Person"
    /// ```
    public let name: String

    /// The name the entity is stored under: the `@StoredAs` name, else the type's simple
    /// name. Two types of one process that share a stored name without `@StoredAs` on
    /// either are refused (see ``StoredAs(_:)``).
    ///
    /// ```swift
    /// Person._cofferSchema.storedName
    /// ```
    public let storedName: String

    /// Whether the stored name was given with `@StoredAs` (a deliberate choice, which lets
    /// another entity type of the process use the same stored entity).
    ///
    /// ```swift
    /// Later.Note._cofferSchema.storedNameIsExplicit   // true: @StoredAs("Note")
    /// ```
    public let storedNameIsExplicit: Bool

    /// Whether the type is marked `@Sync`: its writes record what changed in the store's
    /// outbox, in the same transaction (see ``Sync()``).
    ///
    /// ```swift
    /// Task._cofferSchema.isSynced   // true for `@Sync struct Task: Entity`
    /// ```
    public let isSynced: Bool

    /// Every stored property, `id` first, in declaration order.
    ///
    /// ```swift
    /// Person._cofferSchema.properties[0].name   // "id"
    /// ```
    public let properties: [PropertySchema]

    /// Whether a put changes nothing of the object but its id (no timestamps to stamp, no
    /// relations to save): a failed put then restores the id alone, not a copy of the object.
    ///
    /// ```swift
    /// Note._cofferSchema.putChangesOnlyIds   // true
    /// ```
    @_spi(CofferGenerated)
    public let putChangesOnlyIds: Bool

    /// Creates a schema; called by generated code.
    ///
    /// ```swift
    /// EntitySchema(name: "Person", properties: [...])
    /// ```
    @_spi(CofferGenerated)
    public init(name: String, storedName: String? = nil, storedNameIsExplicit: Bool = false, isSynced: Bool = false,
                properties: [PropertySchema]) {
        self.name = name
        self.storedName = storedName ?? name
        self.storedNameIsExplicit = storedNameIsExplicit
        self.isSynced = isSynced
        self.properties = properties
        putChangesOnlyIds = !properties.contains { !$0.flags.isDisjoint(with: [.createdAt, .updatedAt, .relation]) }
    }
}

/// One stored property of an entity.
///
/// ```swift
/// let age = Person._cofferSchema.properties[2]
/// print(age.name, age.type, age.isOptional)
/// ```
public struct PropertySchema: Sendable, Equatable {
    /// The Swift property name.
    ///
    /// ```swift
    /// Person.age.schema.name   // "age"
    /// ```
    public let name: String

    /// The name the property is stored under: the `@Name` argument or the Swift name.
    ///
    /// ```swift
    /// Person.age.schema.storedName
    /// ```
    public let storedName: String

    /// The stored value type (for enums, the raw value's type).
    ///
    /// ```swift
    /// Person.age.schema.type   // .int
    /// ```
    public let type: PropertyType

    /// Whether the Swift type is an optional.
    ///
    /// ```swift
    /// Person.birthday.schema.isOptional   // true
    /// ```
    public let isOptional: Bool

    /// The Swift type as written, e.g. `"Color?"` for an enum property.
    ///
    /// ```swift
    /// Person.favoriteColor.schema.swiftType   // "Color?"
    /// ```
    public let swiftType: String

    /// Annotations that change how the property is stored.
    ///
    /// ```swift
    /// Person.firstName.schema.flags.contains(.indexed)
    /// ```
    public let flags: PropertyFlags

    /// What a `@Unique` property does when a put collides with a stored value.
    ///
    /// ```swift
    /// Person.email.schema.onConflict   // .fail
    /// ```
    public let onConflict: ConflictStrategy?

    /// The former name given with `@Renamed(from:)`.
    ///
    /// ```swift
    /// Person.surname.schema.renamedFrom   // "lastName"
    /// ```
    public let renamedFrom: String?

    /// The target entity's stored name for a `ToOne` link.
    ///
    /// ```swift
    /// Order.customer.schema.relationTarget   // "Customer"
    /// ```
    public let relationTarget: String?

    /// For a `@Backlink` `ToMany`: the name of the `ToOne` on the other side.
    ///
    /// ```swift
    /// Customer.orders.schema.backlinkProperty   // "customer"
    /// ```
    public let backlinkProperty: String?

    /// The tokenizer of the property's `@FullText` index, or nil.
    ///
    /// ```swift
    /// Article.body.schema.fullText   // .porter
    /// ```
    public let fullText: TextTokenizer?

    /// Whether the declaration has a default value, which old records without this property
    /// decode to.
    ///
    /// ```swift
    /// Person.tags.schema.hasDefault   // true for `var tags: [String] = []`
    /// ```
    public let hasDefault: Bool

    /// Creates a property description; called by generated code.
    ///
    /// ```swift
    /// PropertySchema(name: "age", type: .int, swiftType: "Int")
    /// ```
    @_spi(CofferGenerated)
    public init(
        name: String,
        storedName: String? = nil,
        type: PropertyType,
        isOptional: Bool = false,
        swiftType: String,
        flags: PropertyFlags = [],
        onConflict: ConflictStrategy? = nil,
        renamedFrom: String? = nil,
        hasDefault: Bool = false,
        relationTarget: String? = nil,
        backlinkProperty: String? = nil,
        fullText: TextTokenizer? = nil
    ) {
        self.name = name
        self.storedName = storedName ?? name
        self.type = type
        self.isOptional = isOptional
        self.swiftType = swiftType
        self.flags = flags
        self.onConflict = onConflict
        self.renamedFrom = renamedFrom
        self.hasDefault = hasDefault
        self.relationTarget = relationTarget
        self.backlinkProperty = backlinkProperty
        self.fullText = fullText
    }
}

/// Annotations that change how a property is stored.
///
/// ```swift
/// let flags: PropertyFlags = [.indexed, .unique]
/// ```
public struct PropertyFlags: OptionSet, Sendable, Hashable {
    /// The raw bits.
    ///
    /// ```swift
    /// PropertyFlags(rawValue: 1)
    /// ```
    public let rawValue: UInt32
    /// Creates flags from raw bits.
    ///
    /// ```swift
    /// PropertyFlags(rawValue: 3)
    /// ```
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The object's id.
    ///
    /// ```swift
    /// PropertyFlags.id
    /// ```
    public static let id = PropertyFlags(rawValue: 1 << 0)
    /// `@Index`.
    ///
    /// ```swift
    /// PropertyFlags.indexed
    /// ```
    public static let indexed = PropertyFlags(rawValue: 1 << 1)
    /// `@Unique`.
    ///
    /// ```swift
    /// PropertyFlags.unique
    /// ```
    public static let unique = PropertyFlags(rawValue: 1 << 2)
    /// `@CreatedAt`.
    ///
    /// ```swift
    /// PropertyFlags.createdAt
    /// ```
    public static let createdAt = PropertyFlags(rawValue: 1 << 3)
    /// `@UpdatedAt`.
    ///
    /// ```swift
    /// PropertyFlags.updatedAt
    /// ```
    public static let updatedAt = PropertyFlags(rawValue: 1 << 4)
    /// A `RawRepresentable` enum stored as its raw value.
    ///
    /// ```swift
    /// PropertyFlags.enumeration
    /// ```
    public static let enumeration = PropertyFlags(rawValue: 1 << 5)
    /// A `ToOne` link, stored as the target's id.
    ///
    /// ```swift
    /// PropertyFlags.relation
    /// ```
    public static let relation = PropertyFlags(rawValue: 1 << 6)
    /// A `@Backlink` `ToMany`: computed from the other side, not stored.
    ///
    /// ```swift
    /// PropertyFlags.backlink
    /// ```
    public static let backlink = PropertyFlags(rawValue: 1 << 7)
    /// A standalone many-to-many `ToMany`, stored in its own tables.
    ///
    /// ```swift
    /// PropertyFlags.toMany
    /// ```
    public static let toMany = PropertyFlags(rawValue: 1 << 8)
    /// `@FullText`: a full-text index of postings.
    ///
    /// ```swift
    /// PropertyFlags.fullText
    /// ```
    public static let fullText = PropertyFlags(rawValue: 1 << 9)
    /// Whether an ``Embedded`` value is there (`true`, or absent for nil): its leaves are
    /// stored as properties of their own, named by their path (`address.city`).
    /// ```swift
    /// PropertyFlags.embedded
    /// ```
    public static let embedded = PropertyFlags(rawValue: 1 << 10)
}

/// What a put does when a `@Unique` property's value is already held by another object.
///
/// ```swift
/// @Unique(onConflict: .replace) var email: String?
/// ```
public enum ConflictStrategy: String, Sendable, Codable {
    /// Throw ``CofferError/uniqueViolation(entity:property:value:)``; nothing is stored.
    /// ```swift
    /// @Unique(onConflict: .fail) var email: String
    /// ```
    case fail
    /// Remove the object that held the value, then store the new one.
    /// ```swift
    /// @Unique(onConflict: .replace) var email: String
    /// ```
    case replace
    /// Give the new object the existing object's id and overwrite it.
    /// ```swift
    /// @Unique(onConflict: .update) var email: String
    /// ```
    case update
}
