extension CofferError {
    /// Why a property cannot serve as an upsert key (``CofferError/invalidUpsertKey(entity:property:problem:)``).
    ///
    /// ```swift
    /// catch CofferError.invalidUpsertKey(_, let property, .missingValue) { print("\(property) is nil") }
    /// ```
    public enum UpsertKeyProblem: Sendable, Hashable {
        /// The property has no `@Index` or `@Unique`: an upsert looks its key up in an index.
        ///
        /// ```swift
        /// catch CofferError.invalidUpsertKey(_, _, .notIndexed) { ... }
        /// ```
        case notIndexed

        /// The object to upsert holds nil in the key property.
        ///
        /// ```swift
        /// catch CofferError.invalidUpsertKey(_, _, .missingValue) { ... }
        /// ```
        case missingValue

        /// The property is an array: its index finds elements, not whole values.
        ///
        /// ```swift
        /// catch CofferError.invalidUpsertKey(_, _, .array) { ... }
        /// ```
        case array
    }
}
