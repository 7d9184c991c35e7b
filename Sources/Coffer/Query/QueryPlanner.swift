import CLMDB

/// How a query finds its candidates. Every candidate is checked against the whole condition
/// on its record, so an index only has to return a superset — except under an exact plan
/// (`isExact`: an id list, or one whole value of an index whose keys decide equality, that is
/// the whole condition), whose candidates match by definition.
struct QueryPlan {
    enum Source {
        /// Every record of the table, in id order.
        case scan
        /// Look-ups of these ids in the table.
        case ids([Id])
        /// A range of the table's keys (inclusive bounds).
        case idRange(lower: Id, upper: Id)
        /// Entries of one index: whole-key prefixes or value ranges.
        case index(IndexBinding, [IndexSpan])
        /// The whole index in value order, so results need no sort.
        case indexOrder(IndexBinding)
    }

    var source: Source
    /// The condition leaf the source was chosen for (rendered only by `describe()`).
    var leaf: ConditionLeaf? = nil
    /// Whether the source yields exactly the stored objects that match the whole condition,
    /// so candidates need no check (see `QueryPlanner.isExact`).
    var isExact = false
    /// How selective the source is among a conjunction's candidates: lower is better.
    var score = 0
}

/// A part of an index: entries whose value part starts with `prefix` (or equals it), or lies within
/// `lower...upper` (byte order of the encoded values).
enum IndexSpan {
    /// `exact`: the bytes are a whole value's key, so the entries are in id order.
    case prefix([UInt8], exact: Bool)
    case range(lower: [UInt8], upper: [UInt8]?)

    /// Whether the span is one whole value (its entries are in id order).
    var isWholeValue: Bool {
        if case .prefix(_, exact: true) = self { return true }
        return false
    }
}

enum QueryPlanner {
    static func plan(condition: ConditionNode?, orders: [QueryOrder], binding: EntityBinding, transaction: Transaction) -> QueryPlan {
        // No optional tuples and no list of leaves here: a parameterised look-up plans on
        // every call, and those went through the runtime's generic value witnesses.
        switch condition {
        case .leaf(let leaf)?:
            if var plan = plan(for: leaf, binding: binding, transaction: transaction) {
                plan.isExact = isExact(plan.source, for: leaf, binding: binding)
                return plan
            }
        case .and(let nodes)?:
            var best: QueryPlan?
            for case .leaf(let leaf) in nodes {
                guard let candidate = plan(for: leaf, binding: binding, transaction: transaction) else { continue }
                if best.map({ candidate.score < $0.score }) ?? true { best = candidate }
            }
            if best.map({ $0.score > boundedRangeScore }) ?? true,
               let bounded = boundedRange(nodes, binding: binding, transaction: transaction) {
                best = bounded
            }
            if let best { return best }
        default:
            break
        }
        // No condition can use an index: an index can still give the order.
        if orders.count == 1, let order = orders.first, order.flags.isDisjoint(with: [.descending, .nullsLast, .nullsZero, .unsigned]),
           let index = usableIndex(order.position, binding: binding, transaction: transaction),
           !index.isElementIndex, ![.string, .float, .double].contains(index.property.type) {
            return QueryPlan(source: .indexOrder(index))
        }
        return QueryPlan(source: .scan)
    }

    /// Whether `source` yields exactly the objects matching `leaf` when the leaf is the whole
    /// condition: an id list, or one whole value of an index whose keys decide equality the
    /// way the record check does (integers, Bools, UUIDs; case-sensitive strings whose key is
    /// not cut). Floating-point keys are rechecked (NaN and -0.0), so are cut strings.
    static func isExact(_ source: QueryPlan.Source, for leaf: ConditionLeaf, binding: EntityBinding) -> Bool {
        switch source {
        case .ids: return true
        case .index(let index, let spans):
            guard case .compare(.equal) = leaf.op, leaf.path.isEmpty, !index.isElementIndex, spans.count == 1,
                  case .prefix(let key, exact: true) = spans[0] else { return false }
            switch index.property.type.indexKeyFamily {
            case .signedInteger, .unsignedInteger, .bool, .uuid: return true
            case .string: return leaf.caseSensitive && !IndexKey.isTruncatedString(key[...])
            default: return false
            }
        default: return false
        }
    }

    static func usableIndex(_ position: Int, binding: EntityBinding, transaction: Transaction) -> IndexBinding? {
        binding.indexes.first { $0.position == position && transaction.snapshotId >= $0.createdInTransaction }
    }

    /// A range bounded on both sides scores between a list of values and an open range.
    static let boundedRangeScore = 4

