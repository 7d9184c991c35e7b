@testable import Coffer
import Foundation
import Testing

@Suite struct CommitNotificationTests {
    @Test func everyKindOfWritePublishesItsIdsOnce() throws {
        try withStore { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let messages = store.box(for: Message.self)
            let accounts = store.box(for: Account.self)
            let profiles = store.box(for: Profile.self)
            let contacts = store.box(for: Contact.self)
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)

            func last(_ name: String) -> ChangeSet.EntityChanges { recorded.last.entities[name] ?? .init() }

            let a = try messages.put(Message(conversation: 1, position: 1))
            #expect(last("Message").inserted == [a] && recorded.count == 1)
            let batch = try messages.put([Message(conversation: 1, position: 2), Message(conversation: 1, position: 3)])
            #expect(last("Message").inserted == Set(batch) && recorded.count == 2)
            try messages.remove(a)
            #expect(last("Message").removed == [a])
            #expect(try messages.query { Message.position == 2 }.build().remove() == 1)
            #expect(last("Message").removed == [batch[0]])
            try messages.removeAll()
            #expect(last("Message").removed == [batch[1]])
            let countBefore = recorded.count
            try messages.removeAll()   // nothing to remove: nothing published
            #expect(recorded.count == countBefore)

            let first = try accounts.put(Account(handle: "ada"))
            let second = try accounts.put(Account(handle: "ada"))   // .replace: first is removed
            #expect(last("Account").removed == [first] && last("Account").inserted == [second])
            let profile = try profiles.put(Profile(key: "k"))
            _ = try profiles.put(Profile(key: "k"))                 // .update: same object
            #expect(last("Profile").put == [profile] && last("Profile").inserted.isEmpty)
            var contact = Contact(externalId: "x")
            let contactId = try contacts.upsert(&contact, by: Contact.externalId)
            var again = Contact(externalId: "x", age: 3)
            _ = try contacts.upsert(&again, by: Contact.externalId)
            #expect(last("Contact").put == [contactId] && last("Contact").inserted.isEmpty)

            var order = Order(date: Date(), total: 5)
            order.customer.targetId = try customers.put(Customer(name: "Joe"))
            let orderId = try orders.put(&order)
            try customers.remove(try #require(order.customer.targetId))
            #expect(last("Customer").removed == [order.customer.targetId])
            #expect(last("Order").put == [orderId], "the rewrite that cleared the link is published")

            var student = Student(name: "s")
            let studentId = try students.put(&student)
            var teacher = Teacher(name: "t")
            let teacherId = try teachers.put(&teacher)
            student.teachers.append(teacher)
            _ = try students.put(&student)
            #expect(last("Student").put == [studentId])
            try teachers.remove(teacherId)
            #expect(last("Teacher").removed == [teacherId])
            #expect(last("Student").put == [studentId], "the many-to-many row removed with the teacher")
        }
    }

    @Test func rolledBackAndRetriedWritesPublishOnlyWhatCommitted() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let messages = store.box(for: Message.self)
            #expect(throws: Boom.self) {
                try store.write {
                    try messages.put(Message(conversation: 1, position: 1))
                    throw Boom()
                }
            }
            #expect(recorded.count == 0)
            // About 8 MB in one transaction: the 1 MiB map grows several times and the
            // closure runs again each time; one change set is published, for the last run.
            let text = String(repeating: "x", count: 2_000)
            var runs = 0
            let ids = try store.write { () throws -> [Id] in
                runs += 1
                return try messages.put((0..<4_000).map { Message(conversation: 2, position: $0, text: text) })
            }
            #expect(runs > 1)
            #expect(recorded.count == 1)
            #expect(recorded.last.entities["Message"]?.inserted == Set(ids))
        }
    }

    @Test func oneWriteWithManyOperationsIsOneChangeSet() throws {
        try withStore { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let messages = store.box(for: Message.self)
            let notes = store.box(for: Note.self)
            try store.write {
                let a = try messages.put(Message(conversation: 1, position: 1))
                try messages.put(Message(conversation: 1, position: 2))
                try messages.remove(a)   // inserted and removed: in neither list
                try notes.put(Note(title: "n"))
            }
            #expect(recorded.count == 1)
            #expect(recorded.last.entities["Message"]?.inserted.count == 1)
            #expect(recorded.last.entities["Message"]?.removed.isEmpty == true)
            #expect(recorded.last.entities["Note"]?.inserted.count == 1)
        }
    }

    @Test func writeThatBeganBeforeTheFirstObserverPublishesAnUnknownChange() throws {
        try withStore { (store: Store) throws in
            let messages = store.box(for: Message.self)
            let recorded = Recorder()
            var token = 0
            try store.write {
                try messages.put(Message(conversation: 1, position: 1))
                // Subscribes while a transaction that records nothing is running.
                token = store.addChangeHandler { recorded.append($0) }
            }
            defer { store.removeChangeHandler(token) }
            #expect(recorded.count == 1)
            #expect(recorded.last.isComplete == false)
        }
    }
}
