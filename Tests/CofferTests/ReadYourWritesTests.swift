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

/// A failed update of a query's matches leaves them as they were.
@Suite struct MatchTrackerFailureTests {
    /// Regression: `MatchTracker.apply` removed the changed ids' entries before reading their
    /// records; a damaged record partway left the matches without rows that were still
    /// stored, and the next change set was applied on top of the gap.
    @Test func aDamagedRecordPartwayLeavesTheMatchesAndTheNextApplyReloads() throws {
        try withStore { (store: Store) throws in
            let messages = store.box(for: Message.self)
            try messages.put((0..<6).map { Message(conversation: 1, position: $0, text: "m\($0)") })
            let query = try messages.query { Message.conversation == 1 }.ordered(by: Message.position).build()
            var tracker = MatchTracker(condition: query.condition, orders: query.orders, entity: "Message")
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            try store.read {
                try store.performRead { transaction in
                    try tracker.reload(in: transaction, binding: try store.binding(for: Message.self, in: transaction), store: store)
                }
            }
            let before = tracker.entries.map(\.id)
            #expect(before == [1, 2, 3, 4, 5, 6])
            // One commit changes objects 2 and 5 and leaves 5's record damaged.
            try store.write {
                for id: Id in [2, 5] {
                    var message = try #require(try messages.get(id))
                    message.text = "changed"
                    try messages.put(&message)
                }
                try store.performWrite { transaction in
                    let binding = try store.writableBinding(for: Message.self, in: transaction)
                    try Damage.put(transaction, binding.table, key: withUnsafeBytes(of: Id(5).bigEndian) { Array($0) }, value: DamageTests.garbage)
                }
            }
            let damaging = recorded.last
            try store.read {
                try store.performRead { transaction in
                    let binding = try store.binding(for: Message.self, in: transaction)
                    #expect(throws: CofferError.self) { try tracker.apply(damaging, in: transaction, binding: binding, store: store) }
                }
            }
            #expect(tracker.entries.map(\.id) == before, "no row lost to the failed apply")
            // Repaired by a put; the next change set finds every row.
            try messages.put(Message(id: 5, conversation: 1, position: 5, text: "repaired"))
            let repairing = recorded.last
            try store.read {
                try store.performRead { transaction in
                    let binding = try store.binding(for: Message.self, in: transaction)
                    _ = try tracker.apply(repairing, in: transaction, binding: binding, store: store)
                }
            }
            #expect(tracker.entries.map(\.id) == before)
            #expect(tracker.reloads == 2, "the apply after a failed one reloads")
        }
    }
}

/// A failed or retried upsert leaves the caller's value as it was.
@Suite struct UpsertRestoreTests {
    /// Regression: a failed upsert restored only the id: the timestamps the put had set
    /// stayed in the caller's value.
    @Test func aFailedUpsertRestoresTheWholeValue() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(email: "taken@example.com", externalId: "a"))
            var other = Contact(email: "other@example.com", externalId: "b")
            try contacts.put(&other)
            // Upsert by externalId finds `other`, whose new email collides: unique violation.
            var clash = Contact(email: "taken@example.com", externalId: "b")
            let original = clash
            #expect(throws: CofferError.self) { try contacts.upsert(&clash, by: Contact.externalId) }
            #expect(clash.id == original.id && clash.created == original.created && clash.modified == original.modified)
            var batch = [Contact(email: "new@example.com", externalId: "c"), clash]
            let originals = batch
            #expect(throws: CofferError.self) { try contacts.upsert(&batch, by: Contact.externalId) }
            #expect(batch.map(\.id) == originals.map(\.id) && batch.map(\.modified) == originals.map(\.modified)
                && batch.map(\.created) == originals.map(\.created))
            #expect(try contacts.count() == 2)
        }
    }
}
