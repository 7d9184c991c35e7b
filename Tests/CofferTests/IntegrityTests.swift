@testable import Coffer
import CLMDB
import Foundation
import Testing

/// Writes raw bytes under `key` in one of an entity's databases, bypassing Coffer's checks,
/// to simulate damage.
enum Damage {
    static func overwriteRecord<E: Entity>(_ store: Store, _ type: E.Type, id: Id, with bytes: [UInt8]) throws {
        try store.performWrite { transaction in
            let binding = try store.writableBinding(for: E.self, in: transaction)
            try put(transaction, binding.table, key: withUnsafeBytes(of: id.bigEndian) { Array($0) }, value: bytes)
        }
    }

    static func putIndexKey<E: Entity, V>(_ store: Store, _ property: Property<E, V>, key: [UInt8]) throws {
        try store.performWrite { transaction in
            let binding = try store.writableBinding(for: E.self, in: transaction)
            guard let index = binding.indexes.first(where: { $0.position == property.index }) else { return }
            try put(transaction, index.database, key: key, value: [])
        }
    }

    static func put(_ transaction: Transaction, _ database: MDB_dbi, key: [UInt8], value: [UInt8]) throws {
        var key = key, value = value
        try key.withUnsafeMutableBytes { keyRaw in
            try value.withUnsafeMutableBytes { valueRaw in
                var keyVal = MDB_val(UnsafeRawBufferPointer(keyRaw))
                var val = MDB_val(UnsafeRawBufferPointer(valueRaw))
                try transaction.check(mdb_put(transaction.txn, database, &keyVal, &val, 0), "damaging")
            }
        }
    }

    static func isCorrupt(_ error: any Error, entity: String? = nil, id: Id? = nil) -> Bool {
        guard case CofferError.damagedRecord(let name, let badId, _) = error else { return false }
        return (entity.map { $0 == name } ?? true) && (id.map { $0 == badId } ?? true)
    }

    /// Whether `error` reports damage of the store's `part` (a structure of no one record).
    static func isDamaged(_ error: any Error, _ part: CofferError.StorePart) -> Bool {
        guard case CofferError.damagedStore(let damaged, _) = error else { return false }
        return damaged == part
    }
}

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

@Suite struct OrdinaryInputTests {
    @Test func pagingWithHugeLimitsNeverTraps() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put((0..<5).map { Note(title: "n\($0)", rank: $0) })
            let query = try notes.query().build()
            #expect(try query.find(offset: 1, limit: .max).count == 4)
            #expect(try query.find(offset: .max, limit: .max).isEmpty)
            let sorted = try notes.query().ordered(by: Note.rank).build()
            #expect(try sorted.find(offset: 2, limit: .max).map(\.rank) == [2, 3, 4])
            #expect(try notes.query { Note.rank >= 0 }.build().find(offset: .max - 1, limit: .max).isEmpty)
        }
    }

    @Test func moduloOfTheSmallestIntegerNeverTraps() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var value = Everything()
            value.int64 = .min
            value.int = .min
            try box.put(value)
            #expect(try box.query { Everything.int64.modulo(-1) == 0 }.build().count() == 1)
            #expect(try box.query { Everything.int.modulo(Int.min) == 0 }.build().count() == 1)
            #expect(try box.query { Everything.int.modulo(3) == -2 }.build().count() == 1)   // Int.min % 3 == -2
        }
    }

    @Test func longStringsOfNulBytesAreLegalIndexedValues() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Indexed.Note.self)
            let nuls = String(repeating: "\u{0}", count: 450)
            let id = try notes.put(Indexed.Note(title: nuls, rank: 1))
            try notes.put(Indexed.Note(title: nuls + "x", rank: 2))
            #expect(try notes.query { Indexed.Note.title == nuls }.build().findIds() == [id])
            #expect(try notes.query { Indexed.Note.title.startsWith(nuls) }.build().count() == 2)
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
        }
    }

    @Test func canonicallyEquivalentStringsAreEqual() throws {
        try withStore { (store: Store) throws in
            let precomposed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
            #expect(precomposed == decomposed)   // Swift's rule
            let indexed = store.box(for: IndexedPerson.self)
            let plain = store.box(for: PlainPerson.self)
            let date = Date(timeIntervalSinceReferenceDate: 0)
            try indexed.put(IndexedPerson(id: 0, name: precomposed, age: 1, score: 0, nick: nil, tags: [], born: date, level: nil))
            try plain.put(PlainPerson(id: 0, name: precomposed, age: 1, score: 0, nick: nil, tags: [], born: date, level: nil))
            #expect(try indexed.query { IndexedPerson.name == decomposed }.build().count() == 1)
            #expect(try plain.query { PlainPerson.name == decomposed }.build().count() == 1)
            #expect(try indexed.query { IndexedPerson.name.startsWith("Cafe\u{301}") }.build().count() == 1)
            #expect(try plain.query { PlainPerson.name.isIn([decomposed]) }.build().count() == 1)
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(email: "\(precomposed)@example.com"))
            #expect(throws: CofferError.self) { try contacts.put(Contact(email: "\(decomposed)@example.com")) }
        }
    }
}

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

