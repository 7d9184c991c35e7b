extension Query {
    /// The matches grouped by a property's value, for typed aggregates per group: the DSL's
    /// `GROUP BY` (ordering is ignored).
    ///
    /// ```swift
    /// let perCity = try people.query { Person.age >= 18 }.build().grouped(by: Person.city)
    /// for (city, count) in try perCity.count() { print(city, count) }
    /// let ages = try perCity.average(Person.age)     // [(key: "Oslo", average: 41.5), ...]
    /// ```
    public func grouped<Key: RecordValue & Hashable>(by property: Property<E, Key>) -> GroupedQuery<E, Key> {
        GroupedQuery(query: self, keyPosition: property.index, keyPath: property.keyPath) { reader, _ in
            // No field: a record from before the property existed, which reads as its default.
            guard let reader else { return nil }
            guard let key = Key.cofferRead(from: reader) else { throw reader.mismatch(String(describing: Key.self)) }
            return key
        }
    }

    /// The matches grouped by an optional property's value; objects without one form the
    /// `nil` group.
    ///
    /// ```swift
    /// let perManager = try query.grouped(by: Employee.managerName).count()   // [(key: String?, count: Int)]
    /// ```
    public func grouped<Key: RecordValue & Hashable>(by property: Property<E, Key?>) -> GroupedQuery<E, Key?> {
        GroupedQuery(query: self, keyPosition: property.index, keyPath: property.keyPath) { reader, hasDefault in
            // No field: nil, or the default of a property added with one.
            guard let reader else { return hasDefault ? nil : .some(nil) }
            guard let key = Key.cofferRead(from: reader) else { throw reader.mismatch(String(describing: Key.self)) }
            return key
        }
    }
}

/// A query's matches grouped by one property's value, with typed aggregates per group.
/// Values are read from the records without decoding objects; nil values are left out of
/// every aggregate (a group whose values are all nil has a nil minimum, maximum and
/// average, and a sum of 0). Groups come in the order their first objects appear (id order);
/// NaN keys form one group. An object stored before the key property existed is grouped by
/// the value it reads as (its declared default).
///
/// ```swift
/// let byDepartment = try employees.query().build().grouped(by: Employee.department)
/// let payroll = try byDepartment.sum(Employee.salary)    // [(key: "Sales", sum: 200), ...]
/// ```
public struct GroupedQuery<E: Entity, Key: Hashable>: Sendable {
    let query: Query<E>
    let keyPosition: Int
    let keyPath: KeyPath<E, Key> & Sendable
    /// Reads a match's key from its field (nil: the record has none), given whether the
    /// property has a default; nil when the key is the decoded object's (the default an
    /// object stored before the property existed reads as).
    let readKey: @Sendable (RecordReader?, Bool) throws -> Key?

    /// The number of matches in each group.
    ///
    /// ```swift
    /// for (city, count) in try query.grouped(by: Person.city).count() { print("\(city): \(count)") }
    /// ```
    public func count() throws -> [(key: Key, count: Int)] {
        try groups(0, value: nil) { count, _ in count += 1 }.map { ($0.key, $0.state) }
    }

    /// The sum of an integer property in each group, as an Int.
    ///
    /// ```swift
    /// let payroll = try byDepartment.sum(Employee.salary)
    /// ```
    ///
    /// - Throws: ``CofferError/limitReached(_:)`` (`.sum`) when a group's sum overflows Int.
    public func sum<V: RecordValue & BinaryInteger>(_ property: Property<E, V>) throws -> [(key: Key, sum: Int)] {
        try integerSum(property.index, V.self)
    }

    /// The sum of an optional integer property's non-nil values in each group.
    ///
    /// ```swift
    /// let bonuses = try byDepartment.sum(Employee.bonusPoints)
    /// ```
    public func sum<V: RecordValue & BinaryInteger>(_ property: Property<E, V?>) throws -> [(key: Key, sum: Int)] {
        try integerSum(property.index, V.self)
    }