    /// A lower and an upper bound of one indexed property in a conjunction (`age >= 30 &&
    /// age <= 34`, SQL's BETWEEN) as one range of its index, instead of the better of two
    /// open ranges that each hold most of the table. The span covers the bounds in either
    /// order and is never exact: every candidate is checked against the whole condition, so
    /// reversed bounds (an empty result) and strict bounds are answered by that check.
    private static func boundedRange(_ nodes: [ConditionNode], binding: EntityBinding, transaction: Transaction) -> QueryPlan? {
        // No list of leaves: a parameterised query plans on every call.
        for case .leaf(let lower) in nodes where lower.path.isEmpty && lower.values.count == 1 {
            guard let lowerInclusive = bound(lower.op, lower: true) else { continue }
            for case .leaf(let upper) in nodes where upper.position == lower.position && upper.path.isEmpty
                && upper.values.count == 1 && upper.caseSensitive == lower.caseSensitive {
                guard let upperInclusive = bound(upper.op, lower: false) else { continue }
                var between = lower
                between.op = .between(lowerInclusive: lowerInclusive, upperInclusive: upperInclusive)
                between.values = [lower.values[0], upper.values[0]]
                guard var plan = plan(for: between, binding: binding, transaction: transaction) else { continue }
                switch plan.source {
                case .index, .idRange: break
                default: continue
                }
                plan.score = boundedRangeScore
                plan.isExact = nodes.count == 2 && lowerInclusive && upperInclusive
                    && isExactRange(plan.source, from: lower.values[0], to: upper.values[0])
                return plan
            }
        }
        return nil
    }

    /// Whether the span of two inclusive bounds, `low` and `high`, is exactly what they accept
    /// when they are the whole condition: on a value index of integers (whose keys order as
    /// the numbers do, and hold nothing but the value), with `low`'s key not above `high`'s
    /// (reversed bounds accept nothing, but the span holds the values between them).
    private static func isExactRange(_ source: QueryPlan.Source, from low: QueryValue, to high: QueryValue) -> Bool {
        guard case .index(let index, let spans) = source, !index.isElementIndex, spans.count == 1 else { return false }
        switch index.property.type.indexKeyFamily {
        case .signedInteger, .unsignedInteger: break
        default: return false
        }
        guard let lowKey = IndexKey.encode(low, type: index.property.type),
              let highKey = IndexKey.encode(high, type: index.property.type) else { return false }
        return ByteSearch.order(lowKey, highKey) <= 0
    }

    /// Whether `op` is a lower (`lower`) or an upper bound, and then whether it includes its value.
    private static func bound(_ op: ConditionOp, lower: Bool) -> Bool? {
        switch op {
        case .compare(.greater): return lower ? false : nil
        case .compare(.greaterOrEqual): return lower ? true : nil
        case .compare(.less): return lower ? nil : false
        case .compare(.lessOrEqual): return lower ? nil : true
        default: return nil
        }
    }

    /// A plan for one leaf with its score (lower is more selective), or nil.
    private static func plan(for leaf: ConditionLeaf, binding: EntityBinding, transaction: Transaction) -> QueryPlan? {
        if binding.schema.properties[leaf.position].flags.contains(.id) { return idPlan(for: leaf) }
        guard let index = usableIndex(leaf.position, binding: binding, transaction: transaction) else { return nil }
        let type = binding.schema.properties[leaf.position].type
        if index.isElementIndex { return elementPlan(for: leaf, index: index, type: type) }
        return valuePlan(for: leaf, index: index, keys: ValueKeys(type: type))
    }

    /// A leaf on the id: look-ups of the ids, or a range of the table's keys.
    @inline(__always)
    private static func idPlan(for leaf: ConditionLeaf) -> QueryPlan? {
        let ids = leaf.values.compactMap(idValue)
        switch leaf.op {
        case .compare(.equal) where ids.count == 1: return QueryPlan(source: .ids(ids), leaf: leaf, score: 0)
        case .inList where ids.count == leaf.values.count: return QueryPlan(source: .ids(ids), leaf: leaf, score: 1)
        case .between where ids.count == 2:
            return QueryPlan(source: .idRange(lower: min(ids[0], ids[1]), upper: max(ids[0], ids[1])), leaf: leaf, score: 5)
        case .compare(.greater), .compare(.greaterOrEqual):
            guard let id = ids.first else { return nil }
            return QueryPlan(source: .idRange(lower: id, upper: .max), leaf: leaf, score: 5)
        case .compare(.less), .compare(.lessOrEqual):
            guard let id = ids.first else { return nil }
            return QueryPlan(source: .idRange(lower: 0, upper: id), leaf: leaf, score: 5)
        default: return nil
        }
    }