/// Collects change sets from handlers (which may run on any thread).
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var sets: [ChangeSet] = []
    func append(_ set: ChangeSet) { lock.lock(); sets.append(set); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return sets.count }
    var last: ChangeSet { lock.lock(); defer { lock.unlock() }; return sets.last ?? ChangeSet() }
}

@Suite struct RetiredPropertyTests {
    @Test func propertyMissingFromOneBuildKeepsItsValuesForTheNext() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            let id = try notes.put(Note(title: "a", body: "b", rank: 7))
            // A build without `rank` (Later.Note) updates the object and adds one.
            let later = store.box(for: Later.Note.self)
            var loaded = try #require(try later.get(id))
            loaded.pinned = true
            try later.put(&loaded)
            try later.put(Later.Note(heading: "new"))
            // The build with `rank` finds the value again, under the same property id.
            #expect(try notes.get(id)?.rank == 7)
            #expect(try notes.query { Note.rank == 7 }.build().findIds() == [id])
            let info = try store.info().entities.first { $0.name == "Note" }
            #expect(info?.properties.filter { $0.name == "rank" }.count == 1)
            var again = try #require(try notes.get(id))
            again.rank = 8
            try notes.put(&again)
            #expect(try later.get(id)?.pinned == true)   // and `pinned` survived `Note`'s update
        }
    }

    @Test func retiredIndexStaysMaintained() throws {
        try withStore { (store: Store) throws in
            let indexed = store.box(for: Indexed.Note.self)
            let first = try indexed.put(Indexed.Note(title: "a", rank: 1))
            try indexed.put(Indexed.Note(title: "b", rank: 2))
            // Later.Note declares neither the unique `rank` nor the index on `title`
            // (it has `heading`, renamed from `title`, without an index).
            let later = store.box(for: Later.Note.self)
            try later.remove(first)
            try later.put(Later.Note(heading: "c"))
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            #expect(try indexed.query { Indexed.Note.rank == 1 }.build().count() == 0)
            try indexed.put(Indexed.Note(title: "d", rank: 1))   // the freed unique value
        }
    }

    @Test func damagedCatalogEntryIsReportedNotTrappedOn() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "x"))
            try store.performWrite { transaction in
                let catalog = try #require(store.catalogDatabase)
                var entity = try #require(try Catalog.load(CatalogEntity.self, key: Catalog.entityKey("Note"), dbi: catalog, in: transaction))
                entity.properties[1].id = entity.properties[0].id          // a duplicate id
                entity.properties.append(CatalogProperty(id: 900, name: "far", type: .int, optional: true, swiftType: "Int?", flags: 0))
                let data = try JSONEncoder().encode(entity)
                try data.withUnsafeBytes { try Catalog.putRaw(key: Catalog.entityKey("Note"), value: $0, dbi: catalog, in: transaction) }
            }
            #expect { try store.dump(entity: "Note") { _ in } } throws: { Damage.isDamaged($0, .catalog) }
            let reopened = try withStoreReopened(store) { try $0.box(for: Note.self).count() }
            #expect(reopened == nil)
        }
    }

    /// Closes `store`, reopens its directory and runs `body`; nil when `body` throws
    /// `damagedStore(.catalog, ...)` (the expected answer for a damaged catalog).
    func withStoreReopened<T>(_ store: Store, _ body: (Store) throws -> T) throws -> T? {
        let path = store.path
        try store.close()
        let reopened = try Store(directory: path)
        defer { try? reopened.close() }
        do { return try body(reopened) } catch let error where Damage.isDamaged(error, .catalog) { return nil }
    }
}

