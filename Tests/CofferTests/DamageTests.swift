@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct DamageTests {
    /// A record whose only field claims more bytes than the record has.
    static let garbage: [UInt8] = [1, 1, 0, 13, 0xFF, 0xFF, 0, 0]

    @Test func damagedRecordIsNeverTakenForNil() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            let fine = try contacts.put(Contact(email: "a@example.com", city: "Oslo"))
            let damaged = try contacts.put(Contact(email: "b@example.com", city: "Rome"))
            try Damage.overwriteRecord(store, Contact.self, id: damaged, with: Self.garbage)
            let everything = store.box(for: Everything.self)
            let scanned = try everything.put(Everything())
            try Damage.overwriteRecord(store, Everything.self, id: scanned, with: Self.garbage)
            // A scan condition that a nil value would satisfy.
            let isNil = try everything.query { Everything.optInt.isNil() }.build()
            for run in [{ _ = try isNil.find() }, { _ = try isNil.count() }, { _ = try isNil.findIds() }, { _ = try isNil.remove() }]
                as [() throws -> Void] {
                #expect { try run() } throws: { Damage.isCorrupt($0, entity: "Everything", id: scanned) }
            }
            #expect(try everything.count() == 1)
            for run in [{ _ = try contacts.query { Contact.note == "" }.build().property(Contact.age).find() },
                        { _ = try contacts.query().ordered(by: Contact.note).build().findIds() }] as [() throws -> Void] {
                #expect { try run() } throws: { Damage.isCorrupt($0, entity: "Contact", id: damaged) }
            }
            #expect(try contacts.count() == 2)
            #expect(try contacts.get(fine)?.city == "Oslo")
        }
    }

    @Test func overwritingOrRemovingADamagedRecordRepairsItsIndexes() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            var victim = Contact(email: "b@example.com", city: "Rome", age: 30)
            try contacts.put(&victim)
            try Damage.overwriteRecord(store, Contact.self, id: victim.id, with: Self.garbage)
            victim.city = "Paris"
            try contacts.put(&victim)
            #expect(try IndexProbe.isConsistent(store, Contact.self))
            // The old unique value is free again: no phantom violation.
            try contacts.put(Contact(email: "c@example.com"))
            var again = victim
            again.id = 0
            again.email = "b2@example.com"
            let second = try contacts.put(again)
            try Damage.overwriteRecord(store, Contact.self, id: second, with: Self.garbage)
            #expect(try contacts.remove(second))
            #expect(try IndexProbe.isConsistent(store, Contact.self))
            try contacts.put(Contact(email: "b2@example.com"))
        }
    }

    @Test func malformedIndexKeyThrowsInsteadOfEndingTheWalk() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(city: "Oslo", age: 5))
            try Damage.putIndexKey(store, Contact.age, key: [IndexKey.valueTag, 0xFF])
            #expect { try contacts.query { Contact.age > 1 }.build().find() } throws: { Damage.isDamaged($0, .index(entity: "Contact", property: "age")) }
        }
    }

    @Test func indexEntryWithoutRecordIsDamage() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(city: "Oslo"))
            var key = [IndexKey.valueTag] + Array("Oslo".utf8) + [0, 0]
            key += withUnsafeBytes(of: Id(77).bigEndian) { Array($0) }
            try Damage.putIndexKey(store, Contact.city, key: key)
            #expect { try contacts.query { Contact.city == "Oslo" }.build().find() } throws: {
                guard case CofferError.damagedStore(.index("Contact", "city"), let reason) = $0 else { return false }
                return reason.contains("77")
            }
        }
    }

    @Test func randomlyMutatedRecordsNeverTrapAndNeverReadAsNil() throws {
        var random = SplitMix64(state: 9)
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var sample = Everything()
            sample.string = "hello"; sample.strings = ["a", "bc"]; sample.ints = [1, 2]; sample.optInt = 4; sample.optString = "x"
            let id = try box.put(sample)
            let pristine: [UInt8] = try store.performRead { transaction in
                let binding = try #require(try store.binding(for: Everything.self, in: transaction))
                return Array(try #require(try transaction.record(id, table: binding.table, entity: "Everything")))
            }
            // The same object as a record of format 1 (earlier releases), which is still read.
            let legacy = try pristine.withUnsafeBytes { HotPathTests.RawField.record(try HotPathTests.fields(of: $0), compact: false) }
            for round in 0..<2_000 {
                var bytes = round % 2 == 0 ? pristine : legacy
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
                default:
                    for _ in 0..<4 { bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random)) }
                }
                try Damage.overwriteRecord(store, Everything.self, id: id, with: bytes)
                // Each read either gives a value or throws damagedRecord: never a trap.
                do { _ = try box.get(id) } catch { #expect(Damage.isCorrupt(error, id: id)) }
                do {
                    let matches = try box.query { Everything.optInt.isNil() }.build().count()
                    // Only a record that reads cleanly may count as nil.
                    if matches == 1 { _ = try? box.get(id) }
                } catch { #expect(Damage.isCorrupt(error, id: id)) }
                do { _ = try box.query { Everything.string == "hello" }.build().findIds() } catch { #expect(Damage.isCorrupt(error, id: id)) }
                do { _ = try box.query().ordered(by: Everything.double).build().find() } catch { #expect(Damage.isCorrupt(error, id: id)) }
                var lines: [String] = []
                try store.dump(entity: "Everything") { lines.append($0) }
                #expect(lines.count == 1)
            }
        }
    }
}