    /// A leaf on an array's element index: entries per element, so only "holds this
    /// element" can use them.
    @inline(__always)
    private static func elementPlan(for leaf: ConditionLeaf, index: IndexBinding, type: PropertyType) -> QueryPlan? {
        guard case .containsElement = leaf.op, let elementType = type.elementType,
              let value = leaf.values.first, let encoded = IndexKey.encode(value, type: elementType) else { return nil }
        if IndexKey.isZero(value, type: elementType) {
            // Both zeros' keys (see `ValueKeys`), rechecked on the records.
            guard let low = IndexKey.encode(.double(-0.0), type: elementType),
                  let high = IndexKey.encode(.double(0.0), type: elementType) else { return nil }
            return QueryPlan(source: .index(index, [.range(lower: low, upper: high)]), leaf: leaf, score: 1)
        }
        return QueryPlan(source: .index(index, [.prefix(encoded, exact: true)]), leaf: leaf, score: 1)
    }

    /// A leaf on a value index: whole values, nil, string prefixes or ranges. A string index
    /// holds case-sensitive keys, so only case-sensitive string conditions use it.
    @inline(__always)
    private static func valuePlan(for leaf: ConditionLeaf, index: IndexBinding, keys: ValueKeys) -> QueryPlan? {
        let isString = keys.type == .string
        switch leaf.op {
        case .compare(.equal) where !isString || leaf.caseSensitive:
            guard let value = leaf.values.first, let span = keys.span(equalTo: value) else { return nil }
            return QueryPlan(source: .index(index, [span]), leaf: leaf, score: 1)
        case .inList where !isString || leaf.caseSensitive:
            let spans = leaf.values.compactMap { keys.span(equalTo: $0) }
            guard spans.count == leaf.values.count else { return nil }
            return QueryPlan(source: .index(index, spans), leaf: leaf, score: 2)
        case .isNil:
            return QueryPlan(source: .index(index, [.prefix([IndexKey.nilTag], exact: true)]), leaf: leaf, score: 3)
        case .startsWith where isString && leaf.caseSensitive:
            guard case .string(let prefix)? = leaf.values.first else { return nil }
            return QueryPlan(source: .index(index, [.prefix(IndexKey.stringPrefix(prefix), exact: false)]), leaf: leaf, score: 4)
        case .like where isString && leaf.caseSensitive:
            guard case .string(let pattern)? = leaf.values.first else { return nil }
            let literal = LikePattern(pattern).literalPrefix
            guard !literal.isEmpty else { return nil }
            return QueryPlan(source: .index(index, [.prefix(IndexKey.stringPrefix(literal), exact: false)]), leaf: leaf, score: 4)
        case .between, .compare(.less), .compare(.lessOrEqual), .compare(.greater), .compare(.greaterOrEqual):
            if isString && !leaf.caseSensitive { return nil }
            guard let span = keys.range(leaf.op, leaf.values) else { return nil }
            return QueryPlan(source: .index(index, [span]), leaf: leaf, score: 5)
        default:
            return nil
        }
    }

    /// The keys of query values in a value index of `type`.
    ///
    /// -0.0 and 0.0 are one value to every comparison but have neighbouring keys (-0.0's
    /// first): a zero's span covers both, a zero bound reaches past its neighbour, and the
    /// records are rechecked (floating-point spans are never exact).
    private struct ValueKeys {
        let type: PropertyType

        @inline(__always)
        func key(_ value: QueryValue) -> [UInt8]? { IndexKey.encode(value, type: type) }
        @inline(__always)
        func lowKey(_ value: QueryValue) -> [UInt8]? { key(IndexKey.isZero(value, type: type) ? .double(-0.0) : value) }
        @inline(__always)
        func highKey(_ value: QueryValue) -> [UInt8]? { key(IndexKey.isZero(value, type: type) ? .double(0.0) : value) }

        /// The entries equal to `value`.
        @inline(__always)
        func span(equalTo value: QueryValue) -> IndexSpan? {
            if IndexKey.isZero(value, type: type) {
                guard let low = lowKey(value), let high = highKey(value) else { return nil }
                return .range(lower: low, upper: high)
            }
            return key(value).map { .prefix($0, exact: true) }
        }