    /// The sum of a floating-point property in each group, as a Double.
    ///
    /// ```swift
    /// let spent = try orders.grouped(by: Order.customerName).sum(Order.total)
    /// ```
    public func sum<V: RecordValue & BinaryFloatingPoint>(_ property: Property<E, V>) throws -> [(key: Key, sum: Double)] {
        try realSum(property.index, V.self)
    }

    /// The sum of an optional floating-point property's non-nil values in each group.
    ///
    /// ```swift
    /// let tips = try orders.grouped(by: Order.customerName).sum(Order.tip)
    /// ```
    public func sum<V: RecordValue & BinaryFloatingPoint>(_ property: Property<E, V?>) throws -> [(key: Key, sum: Double)] {
        try realSum(property.index, V.self)
    }

    /// The mean of an integer property in each group (nil for a group without values).
    ///
    /// ```swift
    /// let ages = try query.grouped(by: Person.city).average(Person.age)
    /// ```
    public func average<V: RecordValue & BinaryInteger>(_ property: Property<E, V>) throws -> [(key: Key, average: Double?)] {
        try mean(property.index) { (reader: RecordReader) in V.cofferRead(from: reader).map(Double.init) }
    }

    /// The mean of an optional integer property's non-nil values in each group.
    ///
    /// ```swift
    /// let grades = try query.grouped(by: Person.city).average(Person.grade)
    /// ```
    public func average<V: RecordValue & BinaryInteger>(_ property: Property<E, V?>) throws -> [(key: Key, average: Double?)] {
        try mean(property.index) { (reader: RecordReader) in V.cofferRead(from: reader).map(Double.init) }
    }

    /// The mean of a floating-point property in each group.
    ///
    /// ```swift
    /// let scores = try query.grouped(by: Player.team).average(Player.score)
    /// ```
    public func average<V: RecordValue & BinaryFloatingPoint>(_ property: Property<E, V>) throws -> [(key: Key, average: Double?)] {
        try mean(property.index) { (reader: RecordReader) in V.cofferRead(from: reader).map(Double.init) }
    }

    /// The mean of an optional floating-point property's non-nil values in each group.
    ///
    /// ```swift
    /// let ratings = try query.grouped(by: Film.genre).average(Film.rating)
    /// ```
    public func average<V: RecordValue & BinaryFloatingPoint>(_ property: Property<E, V?>) throws -> [(key: Key, average: Double?)] {
        try mean(property.index) { (reader: RecordReader) in V.cofferRead(from: reader).map(Double.init) }
    }

    /// The smallest value of a property in each group.
    ///
    /// ```swift
    /// let youngest = try query.grouped(by: Person.city).min(Person.age)
    /// ```
    public func min<V: RecordValue & Comparable>(_ property: Property<E, V>) throws -> [(key: Key, min: V?)] {
        try extreme(property.index, V.self, keep: <).map { ($0.key, $0.state) }
    }

    /// The smallest non-nil value of an optional property in each group.
    ///
    /// ```swift
    /// let firstHired = try query.grouped(by: Employee.team).min(Employee.hired)
    /// ```
    public func min<V: RecordValue & Comparable>(_ property: Property<E, V?>) throws -> [(key: Key, min: V?)] {
        try extreme(property.index, V.self, keep: <).map { ($0.key, $0.state) }
    }

    /// The largest value of a property in each group.
    ///
    /// ```swift
    /// let oldest = try query.grouped(by: Person.city).max(Person.age)
    /// ```
    public func max<V: RecordValue & Comparable>(_ property: Property<E, V>) throws -> [(key: Key, max: V?)] {
        try extreme(property.index, V.self, keep: >).map { ($0.key, $0.state) }
    }

    /// The largest non-nil value of an optional property in each group.
    ///
    /// ```swift
    /// let lastSeen = try query.grouped(by: Device.owner).max(Device.lastSeen)
    /// ```
    public func max<V: RecordValue & Comparable>(_ property: Property<E, V?>) throws -> [(key: Key, max: V?)] {
        try extreme(property.index, V.self, keep: >).map { ($0.key, $0.state) }
    }

    // MARK: - Running

