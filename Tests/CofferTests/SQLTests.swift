@testable import Coffer
import CofferTestSupport
import Foundation
import Testing

/// Smart SQL's own forms: SmartStore's descriptors, joins by a link's or a relation's name,
/// full-text MATCH, parameters, decoding, streaming, plans, and errors at their position.
@Suite struct SQLTests {
    /// SmartStore's employees and departments: Ann and Bob in Sales, Carl in Ops, Dora in
    /// none; skills linked many-to-many.
    static func withStaff(_ body: (Store) throws -> Void) throws {
        try withStore { store in
            var sales = SQLModel.Department(code: "S", name: "Sales", budget: 1000)
            var ops = SQLModel.Department(code: "O", name: "Ops", budget: nil)
            try store.box(for: SQLModel.Department.self).put(&sales)
            try store.box(for: SQLModel.Department.self).put(&ops)
            var swift = SQLModel.Skill(label: "Swift")
            var sql = SQLModel.Skill(label: "SQL")
            try store.box(for: SQLModel.Skill.self).put(&swift)
            try store.box(for: SQLModel.Skill.self).put(&sql)
            var ann = SQLModel.Employee(name: "Ann", salary: 120, bonus: 1.5, city: "Paris", grade: 3, notes: "red fox")
            ann.department.targetId = sales.id
            ann.skills.append(swift)
            ann.skills.append(sql)
            var bob = SQLModel.Employee(name: "Bob", salary: 80, bonus: nil, city: "Oslo", grade: nil, notes: "blue fox")
            bob.department.targetId = sales.id
            bob.skills.append(sql)
            var carl = SQLModel.Employee(name: "Carl", salary: 100, bonus: 2, city: nil, grade: 1, notes: "red hen")
            carl.department.targetId = ops.id
            let dora = SQLModel.Employee(name: "Dora", salary: 60, bonus: nil, city: "Paris", grade: 2, active: false, notes: "")
            var staff = [ann, bob, carl, dora]
            try store.box(for: SQLModel.Employee.self).put(&staff)
            try body(store)
        }
    }

    static func values(_ store: Store, _ sql: String, _ parameters: [SQLValue] = []) throws -> [[SQLValue]] {
        try store.query(sql: sql, parameters: parameters).rows.map(\.values)
    }

    @Test func smartStoreDescriptorsReadColumnsTheWholeObjectItsIdAndItsModificationTime() throws {
        try Self.withStaff { store in
            // The guide's join: employees with their department's name.
            let joined = try Self.values(store, """
                SELECT {Employee:name}, {Department:name} FROM {Employee}, {Department}
                WHERE {Department:id} = {Employee:department} ORDER BY {Employee:name}
                """)
            #expect(joined == [["Ann", "Sales"], ["Bob", "Sales"], ["Carl", "Ops"]])
            // The guide's count.
            #expect(try Self.values(store, "SELECT COUNT(*) FROM {Employee}") == [[4]])
            let soup = try store.query(sql: "SELECT {Employee:_soup}, {Employee:_soupEntryId} FROM {Employee} WHERE {Employee:name} = 'Ann'")
            guard case .text(let json)? = soup.rows.first?.values.first else {
                Issue.record("no _soup: \(soup)")
                return
            }
            #expect(json.hasPrefix("{\"id\":1,") && json.contains("\"name\":\"Ann\"") && json.contains("\"skills\":[1,2]"))
            #expect(soup.rows.first?.values.last == 1)
            let ann = try #require(try store.box(for: SQLModel.Employee.self).get(1))
            let modified = try Self.values(store, "SELECT {Employee:_soupLastModifiedDate} FROM {Employee} WHERE id = 1")
            #expect(modified == [[.integer(Int64((ann.modified.timeIntervalSince1970 * 1000).rounded()))]])
            // Department has no @UpdatedAt.
            #expect(throws: CofferError.self) { try store.query(sql: "SELECT {Department:_soupLastModifiedDate} FROM {Department}") }
        }
    }

