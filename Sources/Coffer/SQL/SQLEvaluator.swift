import Foundation

/// The slots of one row while a statement runs: each table's columns (a row of the FROM
/// clause), or a group's keys and aggregates. One buffer per run, overwritten row by row,
/// so reading a row allocates nothing.
typealias SQLSlots = UnsafeMutableBufferPointer<SQLValue>

/// A bound expression compiled into closures over the row's slots.
struct SQLEvaluator {
    let evaluate: (SQLSlots) throws -> SQLValue

    /// Whether the expression holds for the row (NULL does not).
    func holds(_ row: SQLSlots) throws -> Bool {
        try evaluate(row).truth == true
    }

    init(_ bound: SQLBound) {
        evaluate = Self.compile(bound)
    }

    /// The conjunction of `conjuncts` (true when there are none).
    init(all conjuncts: [SQLBound]) {
        let compiled = conjuncts.map { Self.compile($0) }
        switch compiled.count {
        case 0: evaluate = { _ in .integer(1) }
        case 1: evaluate = compiled[0]
        default:
            evaluate = { row in
                var unknown = false
                for conjunct in compiled {
                    switch try conjunct(row).truth {
                    case false: return .integer(0)
                    case nil: unknown = true
                    case true: break
                    }
                }
                return unknown ? .null : .integer(1)
            }
        }
    }

    private static func compile(_ bound: SQLBound) -> (SQLSlots) throws -> SQLValue {
        switch bound {
        case .constant(let value):
            return { _ in value }
        case .column(let column):
            let slot = column.slot
            return { row in row[slot] }
        case .groupSlot(let slot):
            return { row in row[slot] }
        case .idIn(let column, let set):
            let (slot, ids) = (column.slot, set.ids)
            return { row in
                switch row[slot] {
                case .integer(let id): return .integer(id >= 0 && ids.contains(UInt64(id)) ? 1 : 0)
                case .unsigned(let id): return .integer(ids.contains(id) ? 1 : 0)
                case .null: return .null
                default: return .integer(0)
                }
            }
        case .aggregate:
            // The grouping lifts every aggregate into a group slot first.
            return { _ in .null }
        case .unary(let op, let operand):
            let inner = compile(operand)
            switch op {
            case .not: return { row in try inner(row).truth.map { .integer($0 ? 0 : 1) } ?? .null }
            case .negate: return { row in SQLValue.negate(try inner(row)) }
            case .plus: return inner
            }
        case .binary(let op, let left, let right):
            return binary(op, compile(left), compile(right))
        case .between(let operand, let low, let high, let negated):
            let (value, lower, upper) = (compile(operand), compile(low), compile(high))
            return { row in
                let x = try value(row)
                // x >= low AND x <= high, in three-valued logic.
                let above = SQLValue.compare(x, try lower(row)).map { $0 >= 0 }
                let below = SQLValue.compare(x, try upper(row)).map { $0 <= 0 }
                let result: Bool? = (above == false || below == false) ? false : ((above == nil || below == nil) ? nil : true)
                return SQLValue.boolean(negated ? result.map { !$0 } : result)
            }
        case .inList(let operand, let items, let negated):
            let value = compile(operand)
            // A list of constants is a hash set; NULLs in it make a miss unknown.
            if items.allSatisfy({ if case .constant = $0 { return true } else { return false } }) {
                let constants = items.compactMap { if case .constant(let value) = $0 { return value } else { return nil } }
                let keys = Set(constants.filter { !$0.isNull }.map(SQLKey.init))
                let hasNull = constants.contains { $0.isNull }
                return { row in
                    let x = try value(row)
                    if x.isNull { return constants.isEmpty ? .integer(negated ? 1 : 0) : .null }
                    if keys.contains(SQLKey(x)) { return .integer(negated ? 0 : 1) }
                    return hasNull ? .null : .integer(negated ? 1 : 0)
                }
            }
            let compiled = items.map(compile)
            return { row in
                let x = try value(row)
                if x.isNull { return compiled.isEmpty ? .integer(negated ? 1 : 0) : .null }
                var unknown = false
                for item in compiled {
                    switch SQLValue.compare(x, try item(row)) {
                    case 0: return .integer(negated ? 0 : 1)
                    case nil: unknown = true
                    default: break
                    }
                }
                return unknown ? .null : .integer(negated ? 1 : 0)
            }
        case .like(let operand, let pattern, let negated):
            let value = compile(operand)
            if case .constant(.text(let text)) = pattern {
                let prepared = LikePattern(CaseFolding.fold(text))
                return { row in
                    guard case .text(let subject) = try value(row) else { return .null }
                    return .integer(prepared.matches(CaseFolding.fold(subject)) != negated ? 1 : 0)
                }
            }
            let patternValue = compile(pattern)
            return { row in
                guard case .text(let subject) = try value(row), case .text(let text) = try patternValue(row) else { return .null }
                return .integer(LikePattern(CaseFolding.fold(text)).matches(CaseFolding.fold(subject)) != negated ? 1 : 0)
            }
        case .isNull(let operand, let negated):
            let value = compile(operand)
            return { row in .integer(try value(row).isNull != negated ? 1 : 0) }
        case .isDistinct(let left, let right, let negated):
            // `a IS b`: NULL-safe equality (negated is `IS NOT`).
            let (a, b) = (compile(left), compile(right))
            return { row in
                let (x, y) = (try a(row), try b(row))
                let same = (x.isNull && y.isNull) || (!x.isNull && !y.isNull && SQLValue.compare(x, y) == 0)
                return .integer(same != negated ? 1 : 0)
            }
        case .function(let function, let arguments):
            return call(function, arguments.map(compile))
        case .caseWhen(let operand, let branches, let otherwise):
            let subject = operand.map(compile)
            let compiled = branches.map { (compile($0.when), compile($0.then)) }
            let fallback = otherwise.map(compile)
            return { row in
                let x = try subject?(row)
                for (when, then) in compiled {
                    let condition = try when(row)
                    let taken = if let x { SQLValue.compare(x, condition) == 0 } else { condition.truth == true }
                    if taken { return try then(row) }
                }
                return try fallback?(row) ?? .null
            }
        }
    }

