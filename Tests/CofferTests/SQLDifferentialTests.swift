@testable import Coffer
import CofferTestSupport
import Foundation
import Testing

/// Smart SQL against SQLite: random employees and departments stored in both, random
/// statements of every form (expressions, three-valued conditions, joins, grouping,
/// aggregates, DISTINCT, ORDER BY with LIMIT and OFFSET) run on both, and the results must
/// be identical: the same rows with the same storage classes (reals within rounding).
@Suite struct SQLDifferentialTests {
    /// The employees and departments of one random store, mirrored into SQLite.
    static func populate(_ store: Store, _ oracle: SQLiteOracle, random: inout SplitMix64) throws {
        try oracle.execute("""
            CREATE TABLE Department (id INTEGER PRIMARY KEY, code TEXT, name TEXT, budget INTEGER);
            CREATE TABLE Employee (id INTEGER PRIMARY KEY, name TEXT, department INTEGER, salary INTEGER, bonus REAL,
                                   city TEXT, grade INTEGER, active INTEGER, notes TEXT);
            """)
        let departmentNames = ["Sales", "Ops", "R&D", "sales", "Legal"]
        var departments: [SQLModel.Department] = (0..<Int.random(in: 0...7, using: &random)).map { index in
            SQLModel.Department(code: "D\(Int.random(in: 0...4, using: &random))", name: departmentNames.randomElement(using: &random) ?? "",
                                budget: Bool.random(using: &random) ? nil : Int.random(in: -100...1000, using: &random))
        }
        try store.box(for: SQLModel.Department.self).put(&departments)
        try oracle.insert("Department", columns: ["id", "code", "name", "budget"], rows: departments.map {
            [SQLValue($0.id), .text($0.code), .text($0.name), $0.budget.map { SQLValue($0) } ?? .null]
        })
        let names = ["ann", "Ann", "bob", "carl", "dora", "eve", ""]
        let cities: [String?] = [nil, "Paris", "Oslo", "paris", "Rome", ""]
        var employees: [SQLModel.Employee] = (0..<Int.random(in: 0...90, using: &random)).map { _ in
            var employee = SQLModel.Employee()
            employee.name = names.randomElement(using: &random) ?? ""
            if !departments.isEmpty, Int.random(in: 0...5, using: &random) > 0 {
                employee.department.targetId = departments[Int.random(in: 0..<departments.count, using: &random)].id
            }
            employee.salary = Int.random(in: 0...20, using: &random) == 0 ? Int.max / 2 - Int.random(in: 0...9, using: &random)
                : Int.random(in: -50...300, using: &random)
            employee.bonus = Bool.random(using: &random) ? nil : Double(Int.random(in: -8...40, using: &random)) / 4
            employee.city = cities.randomElement(using: &random) ?? nil
            employee.grade = Int.random(in: 0...3, using: &random) == 0 ? nil : Int.random(in: 0...5, using: &random)
            employee.active = Bool.random(using: &random)
            employee.notes = ["red fox", "blue fox", "red hen", ""].randomElement(using: &random) ?? ""
            return employee
        }
        try store.box(for: SQLModel.Employee.self).put(&employees)
        try oracle.insert("Employee", columns: ["id", "name", "department", "salary", "bonus", "city", "grade", "active", "notes"],
                          rows: employees.map { employee in
            [SQLValue(employee.id), .text(employee.name), employee.department.targetId.map { SQLValue($0) } ?? .null,
             SQLValue(employee.salary), employee.bonus.map { .real($0) } ?? .null, employee.city.map { .text($0) } ?? .null,
             employee.grade.map { SQLValue($0) } ?? .null, SQLValue(employee.active), .text(employee.notes)]
        })
    }

