@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct IndexTests {
    @Test func indexFollowsInsertsUpdatesAndRemovals() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            var ada = Contact(email: "ada@x", city: "London", age: 36, score: -1.5, level: .high)
            var bob = Contact(email: "bob@x", city: "Paris", age: 36, score: 2)
            try contacts.put(&ada)
            try contacts.put(&bob)
            #expect(try IndexProbe.ids(store, Contact.city, like: ada) == [ada.id])
            #expect(try IndexProbe.ids(store, Contact.age, like: ada) == [ada.id, bob.id])
            ada.city = "Paris"
            try contacts.put(&ada)
            #expect(try IndexProbe.ids(store, Contact.city, like: Contact(city: "London")).isEmpty)
            #expect(try IndexProbe.ids(store, Contact.city, like: bob) == [ada.id, bob.id])
            try contacts.remove(bob.id)
            #expect(try IndexProbe.ids(store, Contact.city, like: ada) == [ada.id])
            #expect(try IndexProbe.ids(store, Contact.level, like: ada) == [ada.id])
            #expect(try IndexProbe.ids(store, Contact.level, like: Contact()) == [])   // nil level: none
            #expect(try IndexProbe.isConsistent(store, Contact.self))
            try contacts.removeAll()
            #expect(try IndexProbe.isConsistent(store, Contact.self))
            #expect(try IndexProbe.ids(store, Contact.city, like: ada).isEmpty)
        }
    }

    @Test func randomWorkloadKeepsIndexesConsistent() throws {
        var generator = SystemRandomNumberGenerator()
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            var ids: [Id] = []
            for step in 0..<600 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<5:
                    var contact = Contact(city: ["A", "B", "", "ü", String(repeating: "L", count: 600)].randomElement()!,
                                          age: Int.random(in: -3...3), score: [Double.nan, -0.0, 0, 1e300, -.infinity].randomElement()!,
                                          born: Bool.random() ? Date(timeIntervalSince1970: Double(step)) : nil,
                                          level: [Level.low, .high, nil].randomElement()!, active: Bool.random(),
                                          token: Bool.random() ? UUID() : nil)
                    try contacts.put(&contact)
                    ids.append(contact.id)
                case 5..<8 where !ids.isEmpty:
                    var contact = try #require(try contacts.get(ids.randomElement()!))
                    contact.city += "x"
                    contact.age = -contact.age
                    contact.level = contact.level == nil ? .low : nil
                    try contacts.put(&contact)
                case 8 where !ids.isEmpty:
                    try contacts.remove(ids.remove(at: Int.random(in: 0..<ids.count)))
                default:
                    break
                }
            }
            #expect(try IndexProbe.isConsistent(store, Contact.self))
        }
    }

    @Test func longStringsAreTruncatedAndRechecked() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            let prefix = String(repeating: "p", count: 450)
            var a = Contact(email: prefix + "a", city: prefix + "a")
            var b = Contact(email: prefix + "b", city: prefix + "b")
            try contacts.put(&a)
            try contacts.put(&b)   // same first 400 bytes: not a unique clash
            #expect(try IndexProbe.ids(store, Contact.city, like: a) == [a.id])
            #expect(try IndexProbe.ids(store, Contact.city, like: b) == [b.id])
            #expect(throws: CofferError.self) { try contacts.put(Contact(email: prefix + "a")) }
            #expect(try IndexProbe.isConsistent(store, Contact.self))
        }
    }
}
