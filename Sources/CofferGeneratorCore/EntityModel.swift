/// What the generator learned about one entity from the source.
struct EntityModel {
    /// The type name as written from the file's top level, e.g. `Outer.Person`.
    var qualifiedName: String
    var accessModifier: String
    var properties: [PropertyModel]
    /// The name given with `@StoredAs`, if any.
    var explicitStoredName: String? = nil

    /// The name the entity is stored under: `@StoredAs`, else the simple type name.
    var storedName: String { explicitStoredName ?? String(qualifiedName.split(separator: ".").last ?? Substring(qualifiedName)) }
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
    /// For `ToOne<Target>` and many-to-many `ToMany<Target>`: the target's stored name
    /// (its simple name until `SourceAnalyzer.resolveRelationTargets` sees a `@StoredAs`).
    var relationTarget: String? = nil
    /// The target type as written, e.g. `Inventory.Item`.
    var relationTargetType: String? = nil
    /// For `ToMany<Target>`: the target type as written.
    var toManyTarget: String? = nil
    /// For a `@Backlink` `ToMany`: the name of the `ToOne` on the target.
    var backlinkProperty: String? = nil
    /// For `@FullText`: the tokenizer's case name (`simple`, `porter`).
    var fullText: String? = nil

    /// Not stored in records: computed from the other side.
    var isComputedRelation: Bool { toManyTarget != nil }

    /// The Swift type as declared, e.g. `Color?`.
    var swiftType: String { isOptional ? "\(valueType)?" : valueType }
}
