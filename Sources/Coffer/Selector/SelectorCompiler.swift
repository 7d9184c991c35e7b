import Foundation

/// Turns a Cloudant Query selector into the condition tree the typed DSL builds, so both run
/// through the same planner, indexes, ordering and paging.
///
/// Rules (as Cloudant documents them, and the README's selector reference states):
/// - A selector is an object; its members all hold (implicit `$and`). A member is a
///   combination operator (`$and`, `$or`, `$nor` with an array of selectors, `$not` with a
///   selector, `$text` with `{"$search": "..."}`) or a field with a value (implicit `$eq`) or
///   with an object of field operators, which all hold (`{"$gt": 7, "$lt": 14}`).
/// - Field names are stored names (`@StoredAs`/catalog names); `_id` is the id.
/// - On an array field, `$eq`, `$in`, `$lt`, `$lte`, `$gt` and `$gte` hold when an element
///   matches, `$all` when every given value is an element, `$size` compares the element
///   count of a stored array (a nil array has no size).
/// - `$ne`, `$nin` and `$not` are complements of the matching set: `{"pets": {"$not":
///   {"$eq": "cat"}}}` excludes objects whose array holds "cat", and `$ne` holds for nil.
/// - `$mod: [divisor, remainder]` truncates both toward zero, and a floating-point value
///   too (NaN, infinities and values beyond Int64 match nothing); a zero divisor is refused.
/// - `$mod` on a property that is not a number, `$size` on one that is not an array, and
///   `$size` with a count no array has, match nothing (their `$not` everything), as in
///   Cloudant.
/// - A `Float` property compares with the selector's number rounded to `Float`.
/// - Values are checked against the property's type: an integer property takes integral
///   numbers within its range, a `Date` an ISO 8601 string, a `UUID` its string form, an
///   optional also `null`. Everything else throws ``CofferError/invalidSelector(entity:path:reason:)``
///   naming the path and the operator.
///
/// It is not generic: it compiles against a schema (a type's, or one read from the catalog)
/// and finds the entity's binding for `$text` with `binding`.
struct SelectorCompiler {
    let schema: EntitySchema
    let binding: @Sendable (Transaction, Store) throws -> EntityBinding?
    /// The catalog schema of the entity stored under a name (the target of a `ToOne` in a
    /// dotted path), or nil when nothing of it is stored yet.
    let catalogSchema: (String) throws -> EntitySchema?

    /// Links one dotted path may go through.
    static let maximumPathSteps = 16

    /// A compiler for the entity type `E`.
    static func of<E: Entity>(_ type: E.Type, store: Store) -> SelectorCompiler {
        SelectorCompiler(schema: E._cofferSchema, binding: { transaction, store in try store.binding(for: E.self, in: transaction) },
                         catalogSchema: { name in try store.catalogSchema(storedName: name) })
    }

    /// A compiler for the catalog schema `schema`, looking targets up in `entities`.
    static func catalog(_ schema: EntitySchema, entities: [CatalogEntity]) -> SelectorCompiler {
        SelectorCompiler(schema: schema, binding: { transaction, store in try store.makeCatalogBinding(schema, in: transaction) },
                         catalogSchema: { name in entities.first { $0.name == name }.map { EntitySchema(catalog: $0) } })
    }

