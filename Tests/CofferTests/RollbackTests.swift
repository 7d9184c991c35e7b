@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct RollbackTests {
    @Test func rolledBackIdIsNeverHandedOutAgain() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var a = Note(title: "a")
            #expect(throws: Boom.self) {
                try store.write {
                    try notes.put(&a)
                    throw Boom()
                }
            }
            var b = Note(title: "b")
            try notes.put(&b)
            #expect(a.id != 0 && b.id != a.id)
            // Putting `a` again stores it under its id; `b` is untouched.
            try notes.put(&a)
            #expect(try notes.get(b.id)?.title == "b")
            #expect(try notes.get(a.id)?.title == "a")
            #expect(try notes.count() == 2)
        }
    }

    /// Inserts, explicit ids (below the sequence, above it, at the ceiling), removals and
    /// rolled-back writes at random: every new id is above every id handed out or stored
    /// explicitly below the ceiling before it (so it never collides with a stored object),
    /// and the store holds exactly the model. Covers the in-place path of the usual insert
    /// and the general one it falls back to.
    @Test func idsAscendAndNeverCollideUnderRandomWrites() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var generator = SplitMix64(state: 17)
            var model: [Id: String] = [:]
            var highest: Id = 0
            for round in 0..<300 {
                switch Int.random(in: 0..<6, using: &generator) {
                case 0, 1:
                    var batch = (0..<Int.random(in: 1...4, using: &generator)).map { Note(title: "r\(round).\($0)") }
                    try notes.put(&batch)
                    for note in batch {
                        #expect(note.id > highest && model[note.id] == nil)
                        highest = note.id
                        model[note.id] = note.title
                    }
                case 2:
                    let id = Bool.random(using: &generator)
                        ? Id.random(in: 1...(highest + 20), using: &generator)
                        : Transaction.explicitIdCeiling + Id.random(in: 0...3, using: &generator)
                    try notes.put(Note(id: id, title: "explicit \(round)"))
                    model[id] = "explicit \(round)"
                    if id < Transaction.explicitIdCeiling { highest = max(highest, id) }
                case 3:
                    if let id = model.keys.randomElement(using: &generator) {
                        #expect(try notes.remove(id))
                        model[id] = nil
                    }
                case 4:
                    var note = Note(title: "rolled back")
                    #expect(throws: Boom.self) {
                        try store.write {
                            try notes.put(&note)
                            throw Boom()
                        }
                    }
                    #expect(note.id > highest)
                    highest = note.id  // handed out: never handed out again
                default:
                    try store.write {
                        var first = Note(title: "w\(round)")
                        try notes.put(&first)
                        var second = Note(title: "w\(round)b")
                        try notes.put(&second)
                        #expect(first.id > highest && second.id > first.id)
                        highest = second.id
                        model[first.id] = first.title
                        model[second.id] = second.title
                    }
                }
            }
            let stored = Dictionary(uniqueKeysWithValues: try notes.all().map { ($0.id, $0.title) })
            #expect(stored == model)
        }
    }

    @Test func rolledBackLinkTargetIsStoredAgainNotAliased() throws {
        try withStore { (store: Store) throws in
            let orders = store.box(for: Order.self)
            let customers = store.box(for: Customer.self)
            var order = Order(date: Date(), total: 1)
            order.customer.target = Customer(name: "Joe")
            #expect(throws: Boom.self) {
                try store.write {
                    try orders.put(&order)
                    throw Boom()
                }
            }
            var other = Customer(name: "Other")
            try customers.put(&other)
            try orders.put(&order)
            let stored = try #require(try orders.get(order.id))
            #expect(try stored.customer.loadTarget()?.name == "Joe")
            #expect(stored.customer.targetId != other.id)
            #expect(try customers.count() == 2)
        }
    }

    @Test func rolledBackRelationIsAppliedAgain() throws {
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)
            var ada = Student(name: "Ada")
            ada.teachers.append(Teacher(name: "Grace"))
            #expect(throws: Boom.self) {
                try store.write {
                    try students.put(&ada)
                    throw Boom()
                }
            }
            #expect(try teachers.count() == 0)
            try students.put(&ada)
            let stored = try #require(try students.get(ada.id))
            #expect(try stored.teachers.load().map(\.name) == ["Grace"])
        }
    }

    @Test func failedPutLeavesTheWholeValueAsItWas() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(email: "taken@example.com"))
            var order = Order(date: Date(), total: 2)
            order.customer.target = Customer(name: "Joe")
            let orders = store.box(for: Order.self)
            var clash = Contact(email: "taken@example.com")
            #expect(throws: CofferError.self) { try contacts.put(&clash) }
            #expect(clash.id == 0)
            #expect(clash.created == .distantPast && clash.modified == .distantPast)
            // An entity whose put changes only ids (no timestamps, no relations) keeps its id,
            // on an insert and on an update, and the stored object is untouched.
            let notes = store.box(for: Indexed.Note.self)
            var first = Indexed.Note(title: "first", rank: 1)
            try notes.put(&first)
            var second = Indexed.Note(title: "second", rank: 1)
            #expect(throws: CofferError.self) { try notes.put(&second) }
            #expect(second.id == 0)
            second.rank = 2
            try notes.put(&second)
            let secondId = second.id
            second.rank = 1
            second.title = "changed"
            #expect(throws: CofferError.self) { try notes.put(&second) }
            #expect(second.id == secondId && second.title == "changed")
            #expect(try notes.get(secondId)?.title == "second")
            // A failing batch restores every element, links included.
            #expect(throws: Boom.self) {
                try store.write {
                    try orders.put(&order)
                    throw Boom()
                }
            }
            var batch = [Order(date: Date(), total: 3), order]
            let before = batch.map(\.id)
            batch[0].customer.target = Customer(name: "Ann")
            var dup = [Contact(email: "x@example.com"), Contact(email: "x@example.com")]
            #expect(throws: CofferError.self) { try contacts.put(&dup) }
            #expect(dup.map(\.id) == [0, 0])
            try orders.put(&batch)
            #expect(batch[1].id == before[1])
            #expect(try orders.count() == 2)
        }
    }

    @Test func explicitMaximumIdDoesNotExhaustTheIdSpace() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var top = Note(title: "top")
            top.id = .max
            try notes.put(&top)
            let next = try notes.put(Note(title: "next"))
            let after = try notes.put(Note(title: "after"))
            #expect(next == 1 && after == 2)
            #expect(try notes.get(.max)?.title == "top")
            // Explicit ids in the auto range are skipped by later inserts.
            var explicit = Note(title: "explicit")
            explicit.id = 3
            try notes.put(&explicit)
            #expect(try notes.put(Note(title: "later")) == 4)
        }
    }
}
