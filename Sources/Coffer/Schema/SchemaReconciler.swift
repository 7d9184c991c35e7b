/// Matches an entity's generated schema against the catalog's record of it.
///
/// Rules (the consequences users rely on):
/// - Properties match by stored name (`@Name` or the Swift name), else by `@Renamed(from:)`,
///   else by a name the property had before a rename (so a build that still uses the old
///   name reads what a renaming build wrote). A match keeps its property id, so stored
///   values carry over.
/// - A new property gets a fresh id. When the entity already existed it must be optional or
///   have a default value: old records decode to nil or that default.
/// - A property that disappeared is kept in the catalog as retired: its id, its values (in
///   old records, and carried through updates by builds that do not declare it) and its
///   index (maintained from the catalog) stay, so a build that declares it again, an older
///   app version or an app extension, finds every value. Its id is never reused.
/// - A type change must be a safe widening (`Int32` -> `Int64`, `Float` -> `Double`,
///   `T` -> `T?`); anything else throws ``CofferError/schemaMismatch(entity:property:stored:declared:)``
///   before anything is written.
enum SchemaReconciler {
    static func reconcile(
        _ schema: EntitySchema,
        with stored: CatalogEntity?,
        newEntityId: () -> UInt32
    ) throws -> CatalogEntity {
        var result = stored ?? CatalogEntity(id: newEntityId(), name: schema.storedName, lastPropertyId: 0, properties: [])
        var properties: [CatalogProperty] = []
        var matched = Set<UInt16>()
        for property in schema.properties where property.flags.isDisjoint(with: [.id, .backlink]) {
            // A returning property finds its retired entry (and its id) by name.
            let previous = stored.flatMap { entity in
                entity.anyProperty(named: property.storedName)
                    ?? property.renamedFrom.flatMap { entity.anyProperty(named: $0) }
            }
            if let previous {
                matched.insert(previous.id)
                properties.append(try reconciledProperty(property, previous: previous, entity: schema.name))
            } else {
                properties.append(try addedProperty(property, to: &result, hasStoredEntity: stored != nil, entity: schema.name))
            }
        }
        properties += retiredProperties(of: stored, except: matched)
        result.properties = properties
        let backlinks = catalogBacklinks(of: schema)
        result.backlinks = backlinks.isEmpty ? nil : backlinks
        return result
    }

    /// The catalog entry of a declared property the catalog has (`previous`): its id, the
    /// declaration's type and flags, the names it had, and the indexes another build keeps.
    private static func reconciledProperty(_ property: PropertySchema, previous: CatalogProperty, entity: String) throws -> CatalogProperty {
        try checkCompatible(property, previous: previous, entity: entity)
        // Names it had before stay known, so a build still using an old name (an older
        // app version, an extension) finds it after a rename.
        let formerNames = Set((previous.formerNames ?? []) + [previous.name]).subtracting([property.storedName]).sorted()
        // Indexes another build declared stay: dropping them here would make that build
        // rebuild them on its next write, and this one drop them again.
        let kept = keptIndexes(property, previous: previous)
        return CatalogProperty(
            id: previous.id, name: property.storedName, type: property.type,
            optional: property.isOptional, swiftType: property.swiftType,
            flags: property.flags.union(kept.flags).rawValue,
            target: property.relationTarget,
            keys: property.flags.union(kept.flags).contains(.indexed) ? IndexKey.version : nil,
            formerNames: formerNames.isEmpty ? nil : formerNames,
            tokenizer: property.fullText?.rawValue ?? kept.tokenizer,
            defaulted: defaulted(property), onConflict: conflict(property) ?? kept.onConflict)
    }

    /// The catalog entry of a declared property the catalog does not have, under the next
    /// property id of `result`. An entity with stored objects can gain only properties it
    /// can read from them (optional or defaulted).
    private static func addedProperty(_ property: PropertySchema, to result: inout CatalogEntity, hasStoredEntity: Bool,
                                      entity: String) throws -> CatalogProperty {
        if hasStoredEntity && !property.isOptional && !property.hasDefault {
            throw CofferError.schemaMismatch(
                entity: entity, property: property.name,
                stored: "no values (the property is new)",
                declared: "\(property.swiftType) without a default value; make it optional or give it a default so stored objects can be read")
        }
        guard result.lastPropertyId < UInt16.max - 1 else {
            throw CofferError.limitReached(.propertyIds(entity: entity))
        }
        result.lastPropertyId += 1
        return CatalogProperty(
            id: result.lastPropertyId, name: property.storedName, type: property.type,
            optional: property.isOptional, swiftType: property.swiftType, flags: property.flags.rawValue,
            target: property.relationTarget, keys: keyVersion(property, previous: nil),
            tokenizer: property.fullText?.rawValue, defaulted: defaulted(property), onConflict: conflict(property))
    }

    /// The stored properties no declaration matched, retired. Their indexes, full-text ones
    /// included, stay and are maintained by this build too (from the values carried in each
    /// record), so the build that declares the property never has to rebuild them.
    private static func retiredProperties(of stored: CatalogEntity?, except matched: Set<UInt16>) -> [CatalogProperty] {
        (stored?.properties ?? []).filter { !matched.contains($0.id) }.map { old in
            var retired = old
            retired.retired = true
            return retired
        }
    }

