extension CofferError {
    /// A fixed limit of the store or of a result that an operation would pass.
    ///
    /// ```swift
    /// catch CofferError.limitReached(.ids(let entity)) { print("\(entity) has no ids left") }
    /// ```
    public enum Limit: Sendable, Hashable {
        /// The entity handed out every id up to the explicit-id range; no insert can get one.
        ///
        /// ```swift
        /// catch CofferError.limitReached(.ids(let entity)) { ... }
        /// ```
        case ids(entity: String)

        /// The entity gave out all 65,534 property ids (properties added over its lifetime).
        ///
        /// ```swift
        /// catch CofferError.limitReached(.propertyIds(let entity)) { ... }
        /// ```
        case propertyIds(entity: String)

        /// `PropertyQuery.sum()` of `entity.property` does not fit an `Int`.
        ///
        /// ```swift
        /// catch CofferError.limitReached(.sum(let entity, let property)) { ... }
        /// ```
        case sum(entity: String, property: String)
    }
}