        /// The entries `op` (`between` or an order comparison) accepts: bounds in either
        /// order for `between`; nil when a value has no key.
        @inline(__always)
        func range(_ op: ConditionOp, _ values: [QueryValue]) -> IndexSpan? {
            let keys = values.compactMap { key($0) }
            guard keys.count == values.count, !keys.isEmpty else { return nil }
            switch op {
            case .between:
                let (low, high) = ByteSearch.order(keys[0], keys[1]) <= 0 ? (values[0], values[1]) : (values[1], values[0])
                guard let lower = lowKey(low), let upper = highKey(high) else { return nil }
                return .range(lower: lower, upper: upper)
            case .compare(.less), .compare(.lessOrEqual):
                guard let upper = highKey(values[0]) else { return nil }
                return .range(lower: [IndexKey.valueTag], upper: upper)
            default:
                guard let lower = lowKey(values[0]) else { return nil }
                return .range(lower: lower, upper: nil)
            }
        }
    }

    private static func idValue(_ value: QueryValue) -> Id? {
        switch value {
        case .unsigned(let id): return id
        case .signed(let id): return id >= 0 ? Id(id) : nil
        default: return nil
        }
    }
}

extension IndexKey {
    /// The index key of a query value for a property of `type`, or nil when the value cannot
    /// be represented exactly in that property's key encoding.
    static func encode(_ value: QueryValue, type: PropertyType) -> [UInt8]? {
        var key: [UInt8] = []
        if case .string(let text) = value { key.reserveCapacity(text.utf8.count + 3) }
        return encode(value, type: type, into: &key) ? key : nil
    }

    /// Appends the index key of a query value for a property of `type` to `key`; returns
    /// false (having appended nothing) when the value cannot be represented exactly in that
    /// property's key encoding.
    static func encode<Sink: IndexKeySink>(_ value: QueryValue, type: PropertyType, into key: inout Sink) -> Bool {
        if type == .string {
            guard case .string(var text) = value else { return false }
            text.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &key) }
            return true
        }
        let bits: UInt64
        switch (type.indexKeyFamily, value) {
        case (.bool, .bool(let flag)):
            key.append(valueTag)
            key.append(flag ? 1 : 0)
            return true
        case (.signedInteger, .signed(let number)):
            bits = UInt64(bitPattern: number) ^ (1 << 63)
        case (.signedInteger, .unsigned(let number)):
            guard let signed = Int64(exactly: number) else { return false }
            bits = UInt64(bitPattern: signed) ^ (1 << 63)
        case (.unsignedInteger, .unsigned(let number)):
            bits = number
        case (.unsignedInteger, .signed(let number)):
            guard let unsigned = UInt64(exactly: number) else { return false }
            bits = unsigned
        case (.floatingPoint, .double(let number)):
            bits = orderedBits(type == .float ? Double(Float(number)) : number)
        case (.floatingPoint, .signed(let number)):
            bits = orderedBits(Double(number))
        case (.floatingPoint, .unsigned(let number)):
            bits = orderedBits(Double(number))
        case (.uuid, .uuid(let uuid)):
            key.append(valueTag)
            withUnsafeBytes(of: uuid.uuid) { key.append(contentsOf: $0) }
            return true
        default:
            return false
        }
        key.append(valueTag)
        appendBigEndian(bits, to: &key)
        return true
    }

    /// Whether `value` is a zero compared with a floating-point property (`Float`, `Double`,
    /// `Date`): -0.0 and 0.0 are one value to comparisons but two neighbouring keys.
    static func isZero(_ value: QueryValue, type: PropertyType) -> Bool {
        guard type.indexKeyFamily == .floatingPoint else { return false }
        switch value {
        case .double(let number): return number == 0
        case .signed(let number): return number == 0
        case .unsigned(let number): return number == 0
        default: return false
        }
    }

    /// For the key of a floating-point zero (`type` `Float`, `Double` or `Date`), the key of
    /// the zero of the other sign; else nil.
    static func otherZeroKey(_ key: [UInt8], type: PropertyType) -> [UInt8]? {
        guard type.indexKeyFamily == .floatingPoint, let positive = encode(.double(0.0), type: type),
              let negative = encode(.double(-0.0), type: type) else { return nil }
        if key == positive { return negative }
        if key == negative { return positive }
        return nil
    }

    /// The key prefix shared by every string that starts with `prefix` (no terminator): its
    /// canonical form, escaped and cut exactly as stored keys are.
    static func stringPrefix(_ prefix: String) -> [UInt8] {
        var key: [UInt8] = []
        var text = CanonicalString.string(prefix)
        text.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &key) }
        key.removeLast(2)   // terminator and cut flag
        return key
    }
}