    @Test func linksAndRelationsJoinByName() throws {
        try Self.withStaff { store in
            let byName = try Self.values(store, "SELECT e.name, d.name FROM Employee e JOIN Department d ON e.department ORDER BY 1")
            let byEquality = try Self.values(store, "SELECT e.name, d.name FROM Employee e JOIN Department d ON e.department = d.id ORDER BY 1")
            #expect(byName == byEquality && byName.count == 3)
            // The link from the joined table back to an earlier one.
            let reverse = try Self.values(store, "SELECT d.name, e.name FROM Department d JOIN Employee e ON e.department ORDER BY 2")
            #expect(reverse == byName.map { [$0[1], $0[0]] })
            // A left join keeps Dora with NULLs.
            let left = try Self.values(store, "SELECT e.name, d.name FROM Employee e LEFT JOIN Department d ON e.department ORDER BY 1")
            #expect(left.last == ["Dora", nil])
            // Many-to-many, both ways, and the backlink.
            let skills = try Self.values(store, "SELECT e.name, s.label FROM Employee e JOIN Skill s ON e.skills ORDER BY 1, 2")
            #expect(skills == [["Ann", "SQL"], ["Ann", "Swift"], ["Bob", "SQL"]])
            let holders = try Self.values(store, "SELECT s.label, e.name FROM Skill s JOIN Employee e ON e.skills ORDER BY 2, 1")
            #expect(holders == skills.map { [$0[1], $0[0]] })
            let backlink = try Self.values(store, "SELECT s.label, COUNT(*) FROM Skill s JOIN Employee e ON s.holders GROUP BY s.label ORDER BY 1")
            #expect(backlink == [["SQL", 2], ["Swift", 1]])
            let lonely = try Self.values(store, "SELECT e.name FROM Employee e LEFT JOIN Skill s ON e.skills WHERE s.id IS NULL ORDER BY 1")
            #expect(lonely == [["Carl"], ["Dora"]])
        }
    }

    @Test func matchSearchesFullTextProperties() throws {
        try Self.withStaff { store in
            let fox = try Self.values(store, "SELECT name FROM Employee WHERE notes MATCH 'fox' ORDER BY name")
            #expect(fox == [["Ann"], ["Bob"]])
            let red = try Self.values(store, "SELECT name FROM {Employee} WHERE {Employee} MATCH ? ORDER BY name", ["red"])
            #expect(red == [["Ann"], ["Carl"]])
            let either = try Self.values(store, "SELECT COUNT(*) FROM Employee WHERE notes MATCH 'fox' OR salary < 70")
            #expect(either == [[3]])
            #expect(throws: CofferError.self) { try store.query(sql: "SELECT name FROM Employee WHERE name MATCH 'x'") }
            #expect(throws: CofferError.self) { try store.query(sql: "SELECT name FROM Employee WHERE notes MATCH '\"unclosed'") }
        }
    }

    @Test func parametersArePositionalNumberedOrNamed() throws {
        try Self.withStaff { store in
            #expect(try Self.values(store, "SELECT name FROM Employee WHERE salary > ? AND city = ? ORDER BY 1", [90, "Paris"]) == [["Ann"]])
            #expect(try Self.values(store, "SELECT ?2, ?1", [1, "two"]) == [["two", 1]])
            let named = try store.query(sql: "SELECT name FROM Employee WHERE salary BETWEEN :low AND :high ORDER BY name",
                                        parameters: ["low": 70, "high": 110])
            #expect(named.rows.map(\.values) == [["Bob"], ["Carl"]])
            #expect(try Self.values(store, "SELECT COUNT(*) FROM Employee WHERE grade IS ?", [nil]) == [[1]])
            for (statement, parameters) in [("SELECT ?", [SQLValue]()), ("SELECT 1", [1]), ("SELECT :a", [1])] {
                #expect(throws: CofferError.self, "\(statement)") { try store.query(sql: statement, parameters: parameters) }
            }
            #expect(throws: CofferError.self) { try store.query(sql: "SELECT :a", parameters: ["b": 1]) }
            #expect(throws: CofferError.self) { try store.query(sql: "SELECT ?", parameters: ["a": 1]) }
        }
    }