    /// Whether two results are the same rows: in order when `ordered`, else as multisets.
    static func same(_ a: [[SQLValue]], _ b: [[SQLValue]], ordered: Bool) -> Bool {
        guard a.count == b.count else { return false }
        func sorted(_ rows: [[SQLValue]]) -> [[SQLValue]] {
            rows.sorted { x, y in
                for (u, v) in zip(x, y) {
                    let order = SQLValue.order(u, v)
                    if order != 0 { return order < 0 }
                }
                return false
            }
        }
        let (x, y) = ordered ? (a, b) : (sorted(a), sorted(b))
        return zip(x, y).allSatisfy { row, other in
            row.count == other.count && zip(row, other).allSatisfy(sameValue)
        }
    }

    static func sameValue(_ a: SQLValue, _ b: SQLValue) -> Bool {
        switch (a, b) {
        case (.real(let x), .real(let y)):
            return x == y || abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
        default:
            return a == b
        }
    }

    /// Runs `statement` on both and records any difference.
    static func check(_ statement: String, ordered: Bool, store: Store, oracle: SQLiteOracle) {
        let expected = Result { try oracle.query(statement) }
        let actual = Result { try store.query(sql: statement).rows.map(\.values) }
        switch (expected, actual) {
        case (.success(let rows), .success(let got)):
            #expect(same(rows, got, ordered: ordered), "\(statement)\nSQLite: \(rows.prefix(8))\nCoffer: \(got.prefix(8))")
        case (.failure, .failure):
            break   // both refuse (an integer SUM that overflows)
        case (.success(let rows), .failure(let error)):
            Issue.record("\(statement)\nSQLite: \(rows.prefix(8))\nCoffer failed: \(error)")
        case (.failure(let error), .success(let got)):
            Issue.record("\(statement)\nSQLite failed: \(error)\nCoffer: \(got.prefix(8))")
        }
    }

    /// Edge cases of values and arithmetic, each against SQLite.
    @Test func edgeCasesMatchSQLite() throws {
        let oracle = try SQLiteOracle()
        try withStore { store in
            var random = SplitMix64(state: 5)
            try Self.populate(store, oracle, random: &random)
            for statement in [
                "SELECT (9223372036854775807 + 1) || 'x', 1.5 || '', 0.1 || '', 100.0 || '', -0.5 || '|', (1e300 * 10) || '', (1e308 * 10) || '', (-1e308 * 10) || ''",
                "SELECT -0xFFFFFFFFFFFFFFFF, -0x7FFFFFFFFFFFFFFF, 0x10, -9223372036854775808, 9223372036854775808",
                "SELECT -9223372036854775807 - 1, (-9223372036854775807 - 1) / -1, (-9223372036854775807 - 1) % -1, 5 % -1",
                "SELECT 7 / 2, -7 / 2, 7 % -3, -7 % 3, 7.5 % 2, 1 / 0, 1.0 / 0, 5 % 0, 9223372036854775807 * 2",
                "SELECT LENGTH(1.5), LENGTH(100), LENGTH(''), LENGTH(NULL), ABS(-2.5), ABS(NULL), TYPEOF(1.0), TYPEOF('a')",
                "SELECT 1 = 1.0, 2 > 1.5, 'a' < 'b', 'B' < 'a', NULL = NULL, NULL IS NULL, 1 IS 1.0, 1 IS NOT NULL",
                "SELECT 1 IN (1.0, NULL), 2 IN (1, NULL), 2 NOT IN (1, NULL), NULL IN (), 1 IN (), 1 NOT IN ()",
                "SELECT COUNT(*), SUM(salary), AVG(salary), TOTAL(bonus), MIN(city), MAX(city) FROM Employee WHERE salary < 0 AND salary > 0",
                "SELECT name FROM Employee ORDER BY id LIMIT -1 OFFSET 3",
                "SELECT name FROM Employee ORDER BY id LIMIT 2 OFFSET -5",
                "SELECT CASE 1 WHEN 1.0 THEN 'one' ELSE 'other' END, CASE NULL WHEN NULL THEN 'null' ELSE 'else' END",
                "SELECT COALESCE(NULL, NULL, 3), IFNULL(NULL, 'x'), NULLIF(1, 1.0), NULLIF('a', 'b'), MIN(3, 1.5, 2), MAX('a', 'b', NULL)",
            ] {
                Self.check(statement, ordered: true, store: store, oracle: oracle)
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4]) func randomStatementsMatchSQLite(seed: UInt64) throws {
        var random = SplitMix64(state: seed &* 0x9E37_79B9)
        let oracle = try SQLiteOracle()
        try withStore { store in
            try Self.populate(store, oracle, random: &random)
            var generator = SQLStatementGenerator(random: random)
            // COFFER_SQL_STATEMENTS runs more per seed (the suite runs 150).
            let count = Int(ProcessInfo.processInfo.environment["COFFER_SQL_STATEMENTS"] ?? "") ?? 150
            for _ in 0..<count {
                let (statement, ordered) = generator.statement()
                Self.check(statement, ordered: ordered, store: store, oracle: oracle)
            }
        }
    }
}

/// Random, well-typed Smart SQL statements over `Employee e` and `Department d` that SQLite
/// runs as written.
struct SQLStatementGenerator {
    var random: SplitMix64
    /// Whether the statement joins Department as `d`.
    private var joined = false

