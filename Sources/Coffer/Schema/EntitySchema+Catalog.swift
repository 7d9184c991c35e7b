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
        self.init(name: entity.name, properties: properties)
    }
}