    /// A grouping that reads more fields than fit a byte's count (130) runs and sums each:
    /// the loop numbered the fields it reads in a byte and trapped past 127.
    @Test func anAggregateOverManyFieldsReadsEachOfThem() throws {
        try withStore { store in
            var rows = (1...3).map { n in SQLModel.Wide(f0: n % 2) }
            for index in rows.indices {
                rows[index].f127 = index + 1
                rows[index].f128 = 10 * (index + 1)
                rows[index].f129 = 100 * (index + 1)
            }
            try store.box(for: SQLModel.Wide.self).put(rows)
            let sums = (0..<130).map { "SUM(f\($0))" }.joined(separator: ", ")
            let grouped = try Self.values(store, "SELECT f0, \(sums) FROM Wide GROUP BY f0 ORDER BY f0")
            #expect(grouped.count == 2)
            #expect(grouped.map { Array($0.suffix(3)) } == [[2, 20, 200], [4, 40, 400]])
            #expect(grouped.map { $0[1] } == [0, 2])
        }
    }

    /// A GROUP BY of an indexed property with only counts is answered from the index: the
    /// same groups as the general path (forced here by a condition), NULLs included, and
    /// strings longer than an index key holds, which share a cut key, still apart.
    @Test func groupingByAnIndexGivesTheGeneralPathsGroups() throws {
        try Self.withStaff { store in
            let long = String(repeating: "x", count: 500)
            try store.box(for: SQLModel.Employee.self).put([
                SQLModel.Employee(name: long + "a", salary: 80, grade: nil), SQLModel.Employee(name: long + "b", salary: 80),
                SQLModel.Employee(name: long + "a", salary: 100), SQLModel.Employee(name: "Ann", salary: 60, grade: 3),
            ])
            for column in ["name", "salary", "grade"] {
                let statement = "SELECT \(column), COUNT(*), COUNT(\(column)) FROM Employee GROUP BY \(column)"
                #expect(try store.explain(sql: statement).contains("index on \(column) walked in order"), "\(column)")
                let indexed = try Self.values(store, statement + " ORDER BY 1")
                let general = try Self.values(store, "SELECT \(column), COUNT(*), COUNT(\(column)) FROM Employee WHERE 1 = 1 GROUP BY \(column) ORDER BY 1")
                #expect(try store.explain(sql: "SELECT \(column), COUNT(*) FROM Employee WHERE 1 = 1 GROUP BY \(column)").contains("walked in order") == false)
                #expect(indexed == general, "\(column)")
            }
            let names = try Self.values(store, "SELECT name, COUNT(*) FROM Employee GROUP BY name HAVING COUNT(*) > 1 ORDER BY 1")
            #expect(names == [["Ann", 2], [.text(long + "a"), 2]])
        }
    }

