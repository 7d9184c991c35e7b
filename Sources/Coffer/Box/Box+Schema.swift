extension Box {
    /// Drops the indexes (`@Index`, `@Unique`, `@FullText`) the store keeps on `property`,
    /// which this build no longer declares.
    ///
    /// Every build of an app keeps and maintains the indexes the store's catalog lists,
    /// including those only another build declares (an older app version, an extension):
    /// removing the annotation from the code does not drop an index, because a build that
    /// still declares it would rebuild it on its next write. Call this once no build in use
    /// declares it. Queries on the property then scan; a build that declares the index
    /// again builds it on its first write.
    ///
    /// ```swift
    /// // Person.nickname lost its @Index in this version:
    /// try people.dropIndex(on: Person.nickname)
    /// ```
    ///
    /// Does nothing when the store holds no index on the property.
    ///
    /// - Throws: ``CofferError/misuse(_:)`` (`.indexStillDeclared`) when this build declares `@Index`,
    ///   `@Unique` or `@FullText` on `property` (remove the annotation first).
    public func dropIndex<Value>(on property: Property<E, Value>) throws {
        try store.performWrite { transaction in
            try store.dropIndex(of: E._cofferSchema, position: property.index, in: transaction)
        }
    }
}
