import CLMDB

/// How a query finds its candidates. Every candidate is checked against the whole condition
/// on its record, so an index only has to return a superset — except under an exact plan
/// (`isExact`: an id list that is the whole condition), whose candidates match by definition.
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
    /// Whether the source yields exactly the stored objects that match the whole condition
    /// (an id list that is the only condition), so candidates need no check.
    var isExact = false
}

/// A part of an index: entries whose value part starts with `prefix` (or equals it), or lies within
/// `lower...upper` (byte order of the encoded values).
enum IndexSpan {
    /// `exact`: the bytes are a whole value's key, so the entries are in id order.
    case prefix([UInt8], exact: Bool)
    case range(lower: [UInt8], upper: [UInt8]?)
}

enum QueryPlanner {
    static func plan(condition: ConditionNode?, orders: [QueryOrder], binding: EntityBinding, transaction: Transaction) -> QueryPlan {
        let conjuncts: [ConditionLeaf]
        switch condition {
        case .leaf(let leaf)?: conjuncts = [leaf]
        case .and(let nodes)?: conjuncts = nodes.compactMap { if case .leaf(let leaf) = $0 { return leaf } else { return nil } }
        default: conjuncts = []
        }
        var best: (score: Int, plan: QueryPlan)?
        for leaf in conjuncts {
            guard let candidate = plan(for: leaf, binding: binding, transaction: transaction) else { continue }
            if best == nil || candidate.score < best!.score { best = candidate }
        }
        if var plan = best?.plan {
            if case .leaf(let leaf)? = condition { plan.isExact = isExact(plan.source, for: leaf, binding: binding) }
            return plan
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
    private static func isExact(_ source: QueryPlan.Source, for leaf: ConditionLeaf, binding: EntityBinding) -> Bool {
        switch source {
        case .ids: return true
        case .index(let index, let spans):
            guard case .compare(.equal) = leaf.op, leaf.path.isEmpty, !index.isElementIndex, spans.count == 1,
                  case .prefix(let key, exact: true) = spans[0] else { return false }
            switch Store.keyFamily(index.property.type) {
            case "signed", "unsigned", "bool", "uuid": return true
            case "string": return leaf.caseSensitive && !IndexKey.isTruncatedString(key[...])
            default: return false
            }
        default: return false
        }
    }

    static func usableIndex(_ position: Int, binding: EntityBinding, transaction: Transaction) -> IndexBinding? {
        binding.indexes.first { $0.position == position && transaction.snapshotId >= $0.createdInTransaction }
    }

    /// A plan for one leaf and its score (lower is more selective), or nil.
    private static func plan(for leaf: ConditionLeaf, binding: EntityBinding, transaction: Transaction) -> (score: Int, plan: QueryPlan)? {
        let property = binding.schema.properties[leaf.position]
        let text = leaf
        if property.flags.contains(.id) {
            let ids = leaf.values.compactMap(idValue)
            switch leaf.op {
            case .compare(.equal) where ids.count == 1: return (0, QueryPlan(source: .ids(ids), leaf: text))
            case .inList where ids.count == leaf.values.count: return (1, QueryPlan(source: .ids(ids), leaf: text))
            case .between where ids.count == 2:
                return (5, QueryPlan(source: .idRange(lower: min(ids[0], ids[1]), upper: max(ids[0], ids[1])), leaf: text))
            case .compare(.greater), .compare(.greaterOrEqual):
                guard let id = ids.first else { return nil }
                return (5, QueryPlan(source: .idRange(lower: id, upper: .max), leaf: text))
            case .compare(.less), .compare(.lessOrEqual):
                guard let id = ids.first else { return nil }
                return (5, QueryPlan(source: .idRange(lower: 0, upper: id), leaf: text))
            default: return nil
            }
        }
        guard let index = usableIndex(leaf.position, binding: binding, transaction: transaction) else { return nil }
        if index.isElementIndex {
            // Entries per element: only "holds this element" can use them.
            guard case .containsElement = leaf.op, let elementType = property.type.elementType,
                  let value = leaf.values.first, let encoded = IndexKey.encode(value, type: elementType) else { return nil }
            return (1, QueryPlan(source: .index(index, [.prefix(encoded, exact: true)]), leaf: text))
        }
        let type = property.type
        let isString = type == .string
        func key(_ value: QueryValue) -> [UInt8]? { IndexKey.encode(value, type: type) }
        switch leaf.op {
        case .compare(.equal) where !isString || leaf.caseSensitive:
            guard let value = leaf.values.first, let encoded = key(value) else { return nil }
            return (1, QueryPlan(source: .index(index, [.prefix(encoded, exact: true)]), leaf: text))
        case .inList where !isString || leaf.caseSensitive:
            let keys = leaf.values.compactMap(key)
            guard keys.count == leaf.values.count else { return nil }
            return (2, QueryPlan(source: .index(index, keys.map { .prefix($0, exact: true) }), leaf: text))
        case .isNil:
            return (3, QueryPlan(source: .index(index, [.prefix([IndexKey.nilTag], exact: true)]), leaf: text))
        case .startsWith where isString && leaf.caseSensitive:
            guard case .string(let prefix)? = leaf.values.first else { return nil }
            return (4, QueryPlan(source: .index(index, [.prefix(IndexKey.stringPrefix(prefix), exact: false)]), leaf: text))
        case .like where isString && leaf.caseSensitive:
            guard case .string(let pattern)? = leaf.values.first else { return nil }
            let literal = LikePattern(pattern).literalPrefix
            guard !literal.isEmpty else { return nil }
            return (4, QueryPlan(source: .index(index, [.prefix(IndexKey.stringPrefix(literal), exact: false)]), leaf: text))
        case .between, .compare(.less), .compare(.lessOrEqual), .compare(.greater), .compare(.greaterOrEqual):
            if isString && !leaf.caseSensitive { return nil }
            let keys = leaf.values.compactMap(key)
            guard keys.count == leaf.values.count, !keys.isEmpty else { return nil }
            let span: IndexSpan
            switch leaf.op {
            case .between:
                let (low, high) = ByteSearch.order(keys[0], keys[1]) <= 0 ? (keys[0], keys[1]) : (keys[1], keys[0])
                span = .range(lower: low, upper: high)
            case .compare(.less), .compare(.lessOrEqual):
                span = .range(lower: [IndexKey.valueTag], upper: keys[0])
            default:
                span = .range(lower: keys[0], upper: nil)
            }
            return (5, QueryPlan(source: .index(index, [span]), leaf: text))
        default:
            return nil
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
        var key: [UInt8] = [valueTag]
        switch (Store.keyFamily(type), value) {
        case ("bool", .bool(let flag)):
            key.append(flag ? 1 : 0)
        case ("signed", .signed(let number)):
            appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63), to: &key)
        case ("signed", .unsigned(let number)):
            guard let signed = Int64(exactly: number) else { return nil }
            appendBigEndian(UInt64(bitPattern: signed) ^ (1 << 63), to: &key)
        case ("unsigned", .unsigned(let number)):
            appendBigEndian(number, to: &key)
        case ("unsigned", .signed(let number)):
            guard let unsigned = UInt64(exactly: number) else { return nil }
            appendBigEndian(unsigned, to: &key)
        case ("double", .double(let number)):
            appendBigEndian(orderedBits(type == .float ? Double(Float(number)) : number), to: &key)
        case ("double", .signed(let number)):
            appendBigEndian(orderedBits(Double(number)), to: &key)
        case ("double", .unsigned(let number)):
            appendBigEndian(orderedBits(Double(number)), to: &key)
        case ("string", .string(let text)):
            key.removeAll()
            var text = text
            text.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &key) }
        case ("uuid", .uuid(let uuid)):
            withUnsafeBytes(of: uuid.uuid) { key.append(contentsOf: $0) }
        default:
            return nil
        }
        return key
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
