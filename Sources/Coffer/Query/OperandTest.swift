/// The per-record test of a condition leaf on the operand its field holds, one builder per
/// family of operators. A builder runs once per compiled query; the closure it returns runs
/// on every record a scan reads, and captures only the prepared values it compares with.
enum OperandTest {
    typealias Body = (FieldOperand?) -> Bool

    /// The test for `leaf`'s operator with its prepared `values`. Throws when an operand does
    /// not fit the operator: such a condition is refused, never "matches all".
    static func make(_ leaf: ConditionLeaf, values: [PreparedValue], entity: String, property: PropertySchema) throws -> Body {
        let sensitive = leaf.caseSensitive
        func unusable(_ what: String) -> CofferError {
            CofferError.invalidQuery(entity: entity, property: property.name, reason: what)
        }
        switch leaf.op {
        case .compare(let comparison):
            return compare(comparison, values[0], caseSensitive: sensitive)
        case .between(let lowerInclusive, let upperInclusive):
            return between(values[0], values[1], lowerInclusive: lowerInclusive, upperInclusive: upperInclusive, caseSensitive: sensitive)
        case .inList:
            return membership(leaf.values, prepared: values, negate: false, caseSensitive: sensitive)
        case .notInList:
            return membership(leaf.values, prepared: values, negate: true, caseSensitive: sensitive)
        case .isNil:
            return { $0 == nil }
        case .isNotNil:
            return { $0 != nil }
        case .startsWith, .endsWith, .contains:
            return substring(leaf.op, values[0], caseSensitive: sensitive)
        case .elementMatch(let comparisons):
            return elementMatch(comparisons, values)
        case .regex(let pattern):
            return regex(pattern)
        case .like:
            guard case .string(let prepared) = values[0] else { throw unusable("like needs a string pattern") }
            return like(prepared, caseSensitive: sensitive)
        case .equalWithTolerance(let tolerance):
            guard case .number(.double(let target)) = values[0] else { throw unusable("isEqual(to:tolerance:) needs a floating-point value") }
            return near(target, tolerance: tolerance)
        case .containsElement:
            return containsElement(values[0])
        case .count(let comparison):
            guard case .number(.signed(let wanted)) = values[0] else { throw unusable("an element count needs an integer") }
            return elementCount(comparison, wanted)
        case .modulo(let divisor, let comparison):
            guard case .number(.signed(let wanted)) = values[0] else { throw unusable("modulo needs an integer remainder") }
            guard divisor != 0 else { throw unusable("modulo by zero") }
            return modulo(divisor, comparison, wanted)
        }
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`; nil (and a value that cannot be compared) only
    /// satisfies `!=`.
    private static func compare(_ comparison: Comparison, _ value: PreparedValue, caseSensitive sensitive: Bool) -> Body {
        { operand in
            if case .list(let items)? = operand {
                // Values inside a document array: one element must hold (`!=`: none equals).
                if comparison == .notEqual { return !items.contains { $0.order(value, caseSensitive: sensitive) == 0 } }
                return items.contains { item in item.order(value, caseSensitive: sensitive).map(comparison.holds) ?? false }
            }
            guard let operand, let order = operand.order(value, caseSensitive: sensitive) else {
                return comparison == .notEqual
            }
            return comparison.holds(order)
        }
    }

    /// Between two bounds, each inclusive or not.
    private static func between(_ low: PreparedValue, _ high: PreparedValue, lowerInclusive: Bool, upperInclusive: Bool,
                                caseSensitive sensitive: Bool) -> Body {
        var low = low, high = high
        // Bounds in any order: `isBetween(18, and: 10)` means 10...18.
        if let order = PreparedValue.order(low, high), order > 0 { swap(&low, &high) }
        let (lo, hi) = (low, high)
        return { operand in
            guard let operand,
                  let lower = operand.order(lo, caseSensitive: sensitive),
                  let upper = operand.order(hi, caseSensitive: sensitive) else { return false }
            return (lowerInclusive ? lower >= 0 : lower > 0) && (upperInclusive ? upper <= 0 : upper < 0)
        }
    }

    /// `in` (or `notIn` when `negate`): equal to one of `values`.
    private static func membership(_ raw: [QueryValue], prepared values: [PreparedValue], negate: Bool,
                                   caseSensitive sensitive: Bool) -> Body {
        // Long lists of non-negative integers (the ids link steps and full-text matches
        // resolve to) are looked up in a hash set: a linear search per record made such
        // queries quadratic. Integer operands compare equal exactly when equal as numbers.
        let integers = raw.compactMap { value -> UInt64? in
            switch value {
            case .unsigned(let number): return number
            case .signed(let number) where number >= 0: return UInt64(number)
            default: return nil
            }
        }
        if integers.count > 8, integers.count == raw.count {
            let members = Set(integers)
            return { operand in
                let found: Bool
                switch operand {
                case .number(.unsigned(let number))?: found = members.contains(number)
                case .number(.signed(let number))?: found = number >= 0 && members.contains(UInt64(number))
                case nil: found = false
                case let operand?: found = values.contains { operand.order($0, caseSensitive: sensitive) == 0 }
                }
                return found != negate
            }
        }
        return { operand in
            let found = operand.map { operand in values.contains { operand.order($0, caseSensitive: sensitive) == 0 } } ?? false
            return found != negate
        }
    }

    /// `startsWith`, `endsWith` and `contains` on strings: canonical bytes when case
    /// matters, folded scalars when it does not.
    private static func substring(_ op: ConditionOp, _ needle: PreparedValue, caseSensitive sensitive: Bool) -> Body {
        { operand in
            guard case .string(let bytes)? = operand, case .string(let prepared) = needle else { return false }
            if sensitive {
                let pattern = prepared.bytes
                return CanonicalString.withCanonicalUTF8(bytes) { bytes in
                    switch op {
                    case .startsWith: return bytes.starts(with: pattern)
                    case .endsWith: return bytes.count >= pattern.count && bytes.suffix(pattern.count).elementsEqual(pattern)
                    default: return pattern.isEmpty || ByteSearch.contains(bytes, pattern)
                    }
                }
            }
            let text = CaseFolding.fold(String(decoding: bytes, as: UTF8.self))
            let folded = prepared.folded
            switch op {
            case .startsWith: return text.unicodeScalars.starts(with: folded.unicodeScalars)
            case .endsWith: return text.unicodeScalars.reversed().starts(with: folded.unicodeScalars.reversed())
            default: return folded.isEmpty || text.contains(folded)
            }
        }
    }

    /// One element satisfies every comparison, each with the value at its place.
    private static func elementMatch(_ comparisons: [Comparison], _ wanted: [PreparedValue]) -> Body {
        { operand in
            guard let operand else { return false }
            return operand.elements.contains { element in
                zip(comparisons, wanted).allSatisfy { comparison, value in
                    element.order(value, caseSensitive: true).map(comparison.holds) ?? (comparison == .notEqual)
                }
            }
        }
    }

    /// A string with a match of `pattern` anywhere.
    private static func regex(_ pattern: RegexPattern) -> Body {
        { operand in
            guard case .string(let bytes)? = operand else { return false }
            return pattern.matches(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// A string matching a `like` pattern, canonical or folded as the leaf's case rule says.
    private static func like(_ prepared: PreparedString, caseSensitive sensitive: Bool) -> Body {
        let pattern = LikePattern(sensitive ? prepared.raw : prepared.folded)
        return { operand in
            guard case .string(let bytes)? = operand else { return false }
            let text = String(decoding: bytes, as: UTF8.self)
            return pattern.matches(sensitive ? CanonicalString.string(text) : CaseFolding.fold(text))
        }
    }

    /// A number within `tolerance` of `target`.
    private static func near(_ target: Double, tolerance: Double) -> Body {
        { operand in
            guard case .number(let number)? = operand else { return false }
            return abs(number.doubleValue - target) <= tolerance
        }
    }

    /// An array with an element equal to `element`.
    private static func containsElement(_ element: PreparedValue) -> Body {
        { operand in
            guard let operand else { return false }
            return operand.elements.contains { $0.order(element, caseSensitive: true) == 0 }
        }
    }

    /// An array whose element count compares with `wanted`.
    private static func elementCount(_ comparison: Comparison, _ wanted: Int64) -> Body {
        { operand in
            // nil counts 0 (the typed `count`); a value that is no array (a scalar at a
            // document path) has no count.
            if let operand, !operand.isArray { return false }
            let count = Int64(operand?.elementCount ?? 0)
            return comparison.holds(count < wanted ? -1 : (count == wanted ? 0 : 1))
        }
    }

    /// A number whose remainder by `divisor` compares with `wanted`.
    private static func modulo(_ divisor: Int64, _ comparison: Comparison, _ wanted: Int64) -> Body {
        { operand in
            guard case .number(let number)? = operand,
                  let remainder = truncatingRemainder(number, dividingBy: divisor) else { return false }
            return comparison.holds(remainder == wanted ? 0 : 1)
        }
    }

    /// Truncating remainder, as Swift's %; computed on magnitudes so that Int64.min % -1
    /// (which traps in Swift) gives 0. Nil for a double with no integer.
    @inline(__always)
    private static func truncatingRemainder(_ number: Number, dividingBy divisor: Int64) -> Int64? {
        switch number {
        case .signed(let value):
            let magnitude = Int64(truncatingIfNeeded: value.magnitude % divisor.magnitude)
            return value < 0 ? -magnitude : magnitude
        case .unsigned(let value):
            return Int64(truncatingIfNeeded: value % divisor.magnitude)
        case .double(let value):
            // Truncated to an integer first (Cloudant's rule); NaN, infinities and values
            // beyond Int64 have no integer and match nothing.
            guard let integer = Int64(exactly: value.rounded(.towardZero)) else { return nil }
            let magnitude = Int64(truncatingIfNeeded: integer.magnitude % divisor.magnitude)
            return integer < 0 ? -magnitude : magnitude
        }
    }
}
