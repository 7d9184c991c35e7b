@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct UpsertTests {
    @Test func upsertInsertsThenUpdatesByExternalId() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            var a = Contact(externalId: "sf-1", note: "v1")
            try contacts.upsert(&a, by: Contact.externalId)
            var again = Contact(externalId: "sf-1", note: "v2")
            try contacts.upsert(&again, by: Contact.externalId)
            #expect(again.id == a.id)
            #expect(try contacts.count() == 1)
            #expect(try contacts.get(a.id)?.note == "v2")
            var other = Contact(externalId: "sf-2")
            try contacts.upsert(&other, by: Contact.externalId)
            #expect(other.id != a.id)
        }
    }

    @Test func upsertErrors() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put([Contact(externalId: "dup"), Contact(externalId: "dup")])
            var ambiguous = Contact(externalId: "dup")
            #expect(throws: CofferError.ambiguousUpsert(entity: "Contact", property: "externalId", value: "\"dup\"", count: 2)) {
                try contacts.upsert(&ambiguous, by: Contact.externalId)
            }
            var nilKey = Contact(externalId: nil)
            #expect(throws: CofferError.invalidUpsertKey(entity: "Contact", property: "externalId", problem: .missingValue)) {
                try contacts.upsert(&nilKey, by: Contact.externalId)
            }
            var unindexed = Contact(note: "x")
            #expect(throws: CofferError.invalidUpsertKey(entity: "Contact", property: "note", problem: .notIndexed)) {
                try contacts.upsert(&unindexed, by: Contact.note)
            }
            // A batch with one ambiguous key stores nothing.
            var batch = [Contact(externalId: "new-1"), Contact(externalId: "dup")]
            #expect(throws: CofferError.self) { try contacts.upsert(&batch, by: Contact.externalId) }
            #expect(batch.map(\.id) == [0, 0])
            #expect(try contacts.count() == 2)
        }
    }
}
