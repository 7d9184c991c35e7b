import CLMDB
@testable import Coffer
import Foundation
import Testing

/// Each `CofferError` case, provoked through the public API, arrives as that exact case with
/// its fields: what a caller switches on instead of parsing a message.
@Suite struct ErrorCaseTests {
    // MARK: Damage

    @Test func damagedCatalogIsADamagedStore() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "x"))
            try store.performWrite { transaction in
                let catalog = try #require(store.catalogDatabase)
                let garbage = Array("{not json".utf8)
                try garbage.withUnsafeBytes { try Catalog.putRaw(key: Catalog.entityKey("Note"), value: $0, dbi: catalog, in: transaction) }
            }
            #expect { try store.dump(entity: "Note") { _ in } } throws: { error in
                guard case CofferError.damagedStore(.catalog, let reason) = error else { return false }
                return reason.contains("Note")
            }
        }
    }

    @Test func damagedDataFileIsADamagedStoreNamingTheFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        try store.box(for: Note.self).put((0..<50).map { Note(title: "note \($0)") })
        try store.close()
        // Every page after the two meta pages becomes garbage: the page tree is unreadable.
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: directory.path + "/data.mdb"))
        let size = try file.seekToEnd()
        try file.seek(toOffset: 8192)
        file.write(Data(repeating: 0xAB, count: Int(size) - 8192))
        try file.close()
        #expect {
            _ = try Store(directory: directory.path, options: StoreOptions(readOnly: true, verifyOnOpen: true))
        } throws: { error in
            guard case CofferError.damagedStore(.file(let path), let reason) = error else { return false }
            return path == URL(fileURLWithPath: directory.path).standardizedFileURL.path && !reason.isEmpty
        }
    }

    @Test func malformedTableKeyIsADamagedTable() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put(Note(title: "x"))
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Note.self, in: transaction)
                try Damage.put(transaction, binding.table, key: [0xFF, 0xFF, 0xFF], value: [1])
            }
            // The next insert reads the table's last key to hand out an id.
            #expect(throws: CofferError.damagedStore(part: .table(entity: "Note"), reason: "the last key has 3 bytes, not 8")) {
                try notes.put(Note(title: "y"))
            }
        }
    }

    @Test func malformedIndexEntryIsADamagedIndex() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(city: "Oslo", age: 5))
            try Damage.putIndexKey(store, Contact.age, key: [IndexKey.valueTag, 0xFF])
            #expect { try contacts.query { Contact.age > 1 }.build().find() } throws: { error in
                guard case CofferError.damagedStore(.index(let entity, let property), _) = error else { return false }
                return entity == "Contact" && property == "age"
            }
        }
    }

    @Test func malformedRelationKeyIsADamagedRelation() throws {
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            var ada = Student(name: "Ada")
            ada.teachers.append(Teacher(name: "Grace"))
            try students.put(&ada)
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Student.self, in: transaction)
                let tables = try #require(binding.relationTables[Student.teachers.index])
                let key = withUnsafeBytes(of: ada.id.bigEndian) { Array($0) } + [0x01, 0x02]
                try Damage.put(transaction, tables.forward, key: key, value: [])
            }
            let loaded = try #require(try students.get(ada.id))
            #expect(throws: CofferError.damagedStore(part: .relation(entity: "Student"), reason: "a key of 10 bytes is not two ids")) {
                try loaded.teachers.load()
            }
        }
    }

    @Test func undecodableRecordIsADamagedRecord() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            let id = try notes.put(Note(title: "x"))
            try Damage.overwriteRecord(store, Note.self, id: id, with: [])
            #expect(throws: CofferError.damagedRecord(entity: "Note", id: id, reason: "the record is empty")) {
                try notes.get(id)
            }
        }
    }

    // MARK: Storage codes

    @Test func fullMapIsAnLMDBCode() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, maxSize: 2 << 20, durability: .noSync)) { (store: Store) throws in
            var big = Everything()
            big.data = Data(repeating: 1, count: 4 << 20)
            #expect { try store.box(for: Everything.self).put(&big) } throws: { error in
                guard case CofferError.storage(let code, _) = error else { return false }
                return code == .lmdb(.mapFull) && code.rawValue == MDB_MAP_FULL
            }
        }
    }

    @Test func fileThatIsNotLMDBIsAnLMDBCode() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory.path + "/data.mdb", contents: Data(repeating: 0xAB, count: 16384))
        #expect { _ = try Store(directory: directory.path) } throws: { error in
            guard case CofferError.storage(.lmdb(let code), _) = error else { return false }
            return code == .invalid && code.description.contains("MDB_INVALID")
        }
    }

    @Test func directoryThatIsAFileIsASystemCode() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let file = directory.path + "/plain-file"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        #expect { _ = try Store(directory: file) } throws: { error in
            guard case CofferError.storage(.system(let code), let message) = error else { return false }
            return code == .notADirectory && code.rawValue == ENOTDIR && code.text == String(cString: strerror(ENOTDIR))
                && message.contains(file)
        }
    }

    @Test func missingDirectoryOfAReadOnlyStoreIsASystemCode() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        #expect {
            _ = try Store(directory: directory.path + "/missing", options: StoreOptions(readOnly: true))
        } throws: { error in
            guard case CofferError.storage(.system(.noSuchFile), _) = error else { return false }
            return true
        }
    }

    @Test func storageCodesClassifyLMDBResults() {
        #expect(CofferError.StorageCode(result: MDB_READERS_FULL) == .lmdb(.readersFull))
        #expect(CofferError.StorageCode(result: MDB_PANIC) == .lmdb(.panic))
        #expect(CofferError.StorageCode(result: MDB_VERSION_MISMATCH) == .lmdb(.versionMismatch))
        #expect(CofferError.StorageCode(result: MDB_CORRUPTED) == .lmdb(.corrupted))
        #expect(CofferError.StorageCode(result: ENOSPC) == .system(.noSpace))
        #expect(CofferError.StorageCode(result: EACCES) == .system(.accessDenied))
        #expect(CofferError.LMDBCode.mapFull.description == "LMDB MDB_MAP_FULL (\(MDB_MAP_FULL))")
    }

    // MARK: Misuse

    @Test func misuseNamesTheCallMisused() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            let id = try notes.put(Note(title: "x"))
            let path = store.path
            #expect(throws: CofferError.misuse(.writeInsideRead(path: path))) { try store.read { try notes.put(Note(title: "y")) } }
            let target = TemporaryDirectory()
            defer { target.cleanUp() }
            #expect(throws: CofferError.misuse(.backupInsideWrite(path: path))) { try store.write { try store.backup(to: target.path) } }
            #expect(throws: CofferError.misuse(.verifyInsideWrite(path: path))) { try store.write { _ = try store.verify() } }
            #expect(throws: CofferError.misuse(.closeInsideTransaction(path: path))) { try store.read { try store.close() } }
            let query = try notes.query().build()
            #expect(throws: CofferError.misuse(.observeInsideTransaction(path: path))) {
                try store.read { _ = try QueryController(query) }
            }
            #expect(throws: CofferError.misuse(.storeAlreadyOpen(path: path))) { _ = try Store(directory: path) }
            try store.backup(to: target.path)
            #expect(throws: CofferError.misuse(.destinationHoldsStore(path: target.path))) { try store.backup(to: target.path) }
            #expect(throws: CofferError.misuse(.idChangedInModify(entity: "Note", from: id, to: 99))) {
                try notes.modifyEach { $0.id = 99 }
            }
            #expect(throws: CofferError.misuse(.indexStillDeclared(entity: "Contact", property: "city"))) {
                try store.box(for: Contact.self).dropIndex(on: Contact.city)
            }
            var ada = Student(name: "Ada")
            #expect(throws: CofferError.misuse(.positionOutOfRange(entity: "Teacher", position: 3, count: 0))) {
                try ada.teachers.remove(at: 3)
            }
            try store.box(for: Shop.Item.self).put(Shop.Item(price: 1))
            #expect(throws: CofferError.misuse(.sharedStoredName(storedName: "Item", type: "Inventory.Item", otherType: "Shop.Item", path: path))) {
                try store.box(for: Inventory.Item.self).count()
            }
            let copy = TemporaryDirectory()
            defer { copy.cleanUp() }
            let other = try Store(directory: copy.path, options: StoreOptions(durability: .noSync))
            defer { try? other.close() }
            try other.copySchema(of: "Note", from: store)
            #expect(throws: CofferError.misuse(.entityAlreadyStored(entity: "Note", path: other.path))) {
                try other.copySchema(of: "Note", from: store)
            }
        }
    }

    // MARK: Constraints and limits

    @Test func sumBeyondIntIsALimit() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var first = Everything(), second = Everything()
            first.int = .max
            second.int = 1
            try box.put([first, second])
            #expect(throws: CofferError.limitReached(.sum(entity: "Everything", property: "int"))) {
                try box.query().build().property(Everything.int).sum()
            }
        }
    }

    @Test func modifyingAMissingObjectIsNotFound() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            #expect(throws: CofferError.notFound(entity: "Note", id: 42)) { try notes.modify(42) { $0.title = "x" } }
        }
    }

    @Test func idsUsedUpAreALimit() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            var last = Note(title: "last")
            last.id = Transaction.explicitIdCeiling - 1
            try notes.put(&last)
            #expect(throws: CofferError.limitReached(.ids(entity: "Note"))) { try notes.put(Note(title: "one more")) }
        }
    }

    // MARK: Schema and names

    @Test func unknownEntityListsTheKnownOnes() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "x"))
            #expect(throws: CofferError.unknownEntity(name: "Nope", path: store.path, known: ["Note"])) {
                try store.query(entity: "Nope", selector: "{}") { _ in }
            }
        }
    }

    @Test func newerCatalogFormatIsFormatTooNew() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        try store.box(for: Note.self).put(Note(title: "x"))
        try store.performWrite { transaction in
            let catalog = try #require(store.catalogDatabase)
            try Catalog.store(CatalogMeta(formatVersion: Catalog.formatVersion + 1, lastEntityId: 1), key: Catalog.metaKey, dbi: catalog, in: transaction)
        }
        let path = store.path
        try store.close()
        #expect(throws: CofferError.formatTooNew(path: path, version: Catalog.formatVersion + 1, supported: Catalog.formatVersion)) {
            _ = try Store(directory: path)
        }
    }

    // MARK: Invalid input

    @Test func queriesThatCannotRunAreInvalidQueries() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            #expect(throws: CofferError.invalidQuery(entity: "Everything", property: nil, reason: "modulo(0) divides by zero")) {
                try box.query { Everything.int.modulo(0) == 1 }.build()
            }
            let articles = store.box(for: Article.self)
            #expect { try articles.query { Article.year > 1 }.build().findRanked() } throws: { error in
                guard case CofferError.invalidQuery("Article", nil, let reason) = error else { return false }
                return reason.contains("findRanked()")
            }
        }
    }

    @Test func negativePagingIsInvalidPaging() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put(Note(title: "x"))
            let query = try notes.query().build()
            #expect(throws: CofferError.invalidPaging(entity: "Note", offset: -1, limit: 5)) { try query.find(offset: -1, limit: 5) }
            #expect(throws: CofferError.invalidPaging(entity: "Note", offset: 0, limit: -2)) { try query.find(offset: 0, limit: -2) }
        }
    }

    @Test func upsertKeysSayWhatIsWrong() throws {
        try withStore { (store: Store) throws in
            var tagged = Tagged(tags: ["a"])
            #expect(throws: CofferError.invalidUpsertKey(entity: "Tagged", property: "tags", problem: .array)) {
                try store.box(for: Tagged.self).upsert(&tagged, by: Tagged.tags)
            }
            var contact = Contact(externalId: nil)
            #expect(throws: CofferError.invalidUpsertKey(entity: "Contact", property: "externalId", problem: .missingValue)) {
                try store.box(for: Contact.self).upsert(&contact, by: Contact.externalId)
            }
        }
    }

    @Test func selectorsNameEntityAndPath() throws {
        try withStore { (store: Store) throws in
            let pals = store.box(for: Pal.self)
            #expect { try pals.query(selector: #"{"age": {"$foo": 1}}"#).build() } throws: { error in
                guard case CofferError.invalidSelector("Pal", let path, let reason) = error else { return false }
                return path == "age.$foo" && reason.contains("unknown field operator")
            }
        }
    }

    @Test func sqlStatementsNameTheirPositionAndTheTextThere() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Pal.self).put(Pal(name: "Ada", age: 36))
            #expect { try store.query(sql: "SELECT name FROM Pal WHERE age > 'old'") } throws: { error in
                guard case CofferError.invalidSQL(32, let near, let reason) = error else { return false }
                return near.hasPrefix("> 'old'") && reason == "cannot compare INTEGER with TEXT"
            }
        }
    }

    @Test func importLinesAreInvalidOrFailedWithTheirCause() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Contact.self).put(Contact(email: "taken@x.org"))
            #expect { try store.importObjects(entity: "Contact", jsonLines: Data("{\"city\": \"A\"}\nnot json".utf8)) } throws: { error in
                guard case CofferError.invalidImport("Contact", 2, let reason) = error else { return false }
                return reason.contains("not valid JSON")
            }
            #expect {
                try store.importObjects(entity: "Contact", jsonLines: Data("{\"email\": \"taken@x.org\"}".utf8))
            } throws: { error in
                guard case CofferError.importFailed("Contact", 1, .uniqueViolation("Contact", "email", let value)) = error else { return false }
                return value.contains("taken@x.org")
            }
        }
    }

    @Test func refusedConvertedValuesAreInvalidStoredValues() {
        #expect(throws: CofferError.invalidStoredValue(type: "Decimal", value: "abc")) { try Decimal(storedValue: "abc") }
        #expect(throws: CofferError.invalidStoredValue(type: "URL", value: "")) { try URL(storedValue: "") }
    }
}
