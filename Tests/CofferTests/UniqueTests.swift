@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct UniqueTests {
    @Test func duplicateFailsNamingEntityPropertyAndValue() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(email: "a@x"))
            var duplicate = Contact(email: "a@x", city: "Rome")
            #expect(throws: CofferError.uniqueViolation(entity: "Contact", property: "email", value: "\"a@x\"")) {
                try contacts.put(&duplicate)
            }
            #expect(duplicate.id == 0)
            // nil never collides
            try contacts.put(Contact(email: nil))
            try contacts.put(Contact(email: nil))
            // updating an object to its own value is fine
            var first = try #require(try contacts.get(1))
            first.city = "Oslo"
            try contacts.put(&first)
            #expect(try contacts.count() == 3)
        }
    }

    @Test func batchWithADuplicateStoresNothing() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(email: "keep@x"))
            var batch = [Contact(email: "n1@x"), Contact(email: "n2@x"), Contact(email: "n1@x")]
            #expect(throws: CofferError.uniqueViolation(entity: "Contact", property: "email", value: "\"n1@x\"")) {
                try contacts.put(&batch)
            }
            #expect(batch.map(\.id) == [0, 0, 0])
            #expect(try contacts.all().map(\.email) == ["keep@x"])
            #expect(try IndexProbe.isConsistent(store, Contact.self))
        }
    }

    @Test func replaceRemovesTheHolder() throws {
        try withStore { (store: Store) throws in
            let accounts = store.box(for: Account.self)
            let old = try accounts.put(Account(handle: "@ada", balance: 1))
            let new = try accounts.put(Account(handle: "@ada", balance: 2))
            #expect(old != new)
            #expect(try accounts.get(old) == nil)
            #expect(try accounts.all().map(\.balance) == [2])
            #expect(try IndexProbe.isConsistent(store, Account.self))
        }
    }

    @Test func updateTakesTheHoldersId() throws {
        try withStore { (store: Store) throws in
            let profiles = store.box(for: Profile.self)
            let first = try profiles.put(Profile(key: "theme", value: "dark"))
            var second = Profile(key: "theme", value: "light")
            try profiles.put(&second)
            #expect(second.id == first)
            #expect(try profiles.count() == 1)
            #expect(try profiles.get(first)?.value == "light")
        }
    }
}