    private static func binary(_ op: SQLExpression.BinaryOperator, _ a: @escaping (SQLSlots) throws -> SQLValue,
                               _ b: @escaping (SQLSlots) throws -> SQLValue) -> (SQLSlots) throws -> SQLValue {
        switch op {
        case .and:
            return { row in
                let x = try a(row).truth
                if x == false { return .integer(0) }
                let y = try b(row).truth
                if y == false { return .integer(0) }
                return x == nil || y == nil ? .null : .integer(1)
            }
        case .or:
            return { row in
                let x = try a(row).truth
                if x == true { return .integer(1) }
                let y = try b(row).truth
                if y == true { return .integer(1) }
                return x == nil || y == nil ? .null : .integer(0)
            }
        case .equal: return { row in SQLValue.boolean(SQLValue.compare(try a(row), try b(row)).map { $0 == 0 }) }
        case .notEqual: return { row in SQLValue.boolean(SQLValue.compare(try a(row), try b(row)).map { $0 != 0 }) }
        case .less: return { row in SQLValue.boolean(SQLValue.compare(try a(row), try b(row)).map { $0 < 0 }) }
        case .lessOrEqual: return { row in SQLValue.boolean(SQLValue.compare(try a(row), try b(row)).map { $0 <= 0 }) }
        case .greater: return { row in SQLValue.boolean(SQLValue.compare(try a(row), try b(row)).map { $0 > 0 }) }
        case .greaterOrEqual: return { row in SQLValue.boolean(SQLValue.compare(try a(row), try b(row)).map { $0 >= 0 }) }
        case .add, .subtract, .multiply, .divide, .remainder:
            return { row in SQLValue.arithmetic(op, try a(row), try b(row)) }
        case .concatenate:
            return { row in
                guard let x = try a(row).concatenationText, let y = try b(row).concatenationText else { return .null }
                return .text(x + y)
            }
        }
    }

    private static func call(_ function: SQLFunction, _ arguments: [(SQLSlots) throws -> SQLValue]) -> (SQLSlots) throws -> SQLValue {
        switch function {
        case .abs:
            let value = arguments[0]
            return { row in
                switch try value(row) {
                case .integer(let x): return x == .min ? .real(-Double(x)) : .integer(Swift.abs(x))
                case .real(let x): return .real(Swift.abs(x))
                case let other: return other
                }
            }
        case .coalesce, .ifnull:
            return { row in
                for argument in arguments {
                    let value = try argument(row)
                    if !value.isNull { return value }
                }
                return .null
            }
        case .nullif:
            let (a, b) = (arguments[0], arguments[1])
            return { row in
                let x = try a(row)
                return SQLValue.compare(x, try b(row)) == 0 ? .null : x
            }
        case .length:
            let value = arguments[0]
            return { row in
                switch try value(row) {
                case .text(let text): return .integer(Int64(text.unicodeScalars.count))
                case .blob(let bytes): return .integer(Int64(bytes.count))
                case .null: return .null
                case let number: return .integer(Int64(number.concatenationText?.unicodeScalars.count ?? 0))
                }
            }
        case .lower, .upper:
            let value = arguments[0]
            let lower = function == .lower
            return { row in
                guard case .text(let text) = try value(row) else { return .null }
                return .text(lower ? text.lowercased() : text.uppercased())
            }
        case .typeof:
            let value = arguments[0]
            return { row in .text(try value(row).className.lowercased()) }
        case .min, .max:
            // The scalar forms: NULL when any argument is NULL, as in SQLite.
            let smallest = function == .min
            return { row in
                var best: SQLValue?
                for argument in arguments {
                    let value = try argument(row)
                    if value.isNull { return .null }
                    if let current = best {
                        let order = SQLValue.order(value, current)
                        if smallest ? order < 0 : order > 0 { best = value }
                    } else {
                        best = value
                    }
                }
                return best ?? .null
            }
        }
    }
}
