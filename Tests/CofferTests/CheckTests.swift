@testable import Coffer
import Testing

/// `coffer check`'s id sequence rule: new ids are handed out above the sequence, so a
/// sequence below a stored id is reported.
@Suite struct CheckTests {
    @Test func aSequenceBelowAStoredIdIsReported() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            _ = try people.put((0..<5).map { Person(firstName: "P\($0)", lastName: "L", age: $0) })
            // An explicit id far above the ceiling leaves the sequence alone and is fine.
            _ = try people.put(Person(id: Transaction.explicitIdCeiling + 7, firstName: "Far", lastName: "L", age: 1))
            #expect(try store.verify().isIntact)
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Person.self, in: transaction)
                let catalog = try #require(store.catalogDatabase)
                try Catalog.setSequence(binding.entityId, to: 2, dbi: catalog, in: transaction)
            }
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("id sequence (2) is below the stored id 5") }, "\(report.problems)")
        }
    }
}
