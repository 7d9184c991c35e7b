/// What the generator learned about one entity from the source.
struct EntityModel {
    /// The type name as written from the file's top level, e.g. `Outer.Person`.
    var qualifiedName: String
    var accessModifier: String
    var properties: [PropertyModel]
}

/// One stored property of an entity.
struct PropertyModel {
    var name: String
    var storedName: String?
    /// The `PropertyType` case name, e.g. `int64`.
    var storageType: String
    /// The Swift type without the optional, as written (or inferred from a literal).
    var valueType: String
    var isOptional: Bool
    var isEnum: Bool
    var isId: Bool
    var defaultValue: String?
    var flags: [String]
    var onConflict: String?
    var renamedFrom: String?
    /// The property's own access (`public`, `package` or "" for internal).
    var access: String = ""
    /// For `ToOne<Target>`: the target's stored name.
    var relationTarget: String? = nil
    /// For `ToMany<Target>`: the target type as written.
    var toManyTarget: String? = nil
    /// For a `@Backlink` `ToMany`: the name of the `ToOne` on the target.
    var backlinkProperty: String? = nil

    /// Not stored in records: computed from the other side.
    var isComputedRelation: Bool { toManyTarget != nil }

    /// The Swift type as declared, e.g. `Color?`.
    var swiftType: String { isOptional ? "\(valueType)?" : valueType }
}
