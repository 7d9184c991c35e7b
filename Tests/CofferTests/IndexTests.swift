@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

/// Reads index contents through the internal API, to check them against the records.
enum IndexProbe {
    /// Ids whose `property` equals its value in `sample`, found through the index.
    static func ids<E: Entity, V>(_ store: Store, _ property: Property<E, V>, like sample: E) throws -> [Id] {
        try store.performRead { transaction in
            guard let binding = try store.binding(for: E.self, in: transaction),
                  let index = binding.indexes.first(where: { $0.position == property.index }) else { return [] }
            let buffer = RecordBuffer()
            var writer = RecordWriter(buffer: buffer, storedIds: binding.storedIds)
            var sample = sample
            E._cofferEncode(&sample, to: &writer)
            buffer.adopt(writer)
            return try transaction.matchingIds(index, valueOf: RecordFields(bytes: writer.bytes, entity: "probe", id: 0), table: binding.table).sorted()
        }
    }

    /// Whether every index of `E` holds exactly one entry per object, with the right key.
    static func isConsistent<E: Entity>(_ store: Store, _ type: E.Type) throws -> Bool {
        try store.performRead { transaction in
            guard let binding = try store.binding(for: E.self, in: transaction) else { return true }
            var stat = MDB_stat()
            mdb_stat(transaction.txn, binding.table, &stat)
            let objects = stat.ms_entries
            for index in binding.indexes {
                mdb_stat(transaction.txn, index.database, &stat)
                guard stat.ms_entries == objects else { return false }
                var cursor: OpaquePointer?
                mdb_cursor_open(transaction.txn, index.database, &cursor)
                defer { mdb_cursor_close(cursor) }
                var key = MDB_val(), value = MDB_val()
                var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
                while rc == 0 {
                    let bytes = Array(key.bytes)
                    let id = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    guard let record = try transaction.record(id, table: binding.table, entity: "probe"),
                          try index.key(in: RecordFields(bytes: record, entity: "probe", id: id)) == Array(bytes.dropLast(8)) else { return false }
                    rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
                }
            }
            return true
        }
    }
}

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

@Suite struct IndexEvolutionTests {
    @Test func addedIndexIsBuiltAndDroppedIndexDeleted() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        do {
            let store = try Store(directory: directory.path)
            try store.box(for: Note.self).put([Note(title: "x", rank: 1), Note(title: "y", rank: 2), Note(title: "x", rank: 3)])
            try store.close()
        }
        do {
            let store = try Store(directory: directory.path)
            let indexed = store.box(for: Indexed.Note.self)
            #expect(try indexed.count() == 3)   // a read builds nothing: reads never write
            #expect(try indexed.query { Indexed.Note.title == "x" }.build().findIds() == [1, 3])
            try indexed.put(Indexed.Note(title: "z", rank: 4))   // the first write builds the index
            #expect(try IndexProbe.ids(store, Indexed.Note.title, like: Indexed.Note(title: "x")) == [1, 3])
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            try store.close()
        }
        do {
            // Back to the unindexed declaration: the indexes another build declared stay and
            // are maintained (a build that declares them would otherwise rebuild them).
            let store = try Store(directory: directory.path)
            let notes = store.box(for: Note.self)
            #expect(try notes.count() == 4)
            try notes.put(Note(title: "w", rank: 5))
            #expect(throws: CofferError.self) { try notes.put(Note(title: "v", rank: 5)) }   // still unique
            #expect(try IndexProbe.isConsistent(store, Note.self))
            #expect(try IndexProbe.ids(store, Indexed.Note.title, like: Indexed.Note(title: "w")) == [5])
            // Dropping them takes them out of the catalog: queries scan, no key is kept.
            #expect(throws: CofferError.self) { try store.box(for: Indexed.Note.self).dropIndex(on: Indexed.Note.title) }
            try notes.dropIndex(on: Note.title)
            try notes.dropIndex(on: Note.rank)
            try notes.dropIndex(on: Note.rank)   // nothing left to drop
            let v = try notes.put(Note(title: "v", rank: 5))
            #expect(try notes.query { Note.title == "v" }.build().findIds() == [v])
            let note = try #require(try store.info().entities.first { $0.name == "Note" })
            #expect(note.properties.allSatisfy { !$0.isIndexed && !$0.isUnique })
            try store.performRead { transaction in
                for name in store.databases.keys where name.hasPrefix("index.") {
                    var stat = MDB_stat()
                    mdb_stat(transaction.txn, try #require(store.databases[name]), &stat)
                    #expect(stat.ms_entries == 0, "\(name) is emptied")
                }
            }
            try store.close()
        }
    }

    @Test func uniqueIndexOverDuplicatesIsRefusedAndChangesNothing() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put([Note(title: "a", rank: 1), Note(title: "b", rank: 1)])
            #expect(try store.box(for: Indexed.Note.self).count() == 2)   // reading needs no index
            #expect {
                try store.box(for: Indexed.Note.self).put(Indexed.Note(title: "c", rank: 2))
            } throws: { error in
                guard case CofferError.uniqueViolation(let entity, let property, _) = error else { return false }
                return entity == "Indexed.Note" && property == "rank"
            }
            #expect(try store.box(for: Note.self).all().map(\.title) == ["a", "b"])
        }
    }
}

@Suite struct ReplaceOnUpdateTests {
    /// Regression: an update that replaces another holder must keep its own index entry.
    @Test func updatingIntoAReplacedValueKeepsTheIndexConsistent() throws {
        try withStore { (store: Store) throws in
            let accounts = store.box(for: Account.self)
            var a = Account(handle: "@a", balance: 1)
            try accounts.put(&a)
            try accounts.put(Account(handle: "@b", balance: 2))
            a.handle = "@b"
            try accounts.put(&a)
            #expect(try accounts.all().map(\.balance) == [1])
            #expect(try IndexProbe.isConsistent(store, Account.self))
            #expect(try IndexProbe.ids(store, Account.handle, like: a) == [a.id])
        }
    }
}
