@testable import Coffer
import Foundation
import Testing

/// Reads inside a `write` see everything that write did, through every query form.
@Suite struct ReadYourWritesTests {
    /// Regression: a selector path through a relation failed inside the write that created
    /// the relation's target entity (its table was not among the store's opened tables).
    @Test func selectorPathsThroughRelationsInsideTheWriteThatCreatedThem() throws {
        try withStore { (store: Store) throws in
            let orders = store.box(for: Order.self)
            let customers = store.box(for: Customer.self)
            let students = store.box(for: Student.self)
            try store.write {
                var order = Order(date: Date(), total: 12)
                order.customer.target = Customer(name: "Joe")
                try orders.put(&order)
                try orders.put(Order(date: Date(), total: 3))
                #expect(try orders.query(selector: #"{"customer.name": "Joe"}"#).build().findIds() == [order.id])
                #expect(try orders.query(selector: #"{"customer.name": {"$ne": "Joe"}}"#).build().count() == 1)
                #expect(try customers.query(selector: #"{"orders.total": {"$gt": 10}}"#).build().count() == 1)
                var lines: [String] = []
                try store.query(entity: "Order", selector: #"{"customer.name": "Joe"}"#, fields: ["total"]) { lines.append($0) }
                #expect(lines == [#"{"total":12}"#])

                var student = Student(name: "s")
                student.teachers.append(Teacher(name: "t"))
                try students.put(&student)
                #expect(try students.query(selector: #"{"teachers.name": "t"}"#).build().findIds() == [student.id])
                #expect(try store.box(for: Teacher.self).query(selector: #"{"students.name": "s"}"#).build().count() == 1)
            }
            // And after the commit, from a new read.
            #expect(try orders.query(selector: #"{"customer.name": "Joe"}"#).build().count() == 1)
        }
    }
}
