import ArgumentParser
import Coffer
import Foundation

struct Sql: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Runs a Smart SQL SELECT: one JSON object per row (a table with --table, the plan with --explain).",
        discussion: """
            Tables are entities, columns properties, by their stored names; SmartStore's {Entity} and \
            {Entity:path} descriptors work too. Parameters fill ? in order (--param) or :name (--named); \
            each value is JSON: 42, 1.5, "text", null, true.
            """)

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: #"The statement, e.g. "SELECT city, COUNT(*) FROM Person GROUP BY city"."#)
    var statement: String

    @Option(name: .customLong("param"), help: "The value of the next ? (repeatable), as JSON.")
    var positional: [String] = []

    @Option(name: .customLong("named"), help: "The value of a :name parameter, as name=JSON (repeatable).")
    var named: [String] = []

    @Flag(help: "Print the rows as a table with a header.")
    var table = false

    @Flag(help: "Print how the statement runs instead of running it.")
    var explain = false

    func run() throws {
        guard positional.isEmpty || named.isEmpty else { throw ValidationError("use --param or --named, not both") }
        let values = try positional.map(Self.value)
        var byName: [String: SQLValue] = [:]
        for pair in named {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--named takes name=value, not \(pair)")
            }
            let name = String(pair[..<equals])
            guard byName[name] == nil else { throw ValidationError("--named gives \(name) twice") }
            byName[name] = try Self.value(String(pair[pair.index(after: equals)...]))
        }
        let store = try openStoreOrFail(directory)
        defer { try? store.close() }
        if explain {
            print(try failing { named.isEmpty ? try store.explain(sql: statement, parameters: values)
                                              : try store.explain(sql: statement, parameters: byName) })
            return
        }
        if table {
            let rows = try failing { named.isEmpty ? try store.query(sql: statement, parameters: values)
                                                   : try store.query(sql: statement, parameters: byName) }
            print(Self.table(rows))
            return
        }
        try failing {
            if named.isEmpty {
                try store.forEachRow(sql: statement, parameters: values) { print($0.json) }
            } else {
                try store.forEachRow(sql: statement, parameters: byName) { print($0.json) }
            }
        }
    }

    /// A parameter from its JSON text: a number, a string, null, true or false.
    static func value(_ text: String) throws -> SQLValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed {
        case "null": return .null
        case "true": return .integer(1)
        case "false": return .integer(0)
        default: break
        }
        if let integer = Int64(trimmed) { return .integer(integer) }
        if let unsigned = UInt64(trimmed) { return .unsigned(unsigned) }
        // Anything else is JSON: a number (never NaN or infinite), or a string.
        if let parsed = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8), options: .fragmentsAllowed) {
            if let text = parsed as? String { return .text(text) }
            if let number = parsed as? NSNumber, !(parsed is Bool), number.doubleValue.isFinite { return .real(number.doubleValue) }
        }
        throw ValidationError(#"a parameter is JSON: 42, 1.5, "text", null, true or false; not \#(text)"#)
    }

    /// The rows as an aligned table: a header, a rule, one line per row; text as it is,
    /// NULL as NULL.
    static func table(_ rows: SQLRows) -> String {
        func cell(_ value: SQLValue) -> String {
            switch value {
            case .text(let text): return text.replacingOccurrences(of: "\n", with: "\\n")
            default: return value.description
            }
        }
        let cells = rows.rows.map { $0.values.map(cell) }
        let widths = rows.columns.indices.map { column in
            cells.reduce(rows.columns[column].count) { max($0, $1[column].count) }
        }
        func line(_ items: [String]) -> String {
            zip(items, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ")
                .trimmingCharacters(in: .whitespaces)
        }
        var lines = [line(rows.columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-")]
        lines += cells.map(line)
        lines.append("(\(rows.count) row\(rows.count == 1 ? "" : "s"))")
        return lines.joined(separator: "\n")
    }
}
