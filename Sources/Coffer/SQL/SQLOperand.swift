/// An expression's value in a row, read straight from its slot when the expression is a
/// column (the usual GROUP BY key, aggregate argument and join key), else computed: the
/// per-row loops of grouping and hash joins skip a closure call for plain columns.
enum SQLOperand {
    case slot(Int)
    case computed(SQLEvaluator)

    init(_ bound: SQLBound) {
        if case .column(let column) = bound {
            self = .slot(column.slot)
        } else {
            self = .computed(SQLEvaluator(bound))
        }
    }

    @inline(__always)
    func value(_ row: SQLSlots) throws -> SQLValue {
        switch self {
        case .slot(let slot): return row[slot]
        case .computed(let evaluator): return try evaluator.evaluate(row)
        }
    }
}
