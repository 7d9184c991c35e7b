import Foundation

/// One aggregate's running state for one group, with SQLite's rules: COUNT counts
/// non-NULL values; SUM stays an exact integer while every value is one and fails on
/// overflow, and is real as soon as one value is; AVG and TOTAL are real; MIN and MAX
/// keep the first of equal values; NULLs are skipped; DISTINCT skips repeated values.
struct SQLAccumulator {
    private let kind: SQLAggregateKind
    /// COUNT(*): counts rows, reads no argument.
    private let countsRows: Bool
    private var count: Int64 = 0
    private var integerSum: Int64 = 0
    private var overflow = false
    private var approximate = false
    private var realSum = 0.0
    private var extreme: SQLValue = .null
    private var seen: Set<SQLKey>?

    init(_ call: SQLAggregateCall) {
        kind = call.kind
        countsRows = call.argument == nil
        seen = call.distinct ? [] : nil
    }

    /// Adds a row: its argument's value (ignored by COUNT(*)).
    mutating func add(_ value: SQLValue) {
        if countsRows {
            count &+= 1
            return
        }
        if value.isNull { return }
        if seen != nil {
            guard seen?.insert(SQLKey(value)).inserted == true else { return }
        }
        count &+= 1
        switch kind {
        case .count:
            break
        case .sum, .average, .total:
            switch value {
            case .integer(let number):
                realSum += Double(number)
                if !approximate && !overflow {
                    let (sum, overflowed) = integerSum.addingReportingOverflow(number)
                    if overflowed { overflow = true } else { integerSum = sum }
                }
            case .unsigned(let number):
                realSum += Double(number)
                overflow = overflow || !approximate
            default:
                if case .text(let text) = value {
                    realSum += SQLValue.numericPrefix(text)
                } else {
                    realSum += value.doubleValue ?? 0
                }
                approximate = true
            }
        case .minimum, .maximum:
            if extreme.isNull {
                extreme = value
            } else {
                let order = SQLValue.order(value, extreme)
                if kind == .minimum ? order < 0 : order > 0 { extreme = value }
            }
        }
    }

    /// The aggregate's value; `entity` and `text` (the call as written) name it in an
    /// overflow error.
    func result(entity: String, text: String) throws -> SQLValue {
        switch kind {
        case .count:
            return .integer(count)
        case .sum:
            guard count > 0 else { return .null }
            if overflow { throw CofferError.limitReached(.sum(entity: entity, property: text)) }
            return approximate ? .real(realSum) : .integer(integerSum)
        case .average:
            // An exact integer sum divides once; otherwise the running real sum.
            guard count > 0 else { return .null }
            return .real((approximate || overflow ? realSum : Double(integerSum)) / Double(count))
        case .total:
            return .real(realSum)
        case .minimum, .maximum:
            return extreme
        }
    }
}
