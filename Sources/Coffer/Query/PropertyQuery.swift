extension Query {
    /// A query over one property's values of the matching objects (ordering is ignored).
    ///
    /// ```swift
    /// let ages = query.property(Person.age)
    /// try ages.max(); try ages.average(); try ages.distinct().find()
    /// ```
    public func property<Value: RecordValue & Hashable>(_ property: Property<E, Value>) -> PropertyQuery<E, Value> {
        PropertyQuery(query: self, position: property.index)
    }

    /// A query over an optional property's non-nil values.
    ///
    /// ```swift
    /// let birthdays = query.property(Person.birthday)   // PropertyQuery<Person, Date>
    /// ```
    public func property<Value: RecordValue & Hashable>(_ property: Property<E, Value?>) -> PropertyQuery<E, Value> {
        PropertyQuery(query: self, position: property.index)
    }
}

/// Values of one property over a query's matches, read from the records without decoding
/// objects. nil values are left out everywhere.
///
/// ```swift
/// let ages = try people.query().build().property(Person.age)
/// try ages.distinct().find()   // [25, 30, 30, 40, 40] -> [25, 30, 40]
/// ```
public struct PropertyQuery<E: Entity, Value: RecordValue & Hashable>: Sendable {
    let query: Query<E>
    let position: Int
    var isDistinct = false
    var distinctCaseSensitive = true

    /// Only distinct values (first occurrences, in id order).
    ///
    /// ```swift
    /// try ages.distinct().find()
    /// ```
    public func distinct() -> PropertyQuery {
        var copy = self
        copy.isDistinct = true
        return copy
    }

    /// Only distinct values; strings compared with or without case.
    ///
    /// ```swift
    /// try query.property(Person.firstName).distinct(caseSensitive: false).find()
    /// ```
    public func distinct(caseSensitive: Bool) -> PropertyQuery {
        var copy = distinct()
        copy.distinctCaseSensitive = caseSensitive
        return copy
    }

    /// The non-nil values of the matches, in id order (distinct if asked).
    ///
    /// ```swift
    /// let ages: [Int] = try ages.find()
    /// ```
    public func find() throws -> [Value] {
        try query.box.reading(empty: []) { transaction, binding in
            let matches = try query.matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false)
            let property = binding.schema.properties[position]
            let storedId = binding.storedIds[position]
            var values: [Value] = []
            values.reserveCapacity(matches.count)
            for match in matches {
                if property.flags.contains(.id) {
                    if let id = match.id as? Value { values.append(id) }
                    continue
                }
                guard let field = try RecordFields(bytes: match.record, entity: binding.schema.name, id: match.id).field(storedId) else { continue }
                let reader = RecordReader(field: field, position: position, layout: binding, id: match.id)
                guard let value = Value.cofferRead(from: reader) else { throw reader.mismatch(String(describing: Value.self)) }
                values.append(value)
            }
            guard isDistinct else { return values }
            var seen = Set<AnyHashable>()
            return values.filter { value in
                if !distinctCaseSensitive, let text = value as? String {
                    return seen.insert(AnyHashable(CaseFolding.fold(text))).inserted
                }
                return seen.insert(AnyHashable(value)).inserted
            }
        }
    }

    /// The number of non-nil values (of distinct ones, if asked).
    ///
    /// ```swift
    /// try ages.count()
    /// ```
    public func count() throws -> Int { try find().count }

    /// The one value, or nil when there is none.
    ///
    /// ```swift
    /// try query.property(Person.country).distinct().findUnique()
    /// ```
    ///
    /// - Throws: ``CofferError/nonUniqueResult(entity:count:)`` when there are several.
    public func findUnique() throws -> Value? {
        let values = try find()
        guard values.count <= 1 else { throw CofferError.nonUniqueResult(entity: E._cofferSchema.name, count: values.count) }
        return values.first
    }
}

extension PropertyQuery where Value: Comparable {
    /// The smallest value, or nil when nothing matches.
    ///
    /// ```swift
    /// try ages.min()
    /// ```
    public func min() throws -> Value? { try find().min() }

    /// The largest value, or nil when nothing matches.
    ///
    /// ```swift
    /// try ages.max()
    /// ```
    public func max() throws -> Value? { try find().max() }
}

extension PropertyQuery where Value: BinaryInteger {
    /// The sum as an Int (0 when nothing matches).
    ///
    /// ```swift
    /// let total: Int = try ages.sum()
    /// ```
    ///
    /// - Throws: ``CofferError/limitReached(_:)`` (`.sum`) when the sum overflows Int.
    public func sum() throws -> Int {
        var total = 0
        for value in try find() {
            guard let next = Int(exactly: value) else { throw overflow() }
            let (result, overflowed) = total.addingReportingOverflow(next)
            if overflowed { throw overflow() }
            total = result
        }
        return total
    }

    /// The mean as a Double, or nil when nothing matches.
    ///
    /// ```swift
    /// let mean: Double? = try ages.average()
    /// ```
    public func average() throws -> Double? {
        let values = try find()
        guard !values.isEmpty else { return nil }
        return values.reduce(0.0) { $0 + Double($1) } / Double(values.count)
    }

    private func overflow() -> CofferError {
        .limitReached(.sum(entity: E._cofferSchema.name, property: E._cofferSchema.properties[position].name))
    }
}

extension PropertyQuery where Value: BinaryFloatingPoint {
    /// The sum as a Double (0 when nothing matches).
    ///
    /// ```swift
    /// let total: Double = try ratings.sum()
    /// ```
    public func sum() throws -> Double {
        try find().reduce(0.0) { $0 + Double($1) }
    }

    /// The mean as a Double, or nil when nothing matches.
    ///
    /// ```swift
    /// try ratings.average()
    /// ```
    public func average() throws -> Double? {
        let values = try find()   // one snapshot for the sum and the count
        guard !values.isEmpty else { return nil }
        return values.reduce(0.0) { $0 + Double($1) } / Double(values.count)
    }
}
