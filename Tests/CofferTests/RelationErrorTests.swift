@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct RelationErrorTests {
    @Test func failedLoadNeverReplacesTheStoredRelation() throws {
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)
            var ada = Student(name: "Ada")
            ada.teachers.append(Teacher(name: "Grace"))
            ada.teachers.append(Teacher(name: "Alan"))
            try students.put(&ada)
            try Damage.overwriteRecord(store, Teacher.self, id: 2, with: DamageTests.garbage)
            var loaded = try #require(try students.get(ada.id))
            #expect { try loaded.teachers.load() } throws: { Damage.isCorrupt($0, entity: "Teacher", id: 2) }
            #expect { try loaded.teachers.remove(at: 0) } throws: { Damage.isCorrupt($0, entity: "Teacher", id: 2) }
            loaded.teachers.append(Teacher(name: "Turing"))
            try students.put(&loaded)
            let related = try store.read {
                try store.performRead { transaction in
                    let binding = try #require(try store.binding(for: Student.self, in: transaction))
                    return try transaction.relatedIds(try #require(binding.relationTables[2]).forward, of: ada.id, owner: "Student")
                }
            }
            #expect(related == [1, 2, 3])
            #expect(try teachers.count() == 3)
        }
    }

    @Test func linkTargetErrorsAreVisible() throws {
        try withStore { (store: Store) throws in
            let orders = store.box(for: Order.self)
            var order = Order(date: Date(), total: 1)
            order.customer.target = Customer(name: "Joe")
            try orders.put(&order)
            let loaded = try #require(try orders.get(order.id))
            try Damage.overwriteRecord(store, Customer.self, id: try #require(loaded.customer.targetId), with: DamageTests.garbage)
            #expect { try loaded.customer.loadTarget() } throws: { Damage.isCorrupt($0, entity: "Customer") }
            #expect(loaded.customer.target == nil)   // the documented non-throwing accessor
            #expect(loaded.customer.targetId != nil)  // the link itself is intact
        }
    }
}
