@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct TimestampTests {
    @Test func createdIsKeptAndModifiedMoves() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            let before = Date()
            var contact = Contact(city: "A")
            try contacts.put(&contact)
            #expect(contact.created >= before && contact.created == contact.modified)
            let created = contact.created
            Thread.sleep(forTimeInterval: 0.01)
            var changed = try #require(try contacts.get(contact.id))
            changed.created = .distantFuture  // ignored: created is kept from the store
            changed.city = "B"
            try contacts.put(&changed)
            #expect(changed.created == created)
            #expect(changed.modified > created)
            let loaded = try #require(try contacts.get(contact.id))
            #expect(loaded.created == created && loaded.modified == changed.modified)
        }
    }
}
