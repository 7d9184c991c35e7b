@testable import Coffer
import CofferTestSupport
import Foundation
import Testing

/// The DSL's typed grouping against the same aggregates computed in plain Swift from the
/// matching objects, on random data: every group, in first-appearance order, with nil
/// values left out.
@Suite struct GroupedQueryTests {
    @Test(arguments: [1, 2, 3]) func groupedAggregatesMatchPlainSwift(seed: UInt64) throws {
        var random = SplitMix64(state: seed &* 7_654_321)
        try withStore { store in
            let box = store.box(for: SQLModel.Employee.self)
            var employees: [SQLModel.Employee] = (0..<Int.random(in: 0...200, using: &random)).map { _ in
                SQLModel.Employee(name: ["ann", "bob", "carl"].randomElement(using: &random) ?? "",
                                  salary: Int.random(in: -100...1000, using: &random),
                                  bonus: Bool.random(using: &random) ? nil : Double(Int.random(in: -8...40, using: &random)) / 4,
                                  city: [nil, "Paris", "Oslo"].randomElement(using: &random) ?? nil,
                                  grade: Bool.random(using: &random) ? nil : Int.random(in: 0...5, using: &random))
            }
            try box.put(&employees)
            let floor = Int.random(in: -100...500, using: &random)
            let query = try box.query { SQLModel.Employee.salary >= floor }.build()
            let matching = employees.filter { $0.salary >= floor }.sorted { $0.id < $1.id }

            // By an optional property: nil is a group.
            let byCity = query.grouped(by: SQLModel.Employee.city)
            var cities: [String?] = []
            for employee in matching where !cities.contains(employee.city) { cities.append(employee.city) }
            func members(_ city: String?) -> [SQLModel.Employee] { matching.filter { $0.city == city } }
            #expect(try byCity.count().map(\.key) == cities)
            #expect(try byCity.count().map(\.count) == cities.map { members($0).count })
            #expect(try byCity.sum(SQLModel.Employee.salary).map(\.sum) == cities.map { members($0).reduce(0) { $0 + $1.salary } })
            #expect(try byCity.sum(SQLModel.Employee.bonus).map(\.sum) == cities.map { members($0).compactMap(\.bonus).reduce(0, +) })
            let averages = try byCity.average(SQLModel.Employee.grade).map(\.average)
            let expected = cities.map { city -> Double? in
                let grades = members(city).compactMap(\.grade)
                return grades.isEmpty ? nil : Double(grades.reduce(0, +)) / Double(grades.count)
            }
            #expect(averages == expected)
            #expect(try byCity.min(SQLModel.Employee.grade).map(\.min) == cities.map { members($0).compactMap(\.grade).min() })
            #expect(try byCity.max(SQLModel.Employee.salary).map(\.max) == cities.map { members($0).map(\.salary).max() })

            // By a required property.
            let byName = query.grouped(by: SQLModel.Employee.name)
            var names: [String] = []
            for employee in matching where !names.contains(employee.name) { names.append(employee.name) }
            #expect(try byName.count().map(\.key) == names)
            #expect(try byName.average(SQLModel.Employee.salary).map(\.average)
                    == names.map { name in
                        let salaries = matching.filter { $0.name == name }.map(\.salary)
                        return Double(salaries.reduce(0, +)) / Double(salaries.count)
                    })
            // The same counts through Smart SQL.
            let sql = try store.query(sql: "SELECT name, COUNT(*) FROM Employee WHERE salary >= ? GROUP BY name", parameters: [SQLValue(floor)])
            #expect(Dictionary(uniqueKeysWithValues: try byName.count().map { ($0.key, $0.count) })
                    == Dictionary(uniqueKeysWithValues: sql.rows.compactMap { row -> (String, Int)? in
                        guard case .text(let name) = row[0], case .integer(let count) = row[1] else { return nil }
                        return (name, Int(count))
                    }))
        }
    }

    /// NaN is never equal to itself; its keys still form one group.
    @Test func nanKeysFormOneGroup() throws {
        try withStore { store in
            let box = store.box(for: SQLModel.Employee.self)
            try box.put([SQLModel.Employee(name: "a", bonus: .nan), SQLModel.Employee(name: "b", bonus: .nan), SQLModel.Employee(name: "c", bonus: 1)])
            let counts = try box.query().build().grouped(by: SQLModel.Employee.bonus).count()
            #expect(counts.count == 2 && counts.map(\.count) == [2, 1])
        }
    }

    /// Objects stored by a build without the key property read as its declared default, and
    /// are grouped so; SQL, without the app's types, reads them as NULL.
    @Test func objectsStoredBeforeTheKeyExistedGroupByItsDefault() throws {
        try withStore { store in
            try store.box(for: Poem.self).put([Poem(title: "old"), Poem(title: "older")])
            let newer = store.box(for: V2.Poem.self)
            try newer.put([V2.Poem(title: "new", rating: 3), V2.Poem(title: "zero", rating: 0)])
            let counts = try newer.query().build().grouped(by: V2.Poem.rating).count()
            #expect(counts.map(\.key) == [0, 3] && counts.map(\.count) == [3, 1])
            let sql = try store.query(sql: "SELECT rating, COUNT(*) FROM Poem GROUP BY rating ORDER BY 1").rows.map(\.values)
            #expect(sql == [[nil, 2], [0, 1], [3, 1]])
        }
    }

    @Test func aSumThatOverflowsIsAnError() throws {
        try withStore { store in
            let box = store.box(for: SQLModel.Employee.self)
            try box.put([SQLModel.Employee(name: "a", salary: .max), SQLModel.Employee(name: "a", salary: 1)])
            #expect(throws: CofferError.limitReached(.sum(entity: "SQLModel.Employee", property: "salary"))) {
                try box.query().build().grouped(by: SQLModel.Employee.name).sum(SQLModel.Employee.salary)
            }
            #expect(throws: CofferError.self) {
                try store.query(sql: "SELECT SUM(salary) FROM Employee")
            }
        }
    }
}
