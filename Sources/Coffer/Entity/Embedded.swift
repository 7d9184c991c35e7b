/// A struct stored inside an entity, as part of it: an address, a money amount, a geo
/// point. Mark the struct `Embedded` (in the same target as the entities that use it) and
/// use it as the type of an entity property, optional or not, and inside other embedded
/// structs, to any depth:
///
/// ```swift
/// struct Address: Embedded {
///     @Index var city: String
///     var zip: String?
///     var location: GeoPoint? = nil
/// }
///
/// struct GeoPoint: Embedded {
///     var latitude: Double
///     var longitude: Double
/// }
///
/// struct Person: Entity {
///     var id: Id = 0
///     var name: String
///     var home: Address
///     var work: Address?
/// }
///
/// let inOslo = try people.query { Person.home.city == "Oslo" && Person.work.isNil() }
///     .ordered(by: Person.home.location.latitude)
///     .build()
/// ```
///
/// Each leaf is stored as a property of the entity named by its path (`home.city`,
/// `home.location.latitude`), with a presence field per embedded value (`home`). So a leaf
/// is queried, indexed (`@Index` on the leaf inside the struct indexes it for every entity
/// property of that type), ordered by and searched (`@FullText`) like any property, the
/// selector syntax and the `coffer` tool name it `"home.city"`, and schema evolution applies
/// leaf by leaf: a leaf added later needs a default value or an optional type (or the
/// embedded property a default), a removed leaf keeps its stored values. Leaves under an
/// optional embedded value are optional in queries (`Person.work.city` is a
/// `Property<Person, String?>`), and `Person.work.isNil()` tests the value as a whole.
///
/// Rules the generator checks at your line: the struct needs its memberwise initializer (an
/// `init` goes into an extension), its leaves have the types entity properties have (no
/// links, relations or timestamps), and it cannot contain itself, directly or through other
/// embedded structs.
///
/// An array of embedded values (`var stops: [Address]`) is stored differently: as one
/// document field holding an object per element (see ``EmbeddedDocument``), queried by path
/// with any element matching (`Route.stops["city"] == "Oslo"`, `{"stops.city": "Oslo"}`),
/// not indexed, and shown as a JSON array by the tools.
public protocol Embedded: Sendable {}
