// The Smart SQL article's examples: SmartStore's employees and departments.
import Coffer
import DocSupport
import Foundation

struct Department: Entity {
    var id: Id = 0
    @Index var code: String
    var name: String
}

struct Employee: Entity {
    var id: Id = 0
    var name: String
    @Index var city: String
    @Index var salary: Int
    var age: Int
    var department: ToOne<Department> = nil
}

try enterWorkplace("SQL")
let store = try Store(directory: "company.coffer")
let employees = store.box(for: Employee.self)
var sales = Department(code: "S", name: "Sales")
var research = Department(code: "R", name: "Research")
try store.box(for: Department.self).put(&sales)
try store.box(for: Department.self).put(&research)
var staff = [
    Employee(name: "Ann", city: "Paris", salary: 60_000, age: 30),
    Employee(name: "Bo", city: "Paris", salary: 70_000, age: 41),
    Employee(name: "Cy", city: "Lyon", salary: 80, age: 17),
    Employee(name: "Di", city: "Lyon", salary: 90_000, age: 50),
]
staff[0].department.targetId = sales.id
staff[1].department.targetId = sales.id
staff[2].department.targetId = research.id
staff[3].department.targetId = research.id
try employees.put(&staff)

let rows = try store.query(sql: """
    SELECT d.name AS department, COUNT(*) AS staff, AVG(e.salary) AS average
    FROM Employee e JOIN Department d ON e.department
    WHERE e.salary > ? GROUP BY d.name HAVING COUNT(*) > 1 ORDER BY staff DESC LIMIT 10
    """, parameters: [50_000])
struct Payroll: Decodable { var department: String; var staff: Int; var average: Double }
let payroll = try rows.decode(Payroll.self)        // or rows[0]["staff"], rows.columns

try store.forEachRow(sql: "SELECT {Employee:_soup} FROM {Employee} WHERE {Employee:city} = :city",
                     parameters: ["city": "Paris"]) { row in print(row.json) }   // streamed, one row in memory
print(try store.explain(sql: "SELECT name FROM Employee WHERE salary = 80"))
// Employee: index on salary (1 span) for salary == 80

check(payroll.count == 1 && payroll[0].department == "Sales" && payroll[0].staff == 2 && payroll[0].average == 65_000, "the join, grouped")

let perCity = try employees.query { Employee.age >= 18 }.build().grouped(by: Employee.city)
let counts = try perCity.count()                  // [(key: String, count: Int)]
let pay = try perCity.average(Employee.salary)    // [(key: String, average: Double?)]
let oldest = try perCity.max(Employee.age)        // sum, min and max too; an optional key has a nil group

check(counts.sorted { $0.key < $1.key }.map(\.count) == [1, 2], "grouped counts")
check(pay.count == 2 && oldest.count == 2, "grouped aggregates")
try store.close()
try leaveWorkplace()
