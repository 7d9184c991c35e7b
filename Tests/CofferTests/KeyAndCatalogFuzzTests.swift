@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct KeyAndCatalogFuzzTests {
    /// Random bytes written as index keys, table keys and catalog entries: every read and
    /// write either works or throws a `CofferError`; none traps.
    @Test func mutatedKeysAndCatalogEntriesNeverTrap() throws {
        var random = SplitMix64(state: 5)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        for round in 0..<60 {
            try withStore { (store: Store) throws in
                let contacts = store.box(for: Contact.self)
                try contacts.put((0..<20).map { Contact(email: "e\($0)", city: "c\($0 % 3)", age: $0) })
                switch round % 3 {
                case 0:
                    let key = bytes(Int.random(in: 1..<40, using: &random))
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: try Damage.putIndexKey(store, Contact.age, key: key)
                    case 1: try Damage.putIndexKey(store, Contact.city, key: key)
                    default: try Damage.putIndexKey(store, Contact.email, key: key)
                    }
                case 1:
                    try store.performWrite { transaction in
                        let binding = try store.writableBinding(for: Contact.self, in: transaction)
                        try Damage.put(transaction, binding.table, key: bytes(Int.random(in: 1..<16, using: &random)), value: bytes(Int.random(in: 0..<30, using: &random)))
                    }
                default:
                    try store.performWrite { transaction in
                        let catalog = try #require(store.catalogDatabase)
                        var entry = Array(try #require(try Catalog.raw(key: Catalog.entityKey("Contact"), dbi: catalog, in: transaction)))
                        for _ in 0..<Int.random(in: 1...6, using: &random) { entry[Int.random(in: 0..<entry.count, using: &random)] = UInt8.random(in: 32...126, using: &random) }
                        try entry.withUnsafeBytes { try Catalog.putRaw(key: Catalog.entityKey("Contact"), value: $0, dbi: catalog, in: transaction) }
                    }
                }
                let path = store.path
                try store.close()
                let reopened = try Store(directory: path)
                defer { try? reopened.close() }
                let box = reopened.box(for: Contact.self)
                let operations: [() throws -> Void] = [
                    { _ = try box.all() },
                    { _ = try box.query { Contact.age > 5 }.build().find() },
                    { _ = try box.query { Contact.city == "c1" }.build().count() },
                    { _ = try box.query { Contact.email.isNil() }.build().remove() },
                    { _ = try box.query().ordered(by: Contact.age).build().findIds() },
                    { try box.put(Contact(email: "new", city: "c9")) },
                    { _ = try box.remove(3) },
                    { _ = try reopened.verify() },
                    { try reopened.dump(entity: "Contact") { _ in } },
                ]
                for operation in operations {
                    do { try operation() } catch is CofferError {} catch { Issue.record("not a CofferError: \(error)") }
                }
            }
        }
    }
}
