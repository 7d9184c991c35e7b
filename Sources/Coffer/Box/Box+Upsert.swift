extension Box {
    /// Stores `entity` matched by an external key, as Salesforce SmartStore does: when one
    /// stored object has the same value of `property`, that object is updated (the entity
    /// takes its id); when none has, the entity is inserted as a new object. When it fails,
    /// nothing is stored and `entity` is left as it was (its id and its timestamps).
    ///
    /// ```swift
    /// var contact = Contact(externalId: "sf-001", name: "Ada")
    /// try contacts.upsert(&contact, by: Contact.externalId)   // insert
    /// var again = Contact(externalId: "sf-001", name: "Ada L.")
    /// try contacts.upsert(&again, by: Contact.externalId)     // updates the same object
    /// ```
    ///
    /// - Throws: ``CofferError/ambiguousUpsert(entity:property:value:count:)`` when several
    ///   stored objects have the key; ``CofferError/invalidUpsertKey(entity:property:problem:)`` when
    ///   `property` has no `@Index`/`@Unique` or the entity's key is nil.
    @discardableResult
    public func upsert<Value>(_ entity: inout E, by property: Property<E, Value>) throws -> Id {
        // The whole value, not only its id: a put also sets timestamps, and a failed or
        // retried upsert must leave the caller's value as it was.
        let original = entity
        do {
            return try writing { transaction, binding in
                entity = original
                return try upsert(&entity, by: property.index, in: transaction, binding: binding)
            }
        } catch {
            entity = original
            throw error
        }
    }

    /// Upserts every entity by `property` in one transaction: on any error (an ambiguous
    /// key, a unique violation) nothing of the batch is stored and the values stay as they
    /// were.
    ///
    /// ```swift
    /// try contacts.upsert(&downloaded, by: Contact.externalId)
    /// ```
    public func upsert<Value>(_ entities: inout [E], by property: Property<E, Value>) throws {
        let originals = entities
        do {
            try writing { transaction, binding in
                entities = originals
                for index in entities.indices {
                    try upsert(&entities[index], by: property.index, in: transaction, binding: binding)
                }
            }
        } catch {
            entities = originals
            throw error
        }
    }

    @discardableResult
    private func upsert(_ entity: inout E, by position: Int, in transaction: Transaction, binding: EntityBinding) throws -> Id {
        guard let index = binding.indexes.first(where: { $0.position == position }) else {
            let schema = E._cofferSchema
            throw CofferError.invalidUpsertKey(entity: schema.name, property: schema.properties[position].name, problem: .notIndexed)
        }
        var copy = entity
        entity.id = try transaction.upsertTarget(by: index, binding: binding) { writer, _ in E._cofferEncode(&copy, to: &writer) } ?? 0
        return try put(&entity, in: transaction, binding: binding)
    }
}