@Suite struct RelationErrorTests {
    @Test func failedLoadNeverReplacesTheStoredRelation() throws {
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)
            var ada = Student(name: "Ada")
            ada.teachers.append(Teacher(name: "Grace"))
            ada.teachers.append(Teacher(name: "Alan"))
            try students.put(&ada)
            try Damage.overwriteRecord(store, Teacher.self, id: 2, with: DamageTests.garbage)
            var loaded = try #require(try students.get(ada.id))
            #expect { try loaded.teachers.load() } throws: { Damage.isCorrupt($0, entity: "Teacher", id: 2) }
            #expect { try loaded.teachers.remove(at: 0) } throws: { Damage.isCorrupt($0, entity: "Teacher", id: 2) }
            loaded.teachers.append(Teacher(name: "Turing"))
            try students.put(&loaded)
            let related = try store.read {
                try store.performRead { transaction in
                    let binding = try #require(try store.binding(for: Student.self, in: transaction))
                    return try transaction.relatedIds(try #require(binding.relationTables[2]).forward, of: ada.id, owner: "Student")
                }
            }
            #expect(related == [1, 2, 3])
            #expect(try teachers.count() == 3)
        }
    }

    @Test func linkTargetErrorsAreVisible() throws {
        try withStore { (store: Store) throws in
            let orders = store.box(for: Order.self)
            var order = Order(date: Date(), total: 1)
            order.customer.target = Customer(name: "Joe")
            try orders.put(&order)
            let loaded = try #require(try orders.get(order.id))
            try Damage.overwriteRecord(store, Customer.self, id: try #require(loaded.customer.targetId), with: DamageTests.garbage)
            #expect { try loaded.customer.loadTarget() } throws: { Damage.isCorrupt($0, entity: "Customer") }
            #expect(loaded.customer.target == nil)   // the documented non-throwing accessor
            #expect(loaded.customer.targetId != nil)  // the link itself is intact
        }
    }
}

@Suite struct GeneratedCodeTests {
    /// Regression: an internal enum without an explicit `Sendable` made the generated file
    /// fail to compile.
    @Test func enumWithoutExplicitSendableWorks() throws {
        try withStore { (store: Store) throws in
            let poems = store.box(for: Poem.self)
            try poems.put([Poem(title: "a", genre: .fiction), Poem(title: "b", maybe: .fiction)])
            #expect(try poems.query { Poem.genre == .fiction }.build().find().map(\.title) == ["a"])
            #expect(try poems.query { Poem.maybe == .fiction }.build().find().map(\.title) == ["b"])
        }
    }
}

