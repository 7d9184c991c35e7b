extension Query {
    /// Changes the value of the condition on `property` (in this copy of the query).
    ///
    /// ```swift
    /// var q = try people.query { Person.age == 21 }.build()
    /// try q.setParameter(Person.age, to: 18)   // now Person.age == 18
    /// ```
    ///
    /// - Throws: ``CofferError/parameterNotFound(entity:parameter:)`` when no condition (or
    ///   more than one) uses the property; ``CofferError/parameterTypeMismatch(entity:parameter:expected:actual:)``
    ///   when that condition takes two values or a list.
    public mutating func setParameter<Value: QueryableValue>(_ property: Property<E, Value>, to value: Value) throws {
        // The look-up loop's shape: only the kept value changes (see `lookUpPosition`).
        if replaceLookUpValue(position: property.index, with: value._queryValue) { return }
        try set(.property(property.index), [value._queryValue], arity: .one, ofPropertyType: true)
    }

    /// Changes the element an array condition (`containsElement`) looks for.
    ///
    /// ```swift
    /// try q.setParameter(Person.tags, to: "swift")
    /// ```
    public mutating func setParameter<Value: ArrayQueryable>(_ property: Property<E, Value>, to element: Value.QueryElement) throws {
        try set(.property(property.index), [element._queryValue], arity: .one)
    }

    /// Changes both values of a two-value condition (`isBetween`, ranges).
    ///
    /// ```swift
    /// var r = try people.query { Person.age.isBetween(0, and: 99) }.build()
    /// try r.setParameters(Person.age, to: 10, and: 18)
    /// ```
    public mutating func setParameters<Value: QueryableValue>(_ property: Property<E, Value>, to first: Value, and second: Value) throws {
        try set(.property(property.index), [first._queryValue, second._queryValue], arity: .two, ofPropertyType: true)
    }

    /// Changes the list of an in-list condition (`isIn`, `isNotIn`, `∈ [...]`).
    ///
    /// ```swift
    /// try t.setParameters(Person.lastName, to: ["Jones", "Brown"])
    /// ```
    public mutating func setParameters<Value: QueryableValue>(_ property: Property<E, Value>, to values: [Value]) throws {
        try set(.property(property.index), values.map(\._queryValue), arity: .list, ofPropertyType: true)
    }

    /// Changes the value of the condition named `alias` with `.=`.
    ///
    /// ```swift
    /// var s = try people.query { "minAge" .= Person.age > 10 }.build()
    /// try s.setParameter("minAge", to: 30)
    /// try s.setParameter("minAge", to: "thirty")   // throws parameterTypeMismatch
    /// ```
    public mutating func setParameter(_ alias: String, to value: any QueryableValue) throws {
        try set(.alias(alias), [value._queryValue], arity: .one)
    }

    /// Changes both values of the two-value condition named `alias`.
    ///
    /// ```swift
    /// try s.setParameters("range", to: 1, and: 5)
    /// ```
    public mutating func setParameters(_ alias: String, to first: any QueryableValue, and second: any QueryableValue) throws {
        try set(.alias(alias), [first._queryValue, second._queryValue], arity: .two)
    }

    /// Changes the list of the in-list condition named `alias`.
    ///
    /// ```swift
    /// try s.setParameters("names", to: ["Ada", "Grace"])
    /// ```
    public mutating func setParameters(_ alias: String, to values: [any QueryableValue]) throws {
        try set(.alias(alias), values.map(\._queryValue), arity: .list)
    }

    private enum Target {
        case property(Int)
        case alias(String)

        func matches(_ leaf: ConditionLeaf) -> Bool {
            switch self {
            case .property(let position): return leaf.position == position
            case .alias(let alias): return leaf.alias == alias
            }
        }

        /// The parameter's name in an error.
        func name(in schema: EntitySchema) -> String {
            switch self {
            case .property(let position): return "\(schema.name).\(schema.properties[position].name)"
            case .alias(let alias): return alias
            }
        }
    }

    /// Replaces the values of the one leaf `target` names. The success path formats no
    /// names and builds no lists (a look-up loop calls this once per look-up): the parameter's
    /// name is spelled only for an error.
    ///
    /// `ofPropertyType`: the values have the property's own Swift type, so a comparison
    /// (`==`, `<`, ranges, lists) takes them without a check against the schema; operators
    /// that want another type (`count`, `modulo`, text matches) are still checked.
    private mutating func set(_ target: Target, _ values: [QueryValue], arity: ConditionOp.Arity, ofPropertyType: Bool = false) throws {
        if ofPropertyType, case .leaf(var only)? = condition, case .property(let position) = target,
           only.position == position, only.path.isEmpty, only.op.arity == arity, only.op.takesValuesOfPropertyType {
            // The look-up loop's shape: one condition, replaced in place.
            condition = nil
            only.values = values
            condition = .leaf(only)
            return
        }
        let (found, count) = leaves(matching: target)
        try Self.check(values, arity: arity, for: found, count: count, target: target)
        replaceValues(matching: target, with: values)
    }

    /// The first leaf `target` names, and how many it names.
    private func leaves(matching target: Target) -> (first: ConditionLeaf?, count: Int) {
        var found: ConditionLeaf?
        var count = 0
        if case .leaf(let only)? = condition {
            // The common shape (one condition), without a walk.
            if target.matches(only) { found = only; count = 1 }
        } else {
            condition?.forEachLeaf { leaf in
                guard target.matches(leaf) else { return }
                if found == nil { found = leaf }
                count += 1
            }
        }
        return (found, count)
    }

    /// Throws unless `target` names exactly one leaf (`found`, of `count`) whose operator
    /// takes `values`: as many as it has, each of a type it compares with.
    private static func check(_ values: [QueryValue], arity: ConditionOp.Arity, for found: ConditionLeaf?, count: Int,
                              target: Target) throws {
        let schema = E._cofferSchema
        guard let leaf = found else {
            throw CofferError.parameterNotFound(entity: schema.name, parameter: target.name(in: schema))
        }
        guard count == 1 else {
            throw CofferError.parameterNotFound(
                entity: schema.name, parameter: "\(target.name(in: schema)) (used by \(count) conditions; name each with an alias)")
        }
        guard leaf.op.arity == arity else {
            throw CofferError.parameterTypeMismatch(entity: schema.name, parameter: target.name(in: schema),
                                                    expected: Self.describe(leaf.op.arity), actual: Self.describe(arity))
        }
        let property = schema.properties[leaf.position]
        for value in values {
            guard let expected = Self.mismatch(value, for: leaf, property: property) else { continue }
            throw CofferError.parameterTypeMismatch(entity: schema.name, parameter: target.name(in: schema),
                                                    expected: expected, actual: "\(value.familyName) \(value)")
        }
    }

    /// Gives the leaves `target` names the new `values`.
    private mutating func replaceValues(matching target: Target, with values: [QueryValue]) {
        if case .leaf(var only)? = condition {
            // The common shape (one condition): change it in place.
            condition = nil
            only.values = values
            condition = .leaf(only)
            return
        }
        condition = condition?.mapLeaves { candidate in
            guard target.matches(candidate) else { return candidate }
            var changed = candidate
            changed.values = values
            return changed
        }
    }

    private static func describe(_ arity: ConditionOp.Arity) -> String {
        switch arity {
        case .none: return "no value (isNil/isNotNil)"
        case .one: return "one value (setParameter)"
        case .two: return "two values (setParameters(_:to:and:))"
        case .list: return "a list (setParameters(_:to: [...]))"
        }
    }

    /// What the leaf expects, when `value` does not fit it; nil when it fits.
    private static func mismatch(_ value: QueryValue, for leaf: ConditionLeaf, property: PropertySchema) -> String? {
        switch leaf.op {
        case .count, .modulo:
            if case .signed = value { return nil }
            return "an Int"
        case .startsWith, .endsWith, .contains, .like:
            if case .string = value { return nil }
            return "a String"
        default: break
        }
        let family = property.type.indexKeyFamily
        switch (family, value) {
        case (.signedInteger, .signed), (.signedInteger, .unsigned), (.unsignedInteger, .unsigned), (.unsignedInteger, .signed),
             (.floatingPoint, .double), (.floatingPoint, .signed), (.floatingPoint, .unsigned),
             (.bool, .bool), (.string, .string), (.uuid, .uuid):
            return nil
        case (.other(.stringArray), .string), (.other(.intArray), .signed), (.other(.doubleArray), .double), (.other(.doubleArray), .signed):
            return nil
        case (_, .null) where property.isOptional:
            return nil
        default:
            return "a value of \(property.swiftType)"
        }
    }
}