    /// The catalog entries of the schema's backlinks.
    private static func catalogBacklinks(of schema: EntitySchema) -> [CatalogBacklink] {
        schema.properties.compactMap { property -> CatalogBacklink? in
            guard property.flags.contains(.backlink), let source = property.relationTarget, let link = property.backlinkProperty else { return nil }
            return CatalogBacklink(name: property.storedName, source: source, link: link)
        }
    }

    /// The catalog's `defaulted` flag: set only for properties with a default (so catalogs
    /// of entities without defaults are written as before).
    private static func defaulted(_ property: PropertySchema) -> Bool? {
        property.hasDefault && property.relationTarget == nil ? true : nil
    }

    /// The catalog's conflict strategy: recorded only when it is not the default `.fail`.
    private static func conflict(_ property: PropertySchema) -> String? {
        guard let strategy = property.onConflict, strategy != .fail else { return nil }
        return strategy.rawValue
    }

    /// The indexes the catalog lists for `previous` that the declaration does not ask for
    /// but can keep: an `@Index` or `@Unique` whose keys serve the declared type, and a
    /// full-text index on a `String`. A build keeps (and maintains) what another build of
    /// the same entity declared, so two builds never drop and rebuild each other's indexes.
    static func keptIndexes(_ property: PropertySchema, previous: CatalogProperty)
        -> (flags: PropertyFlags, tokenizer: String?, onConflict: String?) {
        var flags: PropertyFlags = []
        var onConflict: String?
        let stored = PropertyFlags(rawValue: previous.flags)
        if stored.contains(.indexed), IndexKey.isIndexable(property.type),
           indexIsReusable(stored: previous, declared: property.type) {
            flags.insert(.indexed)
            if stored.contains(.unique), property.type.elementType == nil, !property.flags.contains(.unique) {
                flags.insert(.unique)
                onConflict = previous.onConflict
            }
        }
        var tokenizer: String?
        if property.fullText == nil, property.type == .string, let stored = previous.tokenizer {
            tokenizer = stored
            flags.insert(.fullText)
        }
        return (flags, tokenizer, onConflict)
    }

    /// The key version an indexed property's index has once registration is done: kept when
    /// the index is reused, the current one when it is (re)built.
    private static func keyVersion(_ property: PropertySchema, previous: CatalogProperty?) -> Int? {
        property.flags.contains(.indexed) ? IndexKey.version : nil
    }

    /// Whether an index stored for `stored` can serve `declared` as it is: same key family,
    /// and for strings the current key version.
    static func indexIsReusable(stored: CatalogProperty, declared: PropertyType) -> Bool {
        guard PropertyFlags(rawValue: stored.flags).contains(.indexed),
              stored.type.indexKeyFamily == declared.indexKeyFamily else { return false }
        return declared.indexKeyFamily != .string || stored.keys == IndexKey.version
    }

    /// Throws unless every stored property the schema declares can be read as declared.
    static func checkReadable(_ schema: EntitySchema, from stored: CatalogEntity) throws {
        for property in schema.properties where property.flags.isDisjoint(with: [.id, .backlink]) {
            if let previous = stored.anyProperty(named: property.storedName)
                ?? property.renamedFrom.flatMap({ stored.anyProperty(named: $0) }) {
                try checkCompatible(property, previous: previous, entity: schema.name)
            }
        }
    }

    private static func checkCompatible(_ property: PropertySchema, previous: CatalogProperty, entity: String) throws {
        let typeOK = canWiden(previous.type, to: property.type)
        let optionalOK = !previous.optional || property.isOptional || property.hasDefault
        guard typeOK && optionalOK else {
            throw CofferError.schemaMismatch(
                entity: entity, property: property.name,
                stored: previous.swiftType, declared: property.swiftType)
        }
    }

    /// Whether values stored as `stored` can be read as `declared` without loss.
    static func canWiden(_ stored: PropertyType, to declared: PropertyType) -> Bool {
        if stored == declared { return true }
        let signed: [PropertyType] = [.int8, .int16, .int32, .int64]
        let unsigned: [PropertyType] = [.uint8, .uint16, .uint32, .uint64]
        func rank(_ type: PropertyType, in ladder: [PropertyType]) -> Int? {
            switch type {
            case .int: return ladder == signed ? 3 : nil
            case .uint: return ladder == unsigned ? 3 : nil
            default: return ladder.firstIndex(of: type)
            }
        }
        if let from = rank(stored, in: signed), let to = rank(declared, in: signed) { return from <= to }
        if let from = rank(stored, in: unsigned), let to = rank(declared, in: unsigned) { return from <= to }
        // An unsigned value fits a signed type with more bits.
        if let from = rank(stored, in: unsigned), let to = rank(declared, in: signed) { return from < to }
        if stored == .float && declared == .double { return true }
        return false
    }
}
