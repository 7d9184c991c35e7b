/// Typed metadata for one stored property of an entity, generated as a `static let` with
/// the property's own name.
///
/// `Person.firstName` is a `Property<Person, String>`, `Person.id` a `Property<Person, Id>`.
/// Properties name the field in queries, orderings, upserts and property queries:
///
/// ```swift
/// try people.upsert(&person, by: Person.email)
/// print(Person.firstName.name)   // "firstName"
/// ```
public struct Property<E: Entity, Value>: Sendable, CustomStringConvertible {
    /// The position of the property in `E._cofferSchema.properties`.
    ///
    /// ```swift
    /// Person.id.index   // 0
    /// ```
    public let index: Int

    /// The key path that reads the property from an object.
    ///
    /// ```swift
    /// person[keyPath: Person.age.keyPath]
    /// ```
    public let keyPath: KeyPath<E, Value> & Sendable

    /// Creates the metadata; called by generated code.
    ///
    /// ```swift
    /// static let age = Property(index: 2, keyPath: \Person.age)
    /// ```
    @_spi(CofferGenerated)
    public init(index: Int, keyPath: KeyPath<E, Value> & Sendable) {
        self.index = index
        self.keyPath = keyPath
    }

    /// The property's description in the entity schema.
    ///
    /// ```swift
    /// Person.age.schema.type   // .int
    /// ```
    public var schema: PropertySchema { E._cofferSchema.properties[index] }

    /// The Swift name of the property.
    ///
    /// ```swift
    /// Person.age.name   // "age"
    /// ```
    public var name: String { schema.name }

    /// `Entity.property`, as used in error messages.
    ///
    /// ```swift
    /// "\(Person.age)"   // "Person.age"
    /// ```
    public var description: String { "\(E._cofferSchema.name).\(name)" }
}
