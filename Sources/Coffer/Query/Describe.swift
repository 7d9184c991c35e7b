/// Query plans and conditions in words, for `Query.describe()`.
enum Describe {
    static func plan(_ plan: QueryPlan, condition: ConditionNode?, orders: [QueryOrder], schema: EntitySchema) -> String {
        var parts: [String] = []
        let reason = plan.leaf.map { leaf($0, schema: schema) } ?? ""
        switch plan.source {
        case .scan:
            parts.append("\(schema.name): full scan of the table")
        case .ids(let ids):
            parts.append("\(schema.name): look up \(ids.count == 1 ? "id \(ids[0])" : "\(ids.count) ids") in the table for \(reason)")
        case .idRange(let lower, let upper):
            parts.append("\(schema.name): range of ids \(lower)...\(upper) in the table for \(reason)")
        case .index(let index, let spans):
            parts.append("\(schema.name): index on \(index.property.name) (\(spans.count) \(spans.count == 1 ? "span" : "spans")) for \(reason)")
        case .indexOrder(let index):
            parts.append("\(schema.name): index on \(index.property.name) walked in order (no sort)")
        }
        if let condition {
            parts.append("check on each record: \(node(condition, schema: schema))")
        } else {
            parts.append("no condition")
        }
        if !orders.isEmpty {
            parts.append("order by " + orders.map { order in
                var words = [schema.properties[order.position].name]
                if order.flags.contains(.descending) { words.append("descending") }
                if order.flags.contains(.caseSensitive) { words.append("case-sensitive") }
                if order.flags.contains(.unsigned) { words.append("unsigned") }
                if order.flags.contains(.nullsLast) { words.append("nils last") }
                if order.flags.contains(.nullsZero) { words.append("nils as zero") }
                return words.joined(separator: " ")
            }.joined(separator: ", "))
        } else {
            parts.append("in id order")
        }
        return parts.joined(separator: "; ")
    }

    static func node(_ node: ConditionNode, schema: EntitySchema) -> String {
        switch node {
        case .leaf(let leaf): return self.leaf(leaf, schema: schema)
        case .and(let nodes): return nodes.map { wrap($0, schema: schema) }.joined(separator: " && ")
        case .or(let nodes): return nodes.map { wrap($0, schema: schema) }.joined(separator: " || ")
        case .not(let inner): return "!" + wrap(inner, schema: schema)
        case .invalid(let message): return "invalid (\(message))"
        case .link(let step): return step.link.summary
        }
    }

    private static func wrap(_ node: ConditionNode, schema: EntitySchema) -> String {
        if case .leaf = node { return self.node(node, schema: schema) }
        return "(" + self.node(node, schema: schema) + ")"
    }

    static func leaf(_ leaf: ConditionLeaf, schema: EntitySchema) -> String {
        let name = ([schema.properties[leaf.position].name] + leaf.path.map { "[\(FieldDescription.quoted($0))]" }).joined()
        // Long lists (a link step can produce thousands of ids) are cut.
        var values = leaf.values.prefix(8).map(\.description)
        if leaf.values.count > 8 { values.append("… \(leaf.values.count) values") }
        let first = values.first ?? ""
        let suffix = leaf.caseSensitive ? "" : " (case-insensitive)"
        var text: String
        switch leaf.op {
        case .compare(let comparison): text = "\(name) \(comparison.rawValue) \(first)\(suffix)"
        case .between(let lowerInclusive, let upperInclusive):
            text = "\(name) in \(lowerInclusive ? "[" : "(")\(values[0]), \(values[1])\(upperInclusive ? "]" : ")")"
        case .inList: text = "\(name) in [\(values.joined(separator: ", "))]"
        case .notInList: text = "\(name) not in [\(values.joined(separator: ", "))]"
        case .isNil: text = "\(name) is nil"
        case .isNotNil: text = "\(name) is not nil"
        case .startsWith: text = "\(name) startsWith \(first)\(suffix)"
        case .endsWith: text = "\(name) endsWith \(first)\(suffix)"
        case .contains: text = "\(name) contains \(first)\(suffix)"
        case .elementMatch(let comparisons):
            text = "\(name) has an element " + zip(comparisons, values).map { "\($0.rawValue) \($1)" }.joined(separator: " and ")
        case .regex(let pattern): text = "\(name) matches the regular expression \(FieldDescription.quoted(pattern.source))"
        case .like: text = "\(name) like \(first)\(leaf.caseSensitive ? " (case-sensitive)" : "")"
        case .equalWithTolerance(let tolerance): text = "\(name) == \(first) ± \(tolerance)"
        case .containsElement: text = "\(name) contains element \(first)"
        case .count(let comparison): text = "\(name).count \(comparison.rawValue) \(first)"
        case .modulo(let divisor, let comparison): text = "\(name) % \(divisor) \(comparison.rawValue) \(first)"
        }
        if let alias = leaf.alias { text = "\"\(alias)\": " + text }
        return text
    }
}
