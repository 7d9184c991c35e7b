/// An `Embedded` struct used in an array: its element codec (`EmbeddedDocument`) is generated.
struct DocumentCodecModel {
    var qualifiedName: String
    /// `public` or "" (the conformance's witnesses are as visible as the type).
    var access: String
    var leaves: [PropertyModel]
}

/// What the generator learned about one entity from the source.
struct EntityModel {
    /// The type name as written from the file's top level, e.g. `Outer.Person`.
    var qualifiedName: String
    var accessModifier: String
    var properties: [PropertyModel]
    /// The name given with `@StoredAs`, if any.
    var explicitStoredName: String? = nil
    /// Whether the type is marked `@Sync`.
    var isSynced = false

    /// The name the entity is stored under: `@StoredAs`, else the simple type name.
    var storedName: String { explicitStoredName ?? String(qualifiedName.split(separator: ".").last ?? Substring(qualifiedName)) }

    /// Every field the schema lists, in schema order: the properties, each embedded value
    /// followed by its leaves (depth first). A field's index here is its schema position.
    func storedFields() -> [StoredField] {
        var fields: [StoredField] = []
        func add(_ property: PropertyModel, path: [PropertyModel]) {
            fields.append(StoredField(model: property, path: path, position: fields.count))
            for child in property.children { add(child, path: path + [property]) }
        }
        for property in properties { add(property, path: []) }
        return fields
    }
}

/// One field of an entity's schema as the generated code addresses it: a property, an
/// embedded value's presence flag, or a leaf inside embedded values.
struct StoredField {
    var model: PropertyModel
    /// The embedded values the field is inside, outermost first (empty at the top level).
    var path: [PropertyModel]
    /// The schema position.
    var position: Int

    /// The Swift path: `home.location.latitude`.
    var name: String { (path.map(\.name) + [model.name]).joined(separator: ".") }
    /// The stored path (`@Name`s applied to each step), or nil when it is `name`.
    var storedName: String? {
        let stored = (path.map { $0.storedName ?? $0.name } + [model.storedName ?? model.name]).joined(separator: ".")
        return stored == name ? nil : stored
    }
    /// Nil when the field, or an embedded value it is in, is nil.
    var isOptional: Bool { model.isOptional || path.contains(where: \.isOptional) }
    /// Old records without the field read as a default (its own or an enclosing value's).
    var hasDefault: Bool {
        model.defaultValue != nil || model.relationTarget != nil || path.contains { $0.defaultValue != nil }
    }
    /// The Swift type queries see: the leaf's type, optional under an optional value.
    var swiftType: String {
        let base = model.embeddedType ?? model.valueType
        return isOptional ? base + "?" : base
    }
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
    /// For a property whose type is an `Embedded` struct: the struct's qualified name. The
    /// property itself is stored as a presence flag (`bool`); its leaves are `children`.
    var embeddedType: String? = nil
    /// The stored properties of an embedded value (which may be embedded values again).
    var children: [PropertyModel] = []
    /// For an array of an `Embedded` struct: the struct's qualified name (stored as a document).
    var embeddedArrayElement: String? = nil

    /// Not stored in records: computed from the other side.
    var isComputedRelation: Bool { toManyTarget != nil }

    /// The Swift type as declared, e.g. `Color?`.
    var swiftType: String { isOptional ? "\(valueType)?" : valueType }
}