    /// Grouping by text merges canonically equal spellings, ASCII or not (U+212A KELVIN SIGN
    /// is "K"; "é" precomposed and decomposed) under the first row's spelling, whether the
    /// key is read as bytes (a plain column no condition reads), from a hashed table's rows
    /// (grouped per row of it), or by the general path; hash joins on integer and text keys
    /// match as the values compare.
    @Test func groupingByTextMergesCanonicalSpellingsOnEveryPath() throws {
        try withStore { store in
            let departments = store.box(for: SQLModel.Department.self)
            var named = ["\u{212A}", "K", "e\u{301}"].enumerated().map { SQLModel.Department(code: "c\($0.offset)", name: $0.element, budget: nil) }
            try departments.put(&named)
            let cities: [String?] = ["\u{212A}", "K", "Paris", nil, "\u{E9}", "e\u{301}", "K", "Paris", "\u{212A}"]
            var staff = cities.enumerated().map { index, city in
                var employee = SQLModel.Employee(name: "n\(index)", salary: 10 * index, city: city)
                if index % 4 < 3 { employee.department.targetId = named[index % 4].id }
                return employee
            }
            try store.box(for: SQLModel.Employee.self).put(&staff)
            // Spellings compared as bytes: `String` equality is canonical.
            func spelled(_ rows: [[SQLValue]]) -> [[String]] {
                rows.map { row in row.map { value in
                    if case .text(let text) = value { return Array(text.utf8).map { String($0) }.joined(separator: ".") }
                    return value.description
                } }
            }

            let bytes = try Self.values(store, "SELECT city, COUNT(*), SUM(salary) FROM Employee GROUP BY city")
            let general = try Self.values(store, "SELECT city, COUNT(*), SUM(salary) FROM Employee WHERE salary + 0 >= 0 GROUP BY city")
            #expect(spelled(bytes) == spelled(general))
            #expect(spelled(bytes) == spelled([["\u{212A}", 4, 150], ["Paris", 2, 90], [.null, 1, 30], ["\u{E9}", 2, 90]]))

            let byInnerRow = try Self.values(store, "SELECT d.name, COUNT(*) FROM Employee e JOIN Department d ON e.department GROUP BY d.name")
            #expect(spelled(byInnerRow) == spelled([["\u{212A}", 5], ["e\u{301}", 2]]))
            let left = try Self.values(store, "SELECT d.name, COUNT(*) FROM Employee e LEFT JOIN Department d ON e.department GROUP BY d.name")
            #expect(spelled(left) == spelled([["\u{212A}", 5], ["e\u{301}", 2], [.null, 2]]))
            let computed = try Self.values(store, "SELECT d.name || '', COUNT(*) FROM Employee e LEFT JOIN Department d ON e.department GROUP BY d.name || ''")
            #expect(spelled(computed) == spelled(left))

            // A hash join on text: each employee meets every department whose name equals its city.
            let byText = try Self.values(store, "SELECT e.name, d.code FROM Employee e JOIN Department d ON d.name = e.city ORDER BY e.id, d.id")
            var expected: [[SQLValue]] = []
            for employee in staff {
                for department in named where employee.city == department.name { expected.append([.text(employee.name), .text(department.code)]) }
            }
            #expect(byText == expected && expected.count == 10)
            // An integer key met by a real of the same value, and keys outside the ids' range.
            let byReal = try Self.values(store, "SELECT e.name, d.code FROM Employee e JOIN Department d ON d.id = e.salary / 10.0 - 1 ORDER BY e.id")
            #expect(byReal == [["n2", "c0"], ["n3", "c1"], ["n4", "c2"]])
        }
    }

    /// Integers and reals compare exactly, also where the planner or an index answers: 2^53 + 1
    /// is above the real 2^53, which a comparison through Double would call equal.
    @Test func integersAndRealsCompareExactlyOnIndexAndScan() throws {
        try withStore { store in
            let big = 9_007_199_254_740_993
            try store.box(for: SQLModel.Employee.self).put([SQLModel.Employee(name: "big", salary: big, bonus: 9_007_199_254_740_992)])
            let cases: [(String, Int64)] = [
                ("salary = 9007199254740992.0", 0), ("salary > 9007199254740992.0", 1), ("salary IN (9007199254740992.0)", 0),
                ("salary BETWEEN 9007199254740992.0 AND 9007199254740992.5", 0), ("salary = 9007199254740993", 1),
                ("bonus >= 9007199254740993", 0), ("bonus < 9007199254740993", 1), ("bonus = 9007199254740992", 1),
            ]
            for (condition, count) in cases {
                for statement in ["SELECT COUNT(*) FROM Employee WHERE \(condition)", "SELECT COUNT(*) FROM Employee WHERE 1 = 1 AND (\(condition) OR 0)"] {
                    let found = try Self.values(store, statement)
                    #expect(found == [[.integer(count)]], "\(statement)")
                }
            }
            // The join looks the salary up in the index (the table is large enough) or hashes it.
            let joined = try Self.values(store, "SELECT COUNT(*) FROM Employee a JOIN Employee b ON b.salary = a.bonus")
            #expect(joined == [[0]])
        }
    }