@Suite struct StoredNameTests {
    @Test func twoTypesWithOneSimpleNameAreRefused() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Shop.Item.self).put(Shop.Item(price: 2))
            #expect { try store.box(for: Inventory.Item.self).count() } throws: { error in
                guard case CofferError.misuse(.sharedStoredName("Item", let type, let other, _)) = error else { return false }
                return Set([type, other]) == ["Shop.Item", "Inventory.Item"] && error.localizedDescription.contains("@StoredAs")
            }
            #expect(try store.box(for: Shop.Item.self).all().map(\.price) == [2])
        }
    }

    @Test func storedAsNamesTheEntityAndItsLinks() throws {
        try withStore { (store: Store) throws in
            #expect(Inventory.Bin._cofferSchema.storedName == "InventoryBin")
            #expect(Shelf._cofferSchema.properties[1].relationTarget == "InventoryBin")
            let bins = store.box(for: Inventory.Bin.self)
            let shelves = store.box(for: Shelf.self)
            let bin = try bins.put(Inventory.Bin(label: "A1"))
            var shelf = Shelf()
            shelf.bin.targetId = bin
            try shelves.put(&shelf)
            #expect(try store.info().entities.contains { $0.name == "InventoryBin" })
            try bins.remove(bin)   // clears the link, found through the stored name
            #expect(try shelves.get(shelf.id)?.bin.targetId == nil)
        }
    }
}

@Suite struct LinkConditionTests {
    @Test(arguments: [3, 4])
    func linkStepsCombineUnderOrAndNot(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let names = ["Joe", "Ann", "Bo"]
            let customerIds = try customers.put((0..<12).map { Customer(name: names[$0 % 3] + "\($0 % 4)") })
            var all: [Order] = []
            for _ in 0..<200 {
                var order = Order(date: Date(timeIntervalSinceReferenceDate: 0), total: Double(Int.random(in: 0..<200, using: &random)))
                if Int.random(in: 0..<5, using: &random) > 0 { order.customer.targetId = customerIds.randomElement(using: &random) }
                try orders.put(&order)
                all.append(order)
            }
            let nameOf = Dictionary(uniqueKeysWithValues: try customers.all().map { ($0.id, $0.name) })
            func isJoe(_ order: Order) -> Bool { order.customer.targetId.flatMap { nameOf[$0] }?.hasPrefix("Joe") ?? false }

            let either = try orders.query { Order.total > 150 || Order.customer.linked { Customer.name.startsWith("Joe") } }.build()
            #expect(try either.findIds() == all.filter { $0.total > 150 || isJoe($0) }.map(\.id))
            let neither = try orders.query { !Order.customer.linked { Customer.name.startsWith("Joe") } && Order.total < 50 }.build()
            #expect(try neither.findIds() == all.filter { !isJoe($0) && $0.total < 50 }.map(\.id))
            #expect(neither.describe().contains("link customer -> Customer"))

            // The reverse side, as a condition of customers.
            let big = try customers.query { Customer.orders.linked { Order.total > 190 } || Customer.name == "Ann1" }.build()
            let expected = Set(all.filter { $0.total > 190 }.compactMap(\.customer.targetId))
                .union(nameOf.filter { $0.value == "Ann1" }.map(\.key))
            #expect(try Set(big.findIds()) == expected)
        }
    }
}

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

@Suite struct DroppedIndexTests {
    /// Regression: `mdb_drop(…, 1)` closes the handle even when its transaction aborts; a
    /// binding that kept it failed with EINVAL afterwards.
    @Test func indexDroppedInARolledBackWriteLeavesUsableBindings() throws {
        try withStore { (store: Store) throws in
            let indexed = store.box(for: Indexed.Note.self)
            try indexed.put(Indexed.Note(title: "a", rank: 1))
            #expect(throws: Boom.self) {
                try store.write {
                    try store.box(for: Note.self).put(Note(title: "b"))   // registers Note: drops the indexes
                    throw Boom()
                }
            }
            try indexed.put(Indexed.Note(title: "c", rank: 2))
            #expect(try indexed.query { Indexed.Note.title == "c" }.build().count() == 1)
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            #expect(try store.verify().isIntact)
        }
    }
}