    private func integerSum<V: RecordValue & BinaryInteger>(_ position: Int, _ type: V.Type) throws -> [(key: Key, sum: Int)] {
        let overflow = CofferError.limitReached(.sum(entity: E._cofferSchema.name, property: E._cofferSchema.properties[position].name))
        return try groups(0, value: position) { sum, reader in
            guard let reader else { return }
            guard let value = V.cofferRead(from: reader) else { throw reader.mismatch(String(describing: V.self)) }
            guard let addend = Int(exactly: value) else { throw overflow }
            let (next, overflowed) = sum.addingReportingOverflow(addend)
            if overflowed { throw overflow }
            sum = next
        }.map { ($0.key, $0.state) }
    }

    private func realSum<V: RecordValue & BinaryFloatingPoint>(_ position: Int, _ type: V.Type) throws -> [(key: Key, sum: Double)] {
        try groups(0.0, value: position) { sum, reader in
            guard let reader else { return }
            guard let value = V.cofferRead(from: reader) else { throw reader.mismatch(String(describing: V.self)) }
            sum += Double(value)
        }.map { ($0.key, $0.state) }
    }

    private func mean(_ position: Int, _ read: @escaping (RecordReader) -> Double?) throws -> [(key: Key, average: Double?)] {
        try groups((sum: 0.0, count: 0), value: position) { state, reader in
            guard let reader else { return }
            guard let value = read(reader) else { throw reader.mismatch("a number") }
            state.sum += value
            state.count += 1
        }.map { ($0.key, $0.state.count > 0 ? $0.state.sum / Double($0.state.count) : nil) }
    }

    private func extreme<V: RecordValue & Comparable>(_ position: Int, _ type: V.Type, keep: @escaping (V, V) -> Bool) throws -> [(key: Key, state: V?)] {
        try groups(V?.none, value: position) { best, reader in
            guard let reader else { return }
            guard let value = V.cofferRead(from: reader) else { throw reader.mismatch(String(describing: V.self)) }
            if let current = best, !keep(value, current) { return }
            best = value
        }
    }

    /// Folds each match's value at `value` (nil: none read) into its group's state, groups
    /// in the order their first matches come (id order).
    private func groups<State>(_ initial: State, value position: Int?,
                               _ add: (inout State, RecordReader?) throws -> Void) throws -> [(key: Key, state: State)] {
        try query.box.reading(empty: []) { transaction, binding in
            let schema = binding.schema
            if let position, schema.properties[position].flags.contains(.id) {
                throw CofferError.invalidQuery(entity: schema.name, property: schema.properties[position].name,
                                               reason: "the id is not a value to aggregate; count the groups instead")
            }
            let matches = try query.matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false)
            let keyProperty = schema.properties[keyPosition]
            var index: [Key: Int] = [:]
            // NaN is never equal to itself, so a dictionary would give each its own group.
            var nanGroup: Int?
            var groups: [(key: Key, state: State)] = []
            // A field's reader, nil when the record has none (the id is not a field).
            func reader(_ fields: RecordFields, _ position: Int, _ id: Id) throws -> RecordReader? {
                try fields.field(binding.storedIds[position]).map { RecordReader(field: $0, position: position, layout: binding, id: id) }
            }
            for match in matches {
                let fields = RecordFields(bytes: match.record, entity: schema.name, id: match.id)
                let key: Key
                if keyProperty.flags.contains(.id), let id = match.id as? Key {
                    key = id
                } else if let read = try readKey(try reader(fields, keyPosition, match.id), keyProperty.hasDefault) {
                    key = read
                } else {
                    guard let object = try query.box.get(match.id) else {
                        throw CofferError.damagedRecord(entity: schema.name, id: match.id, reason: "a query matched it, but it cannot be read")
                    }
                    key = object[keyPath: keyPath]
                }
                let at: Int
                if key != key, let known = nanGroup {
                    at = known
                } else if let known = index[key] {
                    at = known
                } else {
                    at = groups.count
                    if key != key { nanGroup = at } else { index[key] = at }
                    groups.append((key, initial))
                }
                try add(&groups[at].state, try position.flatMap { try reader(fields, $0, match.id) })
            }
            return groups
        }
    }
}
