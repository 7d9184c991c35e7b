import Coffer
import Foundation
import GRDB

/// The Smart SQL workload: employees (1,000,000 by default) in 100 departments, and the
/// same statements run by Coffer (`store.query(sql:)`) and by SQLite through GRDB on the
/// same rows: a group-by count on an indexed and on a plain property, a filtered aggregate,
/// and a join of two entities by a link with grouping. Both must give the same rows.
struct SQLWorkload {
    let count: Int
    let departments = 100
    /// Name -> (Coffer's statement, SQLite's statement): the same but for the join, which
    /// Coffer writes by the link's name.
    let statements: [(name: String, coffer: String, sqlite: String)] = [
        ("group by indexed", "SELECT city, COUNT(*) FROM Employee GROUP BY city",
         "SELECT city, COUNT(*) FROM employee GROUP BY city"),
        ("group by plain", "SELECT team, COUNT(*) FROM Employee GROUP BY team",
         "SELECT team, COUNT(*) FROM employee GROUP BY team"),
        ("filtered aggregate", "SELECT COUNT(*), SUM(salary), AVG(salary), MAX(salary) FROM Employee WHERE age BETWEEN 30 AND 34",
         "SELECT COUNT(*), SUM(salary), AVG(salary), MAX(salary) FROM employee WHERE age BETWEEN 30 AND 34"),
        ("join by link", "SELECT d.name, COUNT(*), AVG(e.salary) FROM Employee e JOIN Department d ON e.department GROUP BY d.name",
         "SELECT d.name, COUNT(*), AVG(e.salary) FROM employee e JOIN department d ON e.department = d.id GROUP BY d.name"),
    ]
    /// Each statement runs this many times after one untimed run; the median counts.
    let runs = 5

    /// Employee `index` (0-based): city (200 values, indexed), team (50 values, not
    /// indexed), age 20...69 (indexed), salary, department (1...100).
    func employee(_ index: Int) -> (city: String, team: String, age: Int, salary: Int, department: Int) {
        var generator = SeededGenerator(seed: UInt64(index) &+ 99)
        return ("city\(Int.random(in: 0..<200, using: &generator))", "team\(Int.random(in: 0..<50, using: &generator))",
                Int.random(in: 20...69, using: &generator), Int.random(in: 20_000...200_000, using: &generator),
                Int.random(in: 1...departments, using: &generator))
    }
}

/// What one contender measured on the SQL workload.
struct SQLResult: Codable {
    /// Statement name -> median milliseconds per run.
    var milliseconds: [String: Double] = [:]
    /// Statement name -> the rows, as sorted text (must agree between contenders).
    var rows: [String: String] = [:]
}

@StoredAs("Department")
struct SQLBenchDepartment: Entity {
    var id: Id = 0
    var name: String
}

@StoredAs("Employee")
struct SQLBenchEmployee: Entity {
    var id: Id = 0
    @Index var city: String
    var team: String
    @Index var age: Int
    var salary: Int
    var department: ToOne<SQLBenchDepartment> = nil
}

/// The median of `runs` timed runs of `body` in milliseconds, after one untimed run, and
/// the last run's result.
func timeStatement<T>(_ runs: Int, _ body: () throws -> T) throws -> (Double, T) {
    var result = try body()
    var times: [Double] = []
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        result = try body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return (median(times), result)
}

/// Rows as text for comparing contenders: each value rounded to 6 significant digits
/// (averages), rows sorted.
func rowText(_ rows: [[String]]) -> String {
    rows.map { $0.joined(separator: "|") }.sorted().joined(separator: "\n")
}

func numberText(_ value: Double) -> String { String(format: "%.6g", value) }

func runCofferSQL(_ workload: SQLWorkload, directory: String) throws -> SQLResult {
    var result = SQLResult()
    let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 31))
    var departments = (1...workload.departments).map { SQLBenchDepartment(name: "department \($0)") }
    try store.box(for: SQLBenchDepartment.self).put(&departments)
    let box = store.box(for: SQLBenchEmployee.self)
    for start in stride(from: 0, to: workload.count, by: 100_000) {
        let batch = (start..<min(start + 100_000, workload.count)).map { index -> SQLBenchEmployee in
            let values = workload.employee(index)
            return SQLBenchEmployee(city: values.city, team: values.team, age: values.age, salary: values.salary,
                                    department: ToOne(id: departments[values.department - 1].id))
        }
        try box.put(batch)
    }
    // For profiling (perf, callgrind): COFFER_SQL_ONLY=<statement name> runs that statement
    // alone, COFFER_SQL_RUNS times.
    let only = ProcessInfo.processInfo.environment["COFFER_SQL_ONLY"]
    let runs = ProcessInfo.processInfo.environment["COFFER_SQL_RUNS"].flatMap(Int.init) ?? workload.runs
    for statement in workload.statements where only == nil || only == statement.name {
        let (milliseconds, rows) = try timeStatement(runs) { try store.query(sql: statement.coffer) }
        result.milliseconds[statement.name] = milliseconds
        result.rows[statement.name] = rowText(rows.rows.map { row in
            row.values.map { value in
                switch value {
                case .real(let number): return numberText(number)
                case .text(let text): return text
                default: return value.description
                }
            }
        })
    }
    try store.close()
    return result
}

func runGRDBSQL(_ workload: SQLWorkload, directory: String) throws -> SQLResult {
    var result = SQLResult()
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let dbQueue = try DatabaseQueue(path: directory + "/sql.sqlite")
    try dbQueue.write { db in
        try db.execute(sql: """
            CREATE TABLE department (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE employee (id INTEGER PRIMARY KEY, city TEXT NOT NULL, team TEXT NOT NULL, age INTEGER NOT NULL,
                                   salary INTEGER NOT NULL, department INTEGER REFERENCES department(id));
            CREATE INDEX employee_city ON employee(city);
            CREATE INDEX employee_age ON employee(age);
            """)
        let department = try db.makeStatement(sql: "INSERT INTO department (id, name) VALUES (?, ?)")
        for index in 1...workload.departments { try department.execute(arguments: [index, "department \(index)"]) }
        let employee = try db.makeStatement(sql: "INSERT INTO employee (id, city, team, age, salary, department) VALUES (?, ?, ?, ?, ?, ?)")
        for index in 0..<workload.count {
            let values = workload.employee(index)
            try employee.execute(arguments: [index + 1, values.city, values.team, values.age, values.salary, values.department])
        }
    }
    try dbQueue.write { db in try db.execute(sql: "ANALYZE") }
    for statement in workload.statements {
        let (milliseconds, rows) = try timeStatement(workload.runs) {
            try dbQueue.read { db in try Row.fetchAll(db, sql: statement.sqlite) }
        }
        result.milliseconds[statement.name] = milliseconds
        result.rows[statement.name] = rowText(rows.map { row in
            (0..<row.count).map { column -> String in
                let value = row[column] as DatabaseValue
                switch value.storage {
                case .double(let number): return numberText(number)
                case .int64(let number): return String(number)
                case .string(let text): return text
                case .null: return "NULL"
                case .blob(let data): return data.base64EncodedString()
                }
            }
        })
    }
    return result
}
