/// A statement's plan in words, one line per step: what `EXPLAIN` and `coffer sql
/// --explain` print. The first lines read as `Query.describe()` does.
enum SQLDescribe {
    static func plan(_ plan: SQLPlan) -> String {
        var lines: [String] = []
        let bound = plan.bound
        if !plan.constant.isEmpty {
            lines.append("check once: " + plan.constant.map { expression($0, bound) }.joined(separator: " AND "))
        }
        if plan.steps.isEmpty { lines.append("one row (no FROM)") }
        for step in plan.steps {
            let table = step.table
            let name = table.name == table.entity.name ? table.name : "\(table.entity.name) \(table.name)"
            var parts: [String] = []
            switch step.access {
            case .empty:
                parts.append("\(name): nothing stored yet, no rows")
            case .planned(let queryPlan):
                parts.append("\(name): " + source(queryPlan, step))
            case .idLookup(let value):
                parts.append("\(name): look up the id \(expression(value, bound)) for each row")
            case .indexLookup(let position, let value):
                parts.append("\(name): index on \(table.schema.properties[position].name) for \(expression(value, bound)), for each row")
            case .hash(let inner, let outer, let queryPlan):
                parts.append("\(name): " + source(queryPlan, step) + ", hashed once by "
                             + inner.map { expression($0, bound) }.joined(separator: ", ")
                             + ", probed with " + outer.map { expression($0, bound) }.joined(separator: ", "))
            case .nestedLoop(let queryPlan):
                parts.append("\(name): " + source(queryPlan, step) + ", read once and joined to every row")
            case .relation(let join, _):
                parts.append("\(name): the objects the relation \(join.ownerEntity).\(bound.tables.first { $0.entity.name == join.ownerEntity }?.schema.properties[join.relationPosition].name ?? "?") links")
            }
            if let pushdown = step.pushdown, let binding = step.binding {
                parts.append("check on each record: " + Describe.node(pushdown, schema: binding.schema))
            }
            if !step.local.isEmpty { parts.append("check: " + step.local.map { expression($0, bound) }.joined(separator: " AND ")) }
            if !step.pair.isEmpty {
                parts.append((table.isLeftJoined ? "left join on: " : "join on: ") + step.pair.map { expression($0, bound) }.joined(separator: " AND "))
            } else if table.isLeftJoined {
                parts.append("left join")
            }
            if !step.after.isEmpty { parts.append("then check: " + step.after.map { expression($0, bound) }.joined(separator: " AND ")) }
            lines.append(parts.joined(separator: "; "))
        }
        if let grouping = plan.indexGrouping {
            lines = ["\(plan.steps[0].table.name): index on \(grouping.index.property.name) walked in order, one record read per group"]
        }
        if bound.isGrouped {
            var words = bound.groupKeys.isEmpty ? "aggregate every row" : "group by " + bound.groupKeys.map { expression($0, bound) }.joined(separator: ", ")
            if !bound.aggregates.isEmpty { words += ": " + bound.aggregates.map(\.text).joined(separator: ", ") }
            lines.append(words)
            if let having = bound.having { lines.append("having " + expression(having, bound)) }
        }
        if bound.distinct { lines.append("distinct rows") }
        if !bound.orderKeys.isEmpty {
            lines.append("sort by " + bound.orderKeys.map { key in
                var text: String
                switch key.source {
                case .output(let index): text = bound.outputNames[index]
                case .expression(let value): text = expression(value, bound)
                }
                if key.descending { text += " DESC" }
                if key.nullsFirst == key.descending { text += key.nullsFirst ? " NULLS FIRST" : " NULLS LAST" }
                return text
            }.joined(separator: ", "))
        }
        if let limit = bound.limit {
            lines.append("limit \(limit)" + (bound.offset > 0 ? " offset \(bound.offset)" : "")
                         + (bound.orderKeys.isEmpty && !bound.isGrouped ? ", stopping early" : ""))
        } else if bound.offset > 0 {
            lines.append("offset \(bound.offset)")
        }
        return lines.joined(separator: "\n")
    }

    /// The rows a query plan finds, as `Query.describe()` words it.
    private static func source(_ plan: QueryPlan, _ step: SQLPlan.Step) -> String {
        let schema = step.binding?.schema
        let reason = plan.leaf.flatMap { leaf in schema.map { Describe.leaf(leaf, schema: $0) } } ?? ""
        switch plan.source {
        case .scan: return "full scan of the table"
        case .ids(let ids): return "look up \(ids.count == 1 ? "id \(ids[0])" : "\(ids.count) ids") in the table for \(reason)"
        case .idRange(let lower, let upper): return "range of ids \(lower)...\(upper) in the table for \(reason)"
        case .index(let index, let spans):
            return "index on \(index.property.name) (\(spans.count) \(spans.count == 1 ? "span" : "spans")) for \(reason)"
        case .indexOrder(let index): return "index on \(index.property.name) walked in order"
        }
    }

    /// An expression in SQL words, columns named by their table.
    static func expression(_ value: SQLBound, _ bound: SQLBoundSelect) -> String {
        func text(_ node: SQLBound) -> String {
            switch node {
            case .constant(let constant): return constant.description
            case .column(let column):
                let table = bound.tables[column.table]
                return bound.tables.count > 1 ? "\(table.name).\(column.name)" : column.name
            case .groupSlot(let slot):
                if slot < bound.groupKeys.count { return text(bound.groupKeys[slot]) }
                let index = slot - bound.groupKeys.count
                return index < bound.aggregates.count ? bound.aggregates[index].text : "?"
            case .aggregate(let call): return call.text
            case .idIn(let column, let set): return "\(bound.tables[column.table].name) MATCH (\(set.ids.count) ids)"
            case .unary(.not, let operand): return "NOT \(text(operand))"
            case .unary(.negate, let operand): return "-\(text(operand))"
            case .unary(.plus, let operand): return text(operand)
            case .binary(let op, let a, let b): return "(\(text(a)) \(op.rawValue) \(text(b)))"
            case .between(let a, let low, let high, let negated):
                return "\(text(a))\(negated ? " NOT" : "") BETWEEN \(text(low)) AND \(text(high))"
            case .inList(let a, let items, let negated):
                return "\(text(a))\(negated ? " NOT" : "") IN (\(items.map(text).joined(separator: ", ")))"
            case .like(let a, let pattern, let negated): return "\(text(a))\(negated ? " NOT" : "") LIKE \(text(pattern))"
            case .isNull(let a, let negated): return "\(text(a)) IS \(negated ? "NOT " : "")NULL"
            case .isDistinct(let a, let b, let negated): return "\(text(a)) IS \(negated ? "NOT " : "")\(text(b))"
            case .function(let function, let arguments): return "\(function.rawValue)(\(arguments.map(text).joined(separator: ", ")))"
            case .caseWhen(let operand, let branches, let otherwise):
                var words = "CASE" + (operand.map { " " + text($0) } ?? "")
                for branch in branches { words += " WHEN \(text(branch.when)) THEN \(text(branch.then))" }
                if let otherwise { words += " ELSE \(text(otherwise))" }
                return words + " END"
            }
        }
        return text(value)
    }
}
