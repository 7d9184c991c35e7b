@testable import Coffer
import Foundation
import Testing

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