    /// The selector document in `bytes`.
    func parse(_ bytes: [UInt8]) throws -> JSONNode {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw self.error("", "the selector is not valid JSON: \(error)")
        }
    }

    /// Checks `skip` and `limit` and returns the limit to apply: Cloudant reads a limit of 0
    /// as "no limit" (nil), as it reads a skip of 0 as none.
    func checkPaging(skip: Int, limit: Int?) throws -> Int? {
        guard skip >= 0 else { throw error("skip", "skip must not be negative (got \(skip))") }
        if let limit, limit < 0 { throw error("limit", "limit must not be negative (got \(limit))") }
        return limit == 0 ? nil : limit
    }

    /// The orderings of `sort`, by stored names (`_id` is the id). An array property sorts
    /// as CouchDB collates arrays: element by element, a prefix before the longer array.
    func orders(_ sort: [(String, SortDirection)]) throws -> [QueryOrder] {
        try sort.map { name, direction in
            let wanted = name == "_id" ? schema.properties.first { $0.flags.contains(.id) }?.storedName : name
            guard let position = schema.properties.firstIndex(where: { $0.storedName == wanted && $0.flags.isDisjoint(with: [.toMany, .backlink]) }) else {
                throw error("sort", "\(schema.name) has no property \(name) to sort by")
            }
            guard !schema.properties[position].type.isDocument else { throw error("sort", "\(name) is a document; sort by a single value") }
            return QueryOrder(position: position, flags: direction == .descending ? .descending : [])
        }
    }

    /// The condition of `selector`; nil for `{}` (every object).
    func condition(_ selector: JSONNode) throws -> ConditionNode? {
        guard case .object(let members) = selector else {
            throw error("", "a selector must be a JSON object, not \(selector.kind)")
        }
        return members.isEmpty ? nil : try clause(members, path: "")
    }

    func error(_ path: String, _ reason: String) -> CofferError {
        .invalidSelector(entity: schema.name, path: path, reason: reason)
    }

    private func joined(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    /// The members of one selector object, all of which must hold.
    private func clause(_ members: [JSONMember], path: String) throws -> ConditionNode {
        let nodes = try members.map { member -> ConditionNode in
            let at = joined(path, member.key)
            switch member.key {
            case "$and", "$or", "$nor":
                guard case .array(let parts) = member.value, !parts.isEmpty else {
                    throw error(at, "\(member.key) needs a non-empty array of selectors, not \(member.value.text)")
                }
                let compiled = try parts.enumerated().map { offset, part -> ConditionNode in
                    guard case .object(let inner) = part, !inner.isEmpty else {
                        throw error("\(at)[\(offset)]", "\(member.key) needs selector objects, not \(part.text)")
                    }
                    return try clause(inner, path: "\(at)[\(offset)]")
                }
                switch member.key {
                case "$and": return compiled.count == 1 ? compiled[0] : .and(compiled)
                case "$or": return compiled.count == 1 ? compiled[0] : .or(compiled)
                default: return .not(compiled.count == 1 ? compiled[0] : .or(compiled))
                }
            case "$not":
                guard case .object(let inner) = member.value, !inner.isEmpty else {
                    throw error(at, "$not needs a selector object, not \(member.value.text)")
                }
                return .not(try clause(inner, path: at))
            case "$text":
                return try text(member.value, path: at)
            default:
                guard !member.key.hasPrefix("$") else {
                    throw error(at, "unknown operator \(member.key) (combination operators are $and, $or, $nor, $not and $text)")
                }
                // An embedded leaf's stored name holds dots itself (`home.city`): a property first.
                if let dot = member.key.firstIndex(of: "."), !schema.properties.contains(where: { $0.storedName == member.key }) {
                    return try linkedField(String(member.key[..<dot]), rest: String(member.key[member.key.index(after: dot)...]),
                                           member.value, path: at)
                }
                return try field(member.key, member.value, path: at)
            }
        }
        return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    private func text(_ value: JSONNode, path: String) throws -> ConditionNode {
        guard case .object(let members) = value, members.count == 1, members[0].key == "$search",
              case .string(let search) = members[0].value else {
            throw error(path, "$text needs {\"$search\": \"words\"}, not \(value.text)")
        }
        let properties = schema.properties.indices.filter { schema.properties[$0].fullText != nil }
        guard !properties.isEmpty else { throw error(path, "$text needs a @FullText property, and \(schema.name) has none") }
        let link = TextMatchLink(schema: schema, properties: properties, text: search, useStoredNames: true, binding: binding)
        if let failure = link.buildError { throw error(path, "\(failure)") }
        return .link(LinkStep(link: link))
    }

    /// A dotted path through a relation: a `ToOne`, a many-to-many `ToMany` or a
    /// `@Backlink` of either (any related object matches); `rest` is a path in the target.
    /// Negating operators (`$ne`, `$nin`, `$not`) are complements at the owner (so an owner
    /// without a target matches `{"customer.name": {"$ne": "Joe"}}`); the others must hold
    /// on a target.
    private func linkedField(_ head: String, rest: String, _ value: JSONNode, path: String) throws -> ConditionNode {
        guard !head.isEmpty, !rest.isEmpty else { throw error(path, "a dotted path needs a name on both sides of each dot") }
        // Each step compiles the rest recursively: the depth is bounded like JSON nesting.
        guard rest.utf8.lazy.filter({ $0 == UInt8(ascii: ".") }).count < Self.maximumPathSteps else {
            throw error(path, "a dotted path may go through at most \(Self.maximumPathSteps) links")
        }
        guard let position = schema.properties.firstIndex(where: { $0.storedName == head }) else {
            throw error(path, "\(schema.name) has no property \(head)")
        }
        let property = schema.properties[position]
        if property.type.isDocument {
            return try documentField(position, keys: rest.split(separator: ".", omittingEmptySubsequences: false).map(String.init), value, path: path)
        }
        let isRelation = property.flags.contains(.relation) || property.flags.contains(.backlink)
        guard isRelation, let targetName = property.relationTarget else {
            throw error(path, "\(head) is not a relation, so \(head).\(rest) names nothing (dotted paths go through ToOne, ToMany and @Backlink properties)")
        }
        func link(_ inner: JSONNode) throws -> ConditionNode {
            guard let target = try catalogSchema(targetName) else {
                // Nothing of the target is stored: no owner is related to a match.
                return .leaf(ConditionLeaf(position: property.flags.contains(.toMany) || property.flags.contains(.backlink) ? 0 : position,
                                           op: .inList, values: [], caseSensitive: true))
            }
            let kind = try linkKind(property, position: position, target: target, path: path)
            let compiler = SelectorCompiler(schema: target, binding: { transaction, store in try store.makeCatalogBinding(target, in: transaction) },
                                            catalogSchema: catalogSchema)
            do {
                let condition = try compiler.condition(.object([JSONMember(key: rest, value: inner)]))
                return .link(LinkStep(link: CatalogLink(kind: kind, propertyName: property.name, owner: schema, target: target,
                                                        targetCondition: condition)))
            } catch let inner as CofferError {
                guard case .invalidSelector(let entity, let innerPath, let reason) = inner else { throw inner }
                throw error(path, "through \(head) to \(targetName): \(entity) selector" + (innerPath.isEmpty ? "" : " at \(innerPath)") + ": " + reason)
            }
        }
        guard case .object(let members) = value, !members.isEmpty, members.allSatisfy({ $0.key.hasPrefix("$") }) else {
            return try link(value)
        }
        let nodes = try members.map { member -> ConditionNode in
            switch member.key {
            case "$ne": return .not(try link(.object([JSONMember(key: "$eq", value: member.value)])))
            case "$nin": return .not(try link(.object([JSONMember(key: "$in", value: member.value)])))
            case "$not": return .not(try link(member.value))
            default: return try link(.object([member]))
            }
        }
        return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    /// A dotted path into a document property (`"metadata.first.second"`): the operators
    /// compare the value found there, whatever its JSON type (see `DocumentPath`).
    private func documentField(_ position: Int, keys: [String], _ value: JSONNode, path: String) throws -> ConditionNode {
        guard !keys.contains(where: \.isEmpty) else { throw error(path, "a dotted path needs a name on both sides of each dot") }
        let property = schema.properties[position]
        let inner = PropertySchema(name: property.name, storedName: property.storedName, type: .json, swiftType: "a document value")
        let node: ConditionNode
        if case .object(let members) = value, !members.isEmpty, members.allSatisfy({ $0.key.hasPrefix("$") }) {
            let nodes = try members.map { try fieldOperator(position, $0.key, $0.value, path: joined(path, $0.key), as: inner) }
            node = nodes.count == 1 ? nodes[0] : .and(nodes)
        } else {
            node = try fieldOperator(position, "$eq", value, path: path, as: inner)
        }
        return node.settingPath(keys, at: position)
    }

    /// How `property` (at `position`) reaches `target`; for a backlink, the source
    /// property it mirrors must be a link to this entity.
    private func linkKind(_ property: PropertySchema, position: Int, target: EntitySchema, path: String) throws -> CatalogLink.Kind {
        if property.flags.contains(.toMany) { return .manyToMany(position: position) }
        if !property.flags.contains(.backlink) { return .toOne(position: position) }
        guard let linkName = property.backlinkProperty,
              let linkPosition = target.properties.firstIndex(where: { $0.storedName == linkName }),
              target.properties[linkPosition].flags.contains(.relation),
              target.properties[linkPosition].relationTarget == schema.storedName else {
            throw error(path, "the backlink \(property.storedName) mirrors \(target.name).\(property.backlinkProperty ?? "?"), which the store does not list as a link to \(schema.name)")
        }
        return target.properties[linkPosition].flags.contains(.toMany)
            ? .manyToManyBacklink(relationPosition: linkPosition) : .toOneBacklink(linkPosition: linkPosition)
    }

    /// The position of the property stored as `key`.
    private func position(of key: String, path: String) throws -> Int {
        let wanted = key == "_id" ? schema.properties.first { $0.flags.contains(.id) }?.storedName : key
        guard let position = schema.properties.firstIndex(where: { $0.storedName == wanted }) else {
            let known = schema.properties.filter { $0.flags.isDisjoint(with: [.toMany, .backlink]) }.map(\.storedName).joined(separator: ", ")
            throw error(path, "\(schema.name) has no property \(key) (stored names: \(known))")
        }
        let property = schema.properties[position]
        if property.flags.contains(.toMany) || property.flags.contains(.backlink) {
            throw error(path, "\(key) is a to-many relation: test its objects with a dotted path (\(key).name)")
        }
        return position
    }

    func isArray(_ property: PropertySchema) -> Bool {
        property.type.elementType != nil
    }

    /// A field member: an object of operators, or a value (implicit `$eq`).
    private func field(_ key: String, _ value: JSONNode, path: String) throws -> ConditionNode {
        let position = try position(of: key, path: path)
        if case .object(let members) = value, !members.isEmpty, members.allSatisfy({ $0.key.hasPrefix("$") }) {
            let nodes = try members.map { try fieldOperator(position, $0.key, $0.value, path: joined(path, $0.key)) }
            return nodes.count == 1 ? nodes[0] : .and(nodes)
        }
        if case .object(let members) = value, members.contains(where: { $0.key.hasPrefix("$") }) {
            throw error(path, "an operator object cannot mix operators and field names: \(value.text)")
        }
        return try fieldOperator(position, "$eq", value, path: path)
    }

    private func leaf(_ position: Int, _ op: ConditionOp, _ values: [QueryValue] = []) -> ConditionNode {
        .leaf(ConditionLeaf(position: position, op: op, values: values, caseSensitive: true))
    }

    /// One field operator (`"$gt": 7`) on the property at `position` (or `declared`, a
    /// document path's stand-in), as a condition node.
    private func fieldOperator(_ position: Int, _ op: String, _ value: JSONNode, path: String,
                               as declared: PropertySchema? = nil) throws -> ConditionNode {
        let property = declared ?? schema.properties[position]
        switch op {
        case "$eq":
            return try equality(position, value, of: property, path: path)
        case "$ne":
            return .not(try fieldOperator(position, "$eq", value, path: path, as: declared))
        case "$lt", "$lte", "$gt", "$gte":
            return try ordering(op, position, value, of: property, path: path)
        case "$in", "$all":
            return try membership(op, position, value, of: property, path: path)
        case "$nin":
            return .not(try fieldOperator(position, "$in", value, path: path, as: declared))
        case "$exists":
            guard case .bool(let exists) = value else { throw error(path, "$exists needs true or false, not \(value.text)") }
            return leaf(position, exists ? .isNotNil : .isNil)
        case "$size":
            return size(position, value, of: property)
        case "$mod":
            return try modulo(position, value, of: property, path: path)
        case "$regex":
            return try regex(position, value, of: property, path: path)
        case "$elemMatch":
            return try elementMatch(position, value, of: property, path: path, as: declared)
        case "$not":
            guard case .object(let members) = value, !members.isEmpty, members.allSatisfy({ $0.key.hasPrefix("$") }) else {
                throw error(path, "$not on a field needs an object of operators, not \(value.text)")
            }
            let nodes = try members.map { try fieldOperator(position, $0.key, $0.value, path: joined(path, $0.key), as: declared) }
            return .not(nodes.count == 1 ? nodes[0] : .and(nodes))
        default:
            throw error(path, "unknown field operator \(op) (field operators are $eq, $ne, $lt, $lte, $gt, $gte, $in, $nin, $all, $elemMatch, $exists, $size, $mod, $regex and $not)")
        }
    }

    /// `$eq`: nil for null, an element for an array property, the value otherwise.
    private func equality(_ position: Int, _ value: JSONNode, of property: PropertySchema, path: String) throws -> ConditionNode {
        if case .null = value { return leaf(position, .isNil) }
        if isArray(property) { return leaf(position, .containsElement, [try element(value, of: property, path: path)]) }
        return leaf(position, .compare(.equal), [try scalar(value, of: property, path: path)])
    }

    /// `$lt`, `$lte`, `$gt`, `$gte` (never with null).
    private func ordering(_ op: String, _ position: Int, _ value: JSONNode, of property: PropertySchema, path: String) throws -> ConditionNode {
        let comparison: Comparison = ["$lt": .less, "$lte": .lessOrEqual, "$gt": .greater, "$gte": .greaterOrEqual][op] ?? .equal
        if case .null = value { throw error(path, "\(op) cannot compare with null") }
        // On an array, Cloudant's rule: the object matches when an element does.
        if isArray(property) { return leaf(position, .elementMatch([comparison]), [try element(value, of: property, path: path)]) }
        return leaf(position, .compare(comparison), [try scalar(value, of: property, path: path)])
    }

    /// `$in` (one of the values; on an array, one of them is an element) and `$all` (on an
    /// array, every one is an element).
    private func membership(_ op: String, _ position: Int, _ value: JSONNode, of property: PropertySchema, path: String) throws -> ConditionNode {
        guard case .array(let candidates) = value, !candidates.isEmpty else {
            throw error(path, "\(op) needs a non-empty array of values, not \(value.text)")
        }
        let array = isArray(property)
        if op == "$all" {
            guard array else { throw error(path, "$all needs an array property; \(property.storedName) is not one") }
            let nodes = try candidates.map { leaf(position, .containsElement, [try element($0, of: property, path: path)]) }
            return nodes.count == 1 ? nodes[0] : .and(nodes)
        }
        if array {
            let nodes = try candidates.map { leaf(position, .containsElement, [try element($0, of: property, path: path)]) }
            return nodes.count == 1 ? nodes[0] : .or(nodes)
        }
        let values = try candidates.filter { $0 != .null }.map { try scalar($0, of: property, path: path) }
        var nodes: [ConditionNode] = values.isEmpty ? [] : [leaf(position, .inList, values)]
        if candidates.contains(.null) { nodes.append(leaf(position, .isNil)) }
        return nodes.count == 1 ? nodes[0] : .or(nodes)
    }

    /// `$size`: the element count of a stored array.
    private func size(_ position: Int, _ value: JSONNode, of property: PropertySchema) -> ConditionNode {
        // Cloudant's answers: a property that is no array, and a count no array has
        // (negative, fractional, not a number), match nothing; `$not` of them everything.
        guard isArray(property) || property.type == .json, case .number(let number) = value, let count = number.int64, count >= 0 else {
            return nothing(position)
        }
        // A missing array (nil) has no size: only a stored array matches (the typed
        // `count` reads nil as 0, so the presence is a condition of its own).
        return .and([leaf(position, .isNotNil), leaf(position, .count(.equal), [.signed(count)])])
    }

    /// `$mod: [divisor, remainder]`, both truncated toward zero.
    private func modulo(_ position: Int, _ value: JSONNode, of property: PropertySchema, path: String) throws -> ConditionNode {
        guard case .array(let operands) = value, operands.count == 2,
              case .number(let divisorNumber) = operands[0], case .number(let remainderNumber) = operands[1] else {
            throw error(path, "$mod needs [divisor, remainder], two numbers, not \(value.text)")
        }
        guard let divisor = Self.truncated(divisorNumber), let remainder = Self.truncated(remainderNumber) else {
            throw error(path, "$mod operands must fit a 64-bit integer: \(value.text)")
        }
        guard divisor != 0 else { throw error(path, "$mod divides by zero: \(value.text)") }
        // Numbers only (floating-point ones truncated toward zero first, see the
        // evaluator); on any other kind of property, as in Cloudant, nothing matches.
        guard !isArray(property), Self.isInteger(property.type) || [.float, .double, .json].contains(property.type) else {
            return nothing(position)
        }
        return leaf(position, .modulo(divisor, .equal), [.signed(remainder)])
    }

    /// `$regex` on a string property.
    private func regex(_ position: Int, _ value: JSONNode, of property: PropertySchema, path: String) throws -> ConditionNode {
        guard !isArray(property), property.type == .string else {
            throw error(path, "$regex needs a String property; \(property.storedName) is \(property.swiftType)")
        }
        guard case .string(let source) = value else { throw error(path, "$regex needs a pattern string, not \(value.text)") }
        do {
            return leaf(position, .regex(try RegexPattern(source)))
        } catch {
            throw self.error(path, "\(value.text) is not a valid regular expression: \(error)")
        }
    }

    /// `$elemMatch` on an array of values: one element satisfies every comparison (`$in`
    /// or `$eq` alone is the operator itself).
    private func elementMatch(_ position: Int, _ value: JSONNode, of property: PropertySchema, path: String,
                              as declared: PropertySchema?) throws -> ConditionNode {
        guard isArray(property) else { throw error(path, "$elemMatch needs an array property; \(property.storedName) is not one") }
        guard case .object(let members) = value, !members.isEmpty else {
            throw error(path, "$elemMatch needs an object of operators, not \(value.text)")
        }
        if members.count == 1, members[0].key == "$in" || members[0].key == "$eq" {
            return try fieldOperator(position, members[0].key, members[0].value, path: joined(path, members[0].key), as: declared)
        }
        var comparisons: [Comparison] = []
        var values: [QueryValue] = []
        for member in members {
            let at = joined(path, member.key)
            let table: [String: Comparison] = ["$eq": .equal, "$ne": .notEqual, "$lt": .less, "$lte": .lessOrEqual, "$gt": .greater, "$gte": .greaterOrEqual]
            guard let comparison = table[member.key] else {
                throw error(at, "inside $elemMatch on an array of values, the operators are $eq, $ne, $lt, $lte, $gt, $gte (or $in alone)")
            }
            if case .null = member.value { throw error(at, "\(member.key) cannot compare an element with null") }
            comparisons.append(comparison)
            values.append(try element(member.value, of: property, path: at))
        }
        return leaf(position, .elementMatch(comparisons), values)
    }

    static func isInteger(_ type: PropertyType) -> Bool {
        [.int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32, .uint64, .uint].contains(type)
    }

    /// A number truncated toward zero, when the result fits Int64.
    static func truncated(_ number: JSONNumber) -> Int64? {
        number.truncatedInt64
    }

    /// A condition no object satisfies (its complement: every object), for operators that
    /// Cloudant answers with "no match" on a property of the wrong kind.
    private func nothing(_ position: Int) -> ConditionNode {
        leaf(position, .inList, [])
    }

    /// An element value of an array property.
    private func element(_ value: JSONNode, of property: PropertySchema, path: String) throws -> QueryValue {
        try convert(value, to: property.type.elementType ?? property.type, property: property, path: path)
    }

    private func scalar(_ value: JSONNode, of property: PropertySchema, path: String) throws -> QueryValue {
        try convert(value, to: property.type, property: property, path: path)
    }

    /// A selector value as a query value of `type`, checked against its range.
    private func convert(_ value: JSONNode, to type: PropertyType, property: PropertySchema, path: String) throws -> QueryValue {
        func mismatch(_ wanted: String) -> CofferError {
            error(path, "\(property.storedName) is \(property.swiftType), so it needs \(wanted), not \(value.text)")
        }
        switch type {
        case .bool:
            guard case .bool(let flag) = value else { throw mismatch("true or false") }
            return .bool(flag)
        case .int8, .int16, .int32, .int64, .int:
            return .signed(try Self.signedInteger(value, as: type, mismatch: mismatch))
        case .uint8, .uint16, .uint32, .uint64, .uint:
            return .unsigned(try Self.unsignedInteger(value, as: type, mismatch: mismatch))
        case .double:
            guard case .number(let number) = value else { throw mismatch("a number") }
            return .double(number.double)
        case .float:
            // At the property's own precision: 1.01 is the Float 1.01 stored, not the Double
            // next to it (which no Float equals). A finite number beyond Float's range stays
            // a Double, so that it orders against Float's infinities as a number does.
            guard case .number(let number) = value else { throw mismatch("a number") }
            let rounded = Float(number.text) ?? Float(number.double)
            return .double(rounded.isFinite ? Double(rounded) : number.double)
        case .string:
            guard case .string(let string) = value else { throw mismatch("a string") }
            return .string(string)
        case .date:
            guard case .string(let string) = value, let seconds = ISODate.seconds(from: string) else { throw mismatch("an ISO 8601 date string") }
            return .double(seconds)
        case .uuid:
            guard case .string(let string) = value, let uuid = UUID(uuidString: string) else { throw mismatch("a UUID string") }
            return .uuid(uuid)
        case .json:
            // A value inside a document: compared as what the JSON says it is.
            switch value {
            case .bool(let flag): return .bool(flag)
            case .number(let number): return number.int64.map(QueryValue.signed) ?? .double(number.double)
            case .string(let string): return .string(string)
            default: throw error(path, "inside a document, compare with a string, number or boolean, not \(value.text)")
            }
        default:
            throw error(path, "\(property.storedName) is \(property.swiftType), which selectors cannot compare")
        }
    }

    /// An integral number within the range of the signed integer `type`.
    private static func signedInteger(_ value: JSONNode, as type: PropertyType, mismatch: (String) -> CofferError) throws -> Int64 {
        guard case .number(let number) = value else { throw mismatch("an integer") }
        guard let integer = number.int64 else { throw mismatch("an integer within Int64") }
        let bounds: ClosedRange<Int64>
        switch type {
        case .int8: bounds = Int64(Int8.min)...Int64(Int8.max)
        case .int16: bounds = Int64(Int16.min)...Int64(Int16.max)
        case .int32: bounds = Int64(Int32.min)...Int64(Int32.max)
        default: bounds = Int64.min...Int64.max
        }
        guard bounds.contains(integer) else { throw mismatch("an integer within \(bounds.lowerBound)...\(bounds.upperBound)") }
        return integer
    }

    /// A non-negative integral number within the range of the unsigned integer `type`.
    private static func unsignedInteger(_ value: JSONNode, as type: PropertyType, mismatch: (String) -> CofferError) throws -> UInt64 {
        guard case .number(let number) = value else { throw mismatch("a non-negative integer") }
        guard let integer = number.uint64 else { throw mismatch("a non-negative integer within UInt64") }
        let maximum: UInt64
        switch type {
        case .uint8: maximum = UInt64(UInt8.max)
        case .uint16: maximum = UInt64(UInt16.max)
        case .uint32: maximum = UInt64(UInt32.max)
        default: maximum = UInt64.max
        }
        guard integer <= maximum else { throw mismatch("an integer within 0...\(maximum)") }
        return integer
    }
}

extension ConditionNode {
    /// The same condition with `path` on every leaf at `position` (a document path).
    func settingPath(_ path: [String], at position: Int) -> ConditionNode {
        switch self {
        case .leaf(var leaf):
            if leaf.position == position { leaf.path = path }
            return .leaf(leaf)
        case .and(let nodes): return .and(nodes.map { $0.settingPath(path, at: position) })
        case .or(let nodes): return .or(nodes.map { $0.settingPath(path, at: position) })
        case .not(let inner): return .not(inner.settingPath(path, at: position))
        default: return self
        }
    }
}
