@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct ChangeSetTests {
    /// Every stored object of the test's entities, by stored entity name.
    static func snapshot(_ store: Store) throws -> [String: [Id: Data]] {
        try store.performRead { transaction in
            var result: [String: [Id: Data]] = [:]
            for name in ["Contact", "Note", "Customer", "Order"] {
                guard let catalog = store.catalogDatabase,
                      let entity = try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(name), dbi: catalog, in: transaction),
                      let table = store.storedDatabase(Catalog.tableName(entity.id)) else { continue }
                var rows: [Id: Data] = [:]
                try transaction.withCursor(table, "snapshot") { cursor in
                    var current = try cursor.first()
                    while let entry = current {
                        rows[try IdKey.decode(entry.key, entity: name)] = Data(entry.value)
                        current = try cursor.next()
                    }
                }
                result[name] = rows
            }
            return result
        }
    }

    @Test(arguments: [1, 2, 3])
    func changeSetIsTheDifferenceBetweenSnapshots(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        try withStore { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let contacts = store.box(for: Contact.self)
            let notes = store.box(for: Note.self)
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            for _ in 0..<150 {
                let before = try Self.snapshot(store)
                let count = recorded.count
                let fails = Int.random(in: 0..<8, using: &random) == 0
                do {
                    try store.write {
                        for _ in 0..<Int.random(in: 1...6, using: &random) {
                            switch Int.random(in: 0..<10, using: &random) {
                            case 0, 1: try notes.put(Note(title: "t", rank: Int.random(in: 0..<5, using: &random)))
                            case 2: try notes.remove(Id.random(in: 1...40, using: &random))
                            case 3:
                                var note = Note(title: "u")
                                note.id = Id.random(in: 1...40, using: &random)
                                try notes.put(&note)
                            case 4: try contacts.put(Contact(email: "e\(Int.random(in: 0..<10, using: &random))", age: Int.random(in: 0..<9, using: &random)))
                            case 5: try contacts.query { Contact.age < 2 }.build().remove()
                            case 6:
                                var order = Order(date: Date(), total: 1)
                                order.customer.targetId = try customers.put(Customer(name: "c"))
                                try orders.put(&order)
                            case 7: try customers.remove(Id.random(in: 1...20, using: &random))
                            case 8: if Int.random(in: 0..<6, using: &random) == 0 { try notes.removeAll() }
                            default: try notes.query { Note.rank == 3 }.build().remove()
                            }
                        }
                        if fails { throw Boom() }
                    }
                } catch is Boom {
                } catch CofferError.uniqueViolation {
                }
                let after = try Self.snapshot(store)
                if recorded.count == count {
                    #expect(before == after)
                    continue
                }
                #expect(recorded.count == count + 1)
                let changes = recorded.last
                for name in Set(before.keys).union(after.keys) {
                    let old = before[name] ?? [:], new = after[name] ?? [:]
                    let entity = changes.entities[name] ?? ChangeSet.EntityChanges()
                    #expect(entity.removed == Set(old.keys).subtracting(new.keys), "removed \(name)")
                    let written = Set(new.keys.filter { old[$0] != new[$0] })
                    #expect(entity.put.isSuperset(of: written), "put \(name) covers every changed record")
                    #expect(entity.put.isSubset(of: Set(new.keys)), "put \(name) holds only stored ids")
                }
            }
        }
    }
}
