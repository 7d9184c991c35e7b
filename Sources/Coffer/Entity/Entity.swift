import Foundation

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
/// The requirements prefixed with `_coffer` are implemented by the generated code; you do
/// not write them yourself, and code completion does not offer them. All but `_cofferDecode`
/// are `@_spi(CofferGenerated)`, visible only to the generated file; `_cofferDecode` is
/// plain public because the inlinable reads (`Box.get`, `Query.find`) call it so that
/// decoding is specialised in your module. If the plugin is not applied to the target, the
/// compiler reports that the struct does not conform to `Entity`.
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
    /// Person._cofferSchema.properties.map(\.name)   // ["id", "firstName", ...]
    /// ```
    @_spi(CofferGenerated)
    static var _cofferSchema: EntitySchema { get }

    /// Writes every stored property except `id` into a record (generated). Never modifies
    /// `entity`: it is `inout` so that generic callers pass the object by address (a
    /// by-value argument of a generic type is copied and destroyed on every put).
    ///
    /// ```swift
    /// Person._cofferEncode(&person, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    static func _cofferEncode(_ entity: inout Self, to writer: inout RecordWriter)

    /// Reads an object back from a record (generated).
    ///
    /// ```swift
    /// let person = try Person._cofferDecode(id: 7, from: &reader)
    /// ```
    static func _cofferDecode(id: Id, from reader: inout _RecordReader) throws -> Self

    /// Sets the `@CreatedAt` property (when `createdAt` is non-nil) and the `@UpdatedAt`
    /// property (generated; empty for entities without them).
    ///
    /// ```swift
    /// Person._cofferStamp(&person, createdAt: now, updatedAt: now)
    /// ```
    @_spi(CofferGenerated)
    static func _cofferStamp(_ entity: inout Self, createdAt: Date?, updatedAt: Date)

    /// Stores the unsaved targets of the entity's `ToOne` links before the entity itself
    /// (generated; empty for entities without links).
    ///
    /// ```swift
    /// try Order._cofferPutRelations(&order, in: store)
    /// ```
    @_spi(CofferGenerated)
    static func _cofferPutRelations(_ entity: inout Self, in store: Store) throws

    /// Applies the changes of the entity's many-to-many `ToMany` properties after the entity
    /// is stored (generated; empty for entities without them).
    ///
    /// ```swift
    /// try Student._cofferPutLinks(&student, in: store)
    /// ```
    @_spi(CofferGenerated)
    static func _cofferPutLinks(_ entity: inout Self, in store: Store) throws

    /// Whether a put changes nothing of the object but its id (no timestamps, no relations),
    /// so that a failed put restores the id alone (generated as a constant; see
    /// `EntitySchema.putChangesOnlyIds`).
    ///
    /// ```swift
    /// Note._cofferPutChangesOnlyIds   // true
    /// ```
    @_spi(CofferGenerated)
    static var _cofferPutChangesOnlyIds: Bool { get }
}
