import Foundation

/// The direction of one sort field of a selector query.
///
/// ```swift
/// let query = try people.query(selector: #"{"age": {"$gt": 12}}"#, sort: [("lastName", .ascending)]).build()
/// ```
public enum SortDirection: Sendable, Hashable {
    /// Smallest first.
    ///
    /// ```swift
    /// SortDirection.ascending
    /// ```
    case ascending
    /// Largest first.
    ///
    /// ```swift
    /// SortDirection.descending
    /// ```
    case descending
}

extension Box {
    /// A query from a Cloudant Query selector: the same builder the typed DSL gives, so
    /// indexes, ordering, `describe()`, projections and observation all apply.
    ///
    /// ```swift
    /// let query = try people.query(
    ///     selector: #"{"age": {"$gt": 12}, "$or": [{"firstName": "mike"}, {"tags": {"$size": 2}}]}"#,
    ///     sort: [("lastName", .ascending)], skip: 0, limit: 10
    /// ).build()
    /// let page = try query.find()
    /// ```
    ///
    /// Operators: `$eq $ne $lt $lte $gt $gte $in $nin $all $elemMatch $exists $size $mod
    /// $regex $not` on fields,
    /// `$and $or $nor $not $text` (with `$search`) around selectors, implicit `$and` and `$eq`.
    /// Field and sort names are stored names; `_id` is the id. `skip` and `limit` apply to
    /// `find()`, `findFirst()` and `findIds()` of the built query (`count()` counts every
    /// match); a `limit` of 0 means no limit, as in Cloudant. See the README's selector
    /// reference for the semantics on arrays, nil and types.
    ///
    /// - Throws: ``CofferError/invalidSelector(entity:path:reason:)`` naming the offending path and
    ///   operator for malformed JSON, unknown fields or operators, values of the wrong type,
    ///   `$mod` by zero, a negative `skip` or `limit`, or JSON nested deeper than 136 levels.
    public func query(selector: String, sort: [(String, SortDirection)] = [], skip: Int = 0, limit: Int? = nil) throws -> QueryBuilder<E> {
        try query(selectorBytes: Array(selector.utf8), sort: sort, skip: skip, limit: limit)
    }

    /// A query from a selector in JSON `Data` (for example a request body or a file).
    ///
    /// ```swift
    /// let body = Data(#"{"name": {"$in": ["Ada", "Bob"]}}"#.utf8)
    /// let matches = try people.query(selector: body).build().find()
    /// ```
    ///
    /// - Throws: ``CofferError/invalidSelector(entity:path:reason:)``, as the `String` variant does.
    public func query(selector: Data, sort: [(String, SortDirection)] = [], skip: Int = 0, limit: Int? = nil) throws -> QueryBuilder<E> {
        try query(selectorBytes: Array(selector), sort: sort, skip: skip, limit: limit)
    }

    private func query(selectorBytes: [UInt8], sort: [(String, SortDirection)], skip: Int, limit: Int?) throws -> QueryBuilder<E> {
        let compiler = SelectorCompiler.of(E.self, store: store)
        let document = try compiler.parse(selectorBytes)
        let limit = try compiler.checkPaging(skip: skip, limit: limit)
        var builder = QueryBuilder(box: self, condition: try compiler.condition(document))
        builder.orders = try compiler.orders(sort)
        builder.skip = skip
        builder.limit = limit
        return builder
    }
}