    init(random: SplitMix64) {
        self.random = random
    }

    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }

    mutating func integer(_ depth: Int) -> String {
        var columns = ["e.salary", "e.grade", "e.id", "e.active", "e.department", "LENGTH(e.name)"]
        if joined { columns += ["d.budget", "d.id"] }
        if depth <= 0 || chance(40) {
            return chance(70) ? pick(columns) : pick(["0", "1", "2", "-3", "7", "NULL", "100"])
        }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return "(\(integer(depth - 1)) \(pick(["+", "-", "*", "/", "%"])) \(integer(depth - 1)))"
        case 1: return "ABS(\(integer(depth - 1)))"
        case 2: return "COALESCE(\(integer(depth - 1)), \(integer(depth - 1)))"
        case 3: return "CASE WHEN \(condition(depth - 1)) THEN \(integer(depth - 1)) ELSE \(integer(depth - 1)) END"
        case 4: return "-(\(integer(depth - 1)))"
        default: return "LENGTH(\(text(depth - 1)))"
        }
    }

    mutating func real(_ depth: Int) -> String {
        if depth <= 0 || chance(40) { return chance(70) ? "e.bonus" : pick(["0.5", "1.25", "-2.0", "NULL"]) }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return "(\(real(depth - 1)) \(pick(["+", "-", "*"])) \(pick([real(depth - 1), integer(depth - 1)])))"
        case 1: return "IFNULL(\(real(depth - 1)), \(real(depth - 1)))"
        default: return "(\(integer(depth - 1)) * 0.5)"
        }
    }

    mutating func text(_ depth: Int) -> String {
        var columns = ["e.name", "e.city"]
        if joined { columns += ["d.name", "d.code"] }
        if depth <= 0 || chance(40) { return chance(75) ? pick(columns) : pick(["'Paris'", "'ann'", "''", "'D1'", "NULL"]) }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return "\(pick(["LOWER", "UPPER"]))(\(text(depth - 1)))"
        case 1: return "(\(text(depth - 1)) || \(text(depth - 1)))"
        case 2: return "COALESCE(\(text(depth - 1)), \(text(depth - 1)))"
        default: return "NULLIF(\(text(depth - 1)), \(text(depth - 1)))"
        }
    }

    mutating func condition(_ depth: Int) -> String {
        if depth <= 0 || chance(35) {
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1: return "\(integer(1)) \(pick(["=", "<>", "<", "<=", ">", ">="])) \(integer(1))"
            case 2: return "\(text(1)) \(pick(["=", "<>", "<", ">="])) \(text(1))"
            case 3: return "\(real(1)) \(pick(["=", "<", ">="])) \(pick([real(1), integer(1)]))"
            case 4: return "\(integer(1))\(chance(30) ? " NOT" : "") BETWEEN \(integer(0)) AND \(integer(0))"
            case 5: return "\(integer(1))\(chance(30) ? " NOT" : "") IN (\((0..<Int.random(in: 0...4, using: &random)).map { _ in integer(0) }.joined(separator: ", ")))"
            case 6: return "\(text(1))\(chance(30) ? " NOT" : "") LIKE \(pick(["'a%'", "'%n'", "'_o%'", "'%'", "'P_r%'", "'%A%'"]))"
            case 7: return "\(pick([integer(1), text(1), real(1)])) IS\(chance(50) ? " NOT" : "") NULL"
            default: return "\(integer(1)) IS\(chance(50) ? " NOT" : "") \(integer(1))"
            }
        }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return "(\(condition(depth - 1)) AND \(condition(depth - 1)))"
        case 1: return "(\(condition(depth - 1)) OR \(condition(depth - 1)))"
        default: return "NOT (\(condition(depth - 1)))"
        }
    }

    mutating func from() -> String {
        joined = chance(45)
        guard joined else { return "Employee e" }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return "Employee e JOIN Department d ON e.department = d.id"
        case 1: return "Employee e LEFT JOIN Department d ON e.department = d.id"
        case 2: return "Employee e LEFT JOIN Department d ON d.name = e.city OR d.code = e.name"
        default: return "Employee e, Department d"
        }
    }

    /// A statement and whether its ORDER BY fixes the order of its rows.
    mutating func statement() -> (String, Bool) {
        let source = from()
        let filter = chance(75) ? " WHERE \(condition(2))" : ""
        if chance(40) {
            // Grouped.
            var columns = ["e.salary", "e.grade", "e.active", "e.department", "e.name", "e.city"]
            if joined { columns += ["d.budget", "d.name", "d.code"] }
            let keys = (0..<Int.random(in: 0...2, using: &random)).map { _ in pick(columns) }
            var items = keys
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let argument = pick([integer(1), real(1)])
                items.append(pick([
                    "COUNT(*)", "COUNT(\(argument))", "COUNT(DISTINCT \(pick([integer(0), text(0)])))", "SUM(\(integer(0)))",
                    "SUM(\(real(0)))", "AVG(\(argument))", "MIN(\(pick([argument, text(0)])))", "MAX(\(pick([argument, text(0)])))",
                    "TOTAL(\(argument))", "SUM(DISTINCT \(integer(0)))",
                ]))
            }
            var statement = "SELECT \(items.joined(separator: ", ")) FROM \(source)\(filter)"
            if !keys.isEmpty { statement += " GROUP BY \(keys.joined(separator: ", "))" }
            if chance(30) { statement += " HAVING COUNT(*) \(pick([">", "<=", "="])) \(Int.random(in: 0...3, using: &random))" }
            return orderAndPage(statement, columns: items.count)
        }
        let items = (0..<Int.random(in: 1...4, using: &random)).map { _ in pick([integer(2), real(1), text(2), condition(1)]) }
        let distinct = chance(20) ? "DISTINCT " : ""
        return orderAndPage("SELECT \(distinct)\(items.joined(separator: ", ")) FROM \(source)\(filter)", columns: items.count)
    }

    /// Adds, at random, an ORDER BY over every column (so the order is fixed) in random
    /// directions and NULL placements, with LIMIT and OFFSET.
    private mutating func orderAndPage(_ statement: String, columns: Int) -> (String, Bool) {
        guard chance(50) else { return (statement, false) }
        let order = (1...columns).shuffled(using: &random).map { column in
            "\(column)\(pick(["", " ASC", " DESC"]))\(pick(["", "", " NULLS FIRST", " NULLS LAST"]))"
        }
        var text = statement + " ORDER BY " + order.joined(separator: ", ")
        if chance(50) {
            text += " LIMIT \(Int.random(in: 0...12, using: &random))"
            if chance(50) { text += " OFFSET \(Int.random(in: 0...5, using: &random))" }
        }
        return (text, true)
    }
}
