import Foundation

/// The identifier of a stored object. `0` means "not stored yet".
///
/// ```swift
/// var person = Person(firstName: "Ada")   // person.id == 0
/// try people.put(&person)                 // person.id is now 1, 2, ...
/// ```
public typealias Id = UInt64

/// A struct whose values Coffer stores.
///
/// Declare the conformance on the struct itself and give it a `var id: Id`; the
/// `CofferPlugin` build-tool plugin generates everything else (the `Property` metadata, the
/// schema and the record encoder and decoder) when you run `swift build`:
///
/// ```swift
/// import Coffer
///
/// struct Person: Entity {
///     var id: Id = 0
///     @Index var firstName: String
///     var age: Int
///     var birthday: Date?
/// }
/// ```
///
/// The requirements prefixed with `coffer` are implemented by the generated code; you do
/// not write them yourself. If the plugin is not applied to the target, the compiler reports
/// that the struct does not conform to `Entity`.
public protocol Entity: Sendable {
    /// The object's identifier, assigned by the first `put`.
    ///
    /// ```swift
    /// try people.put(&person); print(person.id)
    /// ```
    var id: Id { get set }

    /// The schema the generator derived from the struct declaration.
    ///
    /// ```swift
    /// Person.cofferSchema.properties.map(\.name)   // ["id", "firstName", ...]
    /// ```
    static var cofferSchema: EntitySchema { get }

    /// Writes every stored property except `id` into a record (generated). Never modifies
    /// `entity`: it is `inout` so that generic callers pass the object by address (a
    /// by-value argument of a generic type is copied and destroyed on every put).
    ///
    /// ```swift
    /// Person.cofferEncode(&person, to: &writer)
    /// ```
    @_documentation(visibility: internal)
    static func cofferEncode(_ entity: inout Self, to writer: inout RecordWriter)

    /// Reads an object back from a record (generated).
    ///
    /// ```swift
    /// let person = try Person.cofferDecode(id: 7, from: &reader)
    /// ```
    @_documentation(visibility: internal)
    static func cofferDecode(id: Id, from reader: inout RecordReader) throws -> Self

    /// Sets the `@CreatedAt` property (when `createdAt` is non-nil) and the `@UpdatedAt`
    /// property (generated only for entities that have them).
    ///
    /// ```swift
    /// Person.cofferStamp(&person, createdAt: now, updatedAt: now)
    /// ```
    @_documentation(visibility: internal)
    static func cofferStamp(_ entity: inout Self, createdAt: Date?, updatedAt: Date)

    /// Stores the unsaved targets of the entity's `ToOne` links before the entity itself
    /// (generated only for entities with links).
    ///
    /// ```swift
    /// try Order.cofferPutRelations(&order, in: store)
    /// ```
    @_documentation(visibility: internal)
    static func cofferPutRelations(_ entity: inout Self, in store: Store) throws

    /// Applies the changes of the entity's many-to-many `ToMany` properties after the entity
    /// is stored (generated only for entities that have them).
    ///
    /// ```swift
    /// try Student.cofferPutLinks(&student, in: store)
    /// ```
    @_documentation(visibility: internal)
    static func cofferPutLinks(_ entity: inout Self, in store: Store) throws

    /// Whether a put changes nothing of the object but its id (no timestamps, no relations),
    /// so that a failed put restores the id alone (generated as a constant; see
    /// `EntitySchema.putChangesOnlyIds`).
    ///
    /// ```swift
    /// Note.cofferPutChangesOnlyIds   // true
    /// ```
    @_documentation(visibility: internal)
    static var cofferPutChangesOnlyIds: Bool { get }
}

extension Entity {
    /// Entities without timestamp properties have nothing to stamp.
    ///
    /// ```swift
    /// Note.cofferStamp(&note, createdAt: nil, updatedAt: Date())   // no effect
    /// ```
    @_documentation(visibility: internal)
    public static func cofferStamp(_ entity: inout Self, createdAt: Date?, updatedAt: Date) {}

    /// Entities without links have nothing to store first.
    ///
    /// ```swift
    /// try Note.cofferPutRelations(&note, in: store)   // no effect
    /// ```
    @_documentation(visibility: internal)
    public static func cofferPutRelations(_ entity: inout Self, in store: Store) throws {}

    /// Entities without many-to-many relations have nothing to apply.
    ///
    /// ```swift
    /// try Note.cofferPutLinks(&note, in: store)   // no effect
    /// ```
    @_documentation(visibility: internal)
    public static func cofferPutLinks(_ entity: inout Self, in store: Store) throws {}

    /// Read from the schema for conformances written by hand; generated code stores it once.
    ///
    /// ```swift
    /// Note.cofferPutChangesOnlyIds   // true: no timestamps, no relations
    /// ```
    @_documentation(visibility: internal)
    public static var cofferPutChangesOnlyIds: Bool { cofferSchema.putChangesOnlyIds }
}
