extension EntitySchema {
    /// The schema of a stored entity as its catalog entry describes it: what code without
    /// the entity's Swift type (selector queries on stored data, the `coffer` tool) works
    /// with. The id comes first as `id`; names are stored names; `@Backlink`s come last.
    /// Retired properties are left out (their values stay in the records), unless
    /// `includingRetired`: an import writes whole objects, their values included.
    init(catalog entity: CatalogEntity, includingRetired: Bool = false) {
        var properties = [PropertySchema(name: "id", type: .uint64, swiftType: "Id", flags: .id)]
        for property in entity.properties where includingRetired || !property.isRetired {
            properties.append(PropertySchema(
                name: property.name, type: property.type, isOptional: property.optional, swiftType: property.swiftType,
                flags: PropertyFlags(rawValue: property.flags), onConflict: property.onConflict.flatMap(ConflictStrategy.init(rawValue:)),
                hasDefault: property.defaulted == true, relationTarget: property.target,
                fullText: property.tokenizer.flatMap(TextTokenizer.init(rawValue:))))
        }
        // Backlinks last: nothing is stored for them.
        for backlink in entity.backlinks ?? [] where !properties.contains(where: { $0.storedName == backlink.name }) {
            properties.append(PropertySchema(
                name: backlink.name, type: .uint64, swiftType: "ToMany<\(backlink.source)>", flags: .backlink,
                hasDefault: true, relationTarget: backlink.source, backlinkProperty: backlink.link))
        }
        self.init(name: entity.name, isSynced: entity.synced == true, properties: properties)
    }
}

extension PropertySchema {
    /// This declaration with the index the catalog lists for it: a build that does not
    /// declare `@Index` or `@Unique` on a property another build indexes still maintains
    /// (and enforces) that index (see `SchemaReconciler`).
    func adoptingIndexes(of stored: CatalogProperty) -> PropertySchema {
        let storedFlags = PropertyFlags(rawValue: stored.flags).intersection([.indexed, .unique])
        guard !flags.isSuperset(of: storedFlags) else { return self }
        let adoptsUnique = storedFlags.contains(.unique) && !flags.contains(.unique)
        return PropertySchema(
            name: name, storedName: storedName, type: type, isOptional: isOptional, swiftType: swiftType,
            flags: flags.union(storedFlags),
            onConflict: adoptsUnique ? stored.onConflict.flatMap(ConflictStrategy.init(rawValue:)) : onConflict,
            renamedFrom: renamedFrom, hasDefault: hasDefault, relationTarget: relationTarget,
            backlinkProperty: backlinkProperty, fullText: fullText)
    }
}