    /// A damaged catalog entry fails the statements that name its entity, not the others.
    @Test func aDamagedCatalogEntryFailsOnlyTheStatementsNamingIt() throws {
        try Self.withStaff { store in
            try store.performWrite { transaction in
                let catalog = try #require(store.catalogDatabase)
                let garbage = Array("{not json".utf8)
                try garbage.withUnsafeBytes { try Catalog.putRaw(key: Catalog.entityKey("Skill"), value: $0, dbi: catalog, in: transaction) }
            }
            #expect(try Self.values(store, "SELECT COUNT(*) FROM Employee") == [[4]])
            #expect { try store.query(sql: "SELECT label FROM Skill") } throws: { error in
                guard case CofferError.damagedStore(.catalog, _) = error else { return false }
                return true
            }
        }
    }

    /// SQL's BETWEEN is empty when its bounds are reversed; the DSL's `between` takes them in
    /// either order, so the planner gets it as two comparisons.
    @Test func betweenWithReversedBoundsIsEmptyOnIndexAndScan() throws {
        try Self.withStaff { store in
            for column in ["salary", "bonus", "id"] {
                let reversed = try Self.values(store, "SELECT COUNT(*) FROM Employee WHERE \(column) BETWEEN 200 AND 0")
                #expect(reversed == [[0]], "\(column)")
                let ordered = try Self.values(store, "SELECT COUNT(*) FROM Employee WHERE \(column) BETWEEN 0 AND 200")
                #expect(ordered == [[column == "bonus" ? 2 : 4]], "\(column)")
            }
        }
    }

    @Test func rowsDecodeIntoStructsAndStream() throws {
        struct Payroll: Decodable, Equatable {
            var department: String?
            var staff: Int
            var total: Int64
            var average: Double
            var top: Int8
        }
        try Self.withStaff { store in
            let rows = try store.query(sql: """
                SELECT d.name AS department, COUNT(*) AS staff, SUM(e.salary) AS total, AVG(e.salary) AS average, MAX(e.grade) AS top
                FROM Employee e LEFT JOIN Department d ON e.department GROUP BY d.name ORDER BY department NULLS LAST
                """)
            #expect(rows.columns == ["department", "staff", "total", "average", "top"])
            let payroll = try rows.decode(Payroll.self)
            #expect(payroll == [Payroll(department: "Ops", staff: 1, total: 100, average: 100, top: 1),
                                Payroll(department: "Sales", staff: 2, total: 200, average: 100, top: 3),
                                Payroll(department: nil, staff: 1, total: 60, average: 60, top: 2)])
            // A value that does not fit is an error naming the column.
            struct Tiny: Decodable { var salary: Int8 }
            #expect(throws: DecodingError.self) { try store.query(sql: "SELECT salary * 2 AS salary FROM Employee WHERE name = 'Ann'").decode(Tiny.self) }
            // Streaming stops at LIMIT.
            var seen: [String] = []
            try store.forEachRow(sql: "SELECT name FROM Employee LIMIT 2") { row in
                if case .text(let name)? = row["name"] { seen.append(name) }
            }
            #expect(seen == ["Ann", "Bob"])
        }
    }

    @Test func storedTypesMapToSQLClasses() throws {
        try withStore { store in
            let date = Date(timeIntervalSince1970: 1_700_000_000.5)
            let uuid = UUID()
            var everything = Everything()
            everything.bool = true
            everything.uint64 = .max
            everything.date = date
            everything.uuid = uuid
            everything.data = Data([1, 2, 3])
            everything.strings = ["a", "b"]
            everything.mood = .grumpy
            everything.float = 0.5
            try store.box(for: Everything.self).put(&everything)
            let row = try #require(try store.query(sql: """
                SELECT bool, uint64, date, uuid, data, strings, mood, float, optInt, typeof(optInt), uint64 > 9223372036854775807
                FROM Everything
                """).rows.first)
            #expect(row.values == [1, .unsigned(.max), .real(1_700_000_000.5), .text(uuid.uuidString), .blob(Data([1, 2, 3])),
                                   #"["a","b"]"#, "grumpy", 0.5, nil, "null", 1])
        }
    }

    @Test func explainNamesIndexesLookUpsAndHashes() throws {
        try Self.withStaff { store in
            let indexed = try store.explain(sql: "SELECT name FROM Employee WHERE salary = 80 AND bonus > 1")
            #expect(indexed.hasPrefix("Employee: index on salary (1 span) for salary == 80"), "\(indexed)")
            #expect(indexed.contains("check on each record"))
            let scan = try store.explain(sql: "SELECT name FROM Employee WHERE bonus > 1 LIMIT 1")
            #expect(scan.hasPrefix("Employee: full scan of the table") && scan.contains("stopping early"), "\(scan)")
            let join = try store.explain(sql: "SELECT e.name FROM Employee e JOIN Department d ON e.department")
            #expect(join.contains("Department d: full scan of the table, hashed once by d.id"), "\(join)")
            // EXPLAIN SELECT gives the plan as a row.
            let explained = try store.query(sql: "EXPLAIN SELECT COUNT(*) FROM Employee GROUP BY city")
            #expect(explained.columns == ["plan"])
            #expect(explained.rows.first?["plan"].map { "\($0)" }?.contains("group by city: COUNT(*)") == true)
        }
    }

    @Test func statementsThatCannotRunNameTheirPosition() throws {
        try Self.withStaff { store in
            let cases: [(String, Int, String)] = [
                ("SELECT name FORM Employee", 18, "unexpected text"),
                ("SELECT name FROM Staff", 18, "no entity named Staff"),
                ("SELECT nme FROM Employee", 8, "has no property nme"),
                ("SELECT name + 1 FROM Employee", 8, "needs numbers"),
                ("SELECT name FROM Employee WHERE COUNT(*) > 1", 33, "is an aggregate"),
                ("SELECT city, COUNT(*) FROM Employee", 8, "must appear in GROUP BY"),
                ("SELECT SUM(COUNT(*)) FROM Employee", 12, "cannot hold another aggregate"),
                ("SELECT name FROM Employee WHERE id IN (SELECT 1)", 40, "subqueries are not supported"),
                ("SELECT FOO(name) FROM Employee", 8, "no function FOO"),
                ("SELECT name FROM Employee WHERE name = 1", 38, "cannot compare TEXT with INTEGER"),
                ("SELECT 'unclosed", 8, "not closed"),
                ("SELECT e.name FROM Employee e JOIN Department e ON 1", 36, "names two tables"),
                ("SELECT name FROM Employee ORDER BY 3", 36, "has 1 column"),
                ("SELECT name FROM Employee LIMIT 1.5", 33, "takes an integer"),
                ("SELECT {Employee:name} FROM Employee e JOIN Employee m ON e.salary = m.salary", 8, "is ambiguous"),
                ("SELECT e.name, m.name FROM Employee e JOIN Employee m ON e.id = m.id ORDER BY name", 79, "is ambiguous"),
                ("SELECT skills FROM Employee", 8, "is a relation"),
                ("", 1, "empty"),
            ]
            for (statement, position, reason) in cases {
                do {
                    _ = try store.query(sql: statement)
                    Issue.record("\(statement) ran")
                } catch CofferError.invalidSQL(let at, _, let message) {
                    #expect(at == position && message.contains(reason), "\(statement): at \(at): \(message)")
                } catch {
                    Issue.record("\(statement): \(error)")
                }
            }
        }
    }

    /// The deepest statements accepted run on a thread with a small stack (512 KiB, as
    /// secondary threads on Apple platforms have) without overflowing it.
    @Test func theDeepestAcceptedStatementsFitASmallStack() throws {
        try Self.withStaff { store in
            let statements = [
                "SELECT " + String(repeating: "(", count: 60) + "salary" + String(repeating: ")", count: 60) + " FROM Employee",
                "SELECT " + Array(repeating: "salary", count: 60).joined(separator: " + ") + " FROM Employee",
                "SELECT name FROM Employee WHERE " + String(repeating: "NOT ", count: 60) + "salary > 1",
                "SELECT " + String(repeating: "-(", count: 30) + "1" + String(repeating: ")", count: 30),
                "SELECT " + String(repeating: "ABS(", count: 30) + "1" + String(repeating: ")", count: 30),
                "SELECT " + String(repeating: "CASE WHEN 1 THEN ", count: 30) + "1" + String(repeating: " END", count: 30),
            ]
            let results = LockedResults()
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                for statement in statements {
                    results.append(Result { try store.query(sql: statement).count })
                }
                done.signal()
            }
            thread.stackSize = 512 * 1024
            thread.start()
            done.wait()
            for (statement, result) in zip(statements, results.all) {
                if case .failure(let error) = result { Issue.record("\(statement.prefix(40)): \(error)") }
            }
        }
    }

    /// Results handed from another thread.
    final class LockedResults: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<Int, any Error>] = []
        func append(_ result: Result<Int, any Error>) { lock.withLock { results.append(result) } }
        var all: [Result<Int, any Error>] { lock.withLock { results } }
    }

    /// Random bytes, random tokens and random cuts of valid statements: every one runs or is
    /// refused with a `CofferError`, nothing traps.
    @Test func noInputCrashes() throws {
        var random = SplitMix64(state: 77)
        let words = ["SELECT", "FROM", "WHERE", "GROUP", "BY", "ORDER", "HAVING", "LIMIT", "OFFSET", "JOIN", "LEFT", "ON", "AND", "OR",
                     "NOT", "IN", "IS", "NULL", "LIKE", "BETWEEN", "MATCH", "CASE", "WHEN", "THEN", "ELSE", "END", "DISTINCT", "AS",
                     "Employee", "Department", "e", "d", "name", "salary", "e.name", "d.id", "{Employee}", "{Employee:name}",
                     "{Employee:_soup}", "COUNT(*)", "SUM", "(", ")", ",", "*", "+", "-", "/", "%", "||", "=", "<>", "<", ">=", "?", ":x",
                     "1", "-9223372036854775808", "9223372036854775808", "1e999", "'a'", "'", "\"", "x'0A'", "0x", ";", "--", "/*"]
        try Self.withStaff { store in
            for round in 0..<3000 {
                let statement: String
                switch round % 3 {
                case 0:
                    statement = (0..<Int.random(in: 1...14, using: &random)).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }
                        .joined(separator: " ")
                case 1:
                    statement = String(decoding: (0..<Int.random(in: 0...30, using: &random)).map { _ in UInt8.random(in: 0...127, using: &random) }, as: UTF8.self)
                default:
                    let valid = "SELECT d.name, COUNT(*), AVG(e.salary) FROM Employee e LEFT JOIN Department d ON e.department WHERE e.salary > ? GROUP BY d.name HAVING COUNT(*) > 0 ORDER BY 2 DESC LIMIT 5"
                    let scalars = Array(valid.unicodeScalars)
                    let cut = Int.random(in: 0...scalars.count, using: &random)
                    statement = String(String.UnicodeScalarView(scalars[..<cut]))
                }
                do {
                    _ = try store.query(sql: statement, parameters: statement.contains("?") ? [1] : [])
                } catch is CofferError {
                } catch {
                    Issue.record("\(statement): \(error)")
                }
            }
            // Deep nesting is refused, not a stack overflow.
            let deep = "SELECT " + String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000)
            #expect(throws: CofferError.self) { try store.query(sql: deep) }
            let negations = "SELECT " + String(repeating: "NOT ", count: 5000) + "1"
            #expect(throws: CofferError.self) { try store.query(sql: negations) }
        }
    }
}
