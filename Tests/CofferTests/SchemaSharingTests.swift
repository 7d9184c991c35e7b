@testable import Coffer
import CLMDB
import Foundation
import Testing

/// The catalog generation a fresh read sees.
private func catalogGeneration(_ store: Store) throws -> UInt64 {
    try store.performRead { transaction in
        guard let catalog = store.catalogDatabase else { return 0 }
        return try Catalog.generation(dbi: catalog, in: transaction)
    }
}

/// Several builds of one entity (`Note` without indexes, `Indexed.Note` with an index on
/// `title` and a unique `rank`) sharing one store, in one process and in several.
@Suite struct SchemaSharingTests {
    /// Regression: build 1 put, build 2 put and added an index, build 1 removed, all in one
    /// `write`: build 1's binding, made before the index existed, left its entry behind.
    @Test func bindingsMadeBeforeASchemaChangeInTheSameWriteBindAgain() throws {
        try withStore { (store: Store) throws in
            let plain = store.box(for: Note.self)
            let indexed = store.box(for: Indexed.Note.self)
            try store.write {
                let first = try plain.put(Note(title: "a", rank: 1))
                try indexed.put(Indexed.Note(title: "b", rank: 2))   // adds the indexes
                try plain.remove(first)
                try plain.put(Note(title: "c", rank: 3))
            }
            #expect(try store.verify().isIntact)
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            #expect(try indexed.query { Indexed.Note.title == "a" }.build().findIds().isEmpty)
            #expect(try indexed.query { Indexed.Note.title == "c" }.build().count() == 1)
            #expect(throws: CofferError.self) { try plain.put(Note(title: "d", rank: 3)) }   // the unique rank holds
        }
    }

    /// Two builds where only one indexes a property: neither drops the other's index, so
    /// alternating writes never rebuild it (the catalog stops changing).
    @Test func buildsThatDisagreeOnAnIndexDoNotRebuildItOnEveryWrite() throws {
        try withStore { (store: Store) throws in
            let plain = store.box(for: Note.self)
            let indexed = store.box(for: Indexed.Note.self)
            try plain.put(Note(title: "p0", rank: 0))
            try indexed.put(Indexed.Note(title: "i0", rank: 1000))
            let settled = try catalogGeneration(store)
            for round in 1...10 {
                try plain.put(Note(title: "p\(round)", rank: round))
                try indexed.put(Indexed.Note(title: "i\(round)", rank: 1000 + round))
            }
            #expect(try catalogGeneration(store) == settled)
            #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
            #expect(try indexed.query { Indexed.Note.title == "p7" }.build().findIds() == [15])
            #expect(try store.verify().isIntact)
        }
    }

    /// Random transactions of both builds (puts, updates, removes, index drops, failures)
    /// against a plain model: after each, queries through the index and through a scan
    /// agree with the model, and the store verifies.
    @Test(arguments: [11, 12, 13])
    func randomBuildsAgreeWithAModel(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        try withStore { (store: Store) throws in
            let plain = store.box(for: Note.self)
            let indexed = store.box(for: Indexed.Note.self)
            var model: [Id: (title: String, rank: Int)] = [:]
            var nextRank = 0
            for _ in 0..<120 {
                var pending = model
                var rankCounter = nextRank
                do {
                    try store.write {
                        for _ in 0..<Int.random(in: 1...4, using: &random) {
                            let title = "t\(Int.random(in: 0..<6, using: &random))"
                            switch Int.random(in: 0..<10, using: &random) {
                            case 0, 1:
                                rankCounter += 1
                                let id = try plain.put(Note(title: title, rank: rankCounter))
                                pending[id] = (title, rankCounter)
                            case 2, 3:
                                rankCounter += 1
                                let id = try indexed.put(Indexed.Note(title: title, rank: rankCounter))
                                pending[id] = (title, rankCounter)
                            case 4:
                                guard let id = pending.keys.randomElement(using: &random) else { continue }
                                var note = try #require(try plain.get(id))
                                note.title = title
                                try plain.put(&note)
                                pending[id]?.title = title
                            case 5:
                                guard let id = pending.keys.randomElement(using: &random) else { continue }
                                var note = try #require(try indexed.get(id))
                                note.title = title
                                try indexed.put(&note)
                                pending[id]?.title = title
                            case 6:
                                guard let id = pending.keys.randomElement(using: &random) else { continue }
                                _ = try (Bool.random(using: &random) ? plain.remove(id) : indexed.remove(id))
                                pending[id] = nil
                            case 7:
                                try plain.dropIndex(on: Note.title)
                            case 8:
                                try plain.dropIndex(on: Note.rank)
                            default:
                                try plain.removeAll()
                                pending.removeAll()
                            }
                        }
                        if Int.random(in: 0..<6, using: &random) == 0 { throw Boom() }
                    }
                    model = pending
                    nextRank = rankCounter
                } catch is Boom {
                }
                let title = "t\(Int.random(in: 0..<6, using: &random))"
                let expected = model.filter { $0.value.title == title }.keys.sorted()
                #expect(try indexed.query { Indexed.Note.title == title }.build().findIds() == expected)
                #expect(try plain.query { Note.title == title }.build().findIds() == expected)
                #expect(try store.read { try indexed.query { Indexed.Note.title == title }.build().findIds() } == expected)
                #expect(try plain.count() == model.count)
            }
            #expect(try store.verify().isIntact)
            #expect(try IndexProbe.isConsistent(store, Note.self))
        }
    }

    /// A build that does not declare a property at all keeps maintaining the full-text
    /// index another build declared on it. (Alternating such builds rewrites the catalog
    /// entry, which marks the property retired or not, so the generation moves; the index
    /// is never emptied or rebuilt.)
    @Test func aFullTextIndexOfAPropertyABuildLacksIsKeptAndMaintained() throws {
        try withStore { (store: Store) throws in
            let articles = store.box(for: Article.self)
            let lacking = store.box(for: Lacking.Article.self)
            let first = try articles.put(Article(title: "One", body: "red fish"))
            try lacking.put(Lacking.Article(title: "Two"))
            for round in 0..<5 {
                try articles.put(Article(title: "A\(round)", body: "blue fish \(round)"))
                var kept = try #require(try lacking.get(first))
                kept.year = 1990 + round   // carries body through the update
                try lacking.put(&kept)
                try lacking.put(Lacking.Article(title: "L\(round)"))
            }
            #expect(try articles.query { Article.body.matches("red") }.build().findIds() == [first])
            #expect(try articles.query { Article.body.matches("blue") }.build().count() == 5)
            try lacking.remove(first)
            #expect(try articles.query { Article.body.matches("red") }.build().findIds().isEmpty)
            #expect(try store.verify().isIntact)
        }
    }

    // MARK: Across processes

    /// The child: another build of the app, without the parent's indexes, writes and (when
    /// asked) drops the indexes.
    @Test func otherBuildChild() throws {
        guard let role = ChildProcess.role, role.hasPrefix("other-build"), let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        let notes = store.box(for: Note.self)
        try notes.put(Note(title: "n5", rank: 100))
        var first = try #require(try notes.get(1))
        first.title = "renamed"
        try notes.put(&first)
        try notes.remove(2)
        if role == "other-build-drop" {
            try notes.dropIndex(on: Note.title)
            try notes.dropIndex(on: Note.rank)
            try notes.put(Note(title: "n5", rank: 5))   // a duplicate rank: no index enforces it now
        }
        try store.close()
    }

    /// Regression: another process registered the entity without this build's index and
    /// deleted the index database; this process's reads of the index answered nothing and
    /// its next write crashed in liblmdb on the stale handle.
    @Test(arguments: ["other-build", "other-build-drop"])
    func anotherProcessChangingTheSchemaIsNoticedByReadsAndWrites(role: String) throws {
        guard ChildProcess.role == nil else { return }
        let (directory, store) = try ChildProcess.parentStore()
        defer { try? store.close(); directory.cleanUp() }
        let notes = store.box(for: Indexed.Note.self)
        try notes.put((0..<10).map { Indexed.Note(title: "n\($0)", rank: $0) })
        #expect(try notes.query { Indexed.Note.title == "n5" }.build().findIds() == [6])   // through the index
        try #require(try ChildProcess.run(filter: "otherBuildChild", role: role, directory: directory.path) == 0)
        let dropped = role == "other-build-drop"
        let expected: [Id] = dropped ? [6, 11, 12] : [6, 11]
        // Reads notice the change before writing anything.
        #expect(try notes.query { Indexed.Note.title == "n5" }.build().findIds() == expected)
        #expect(try store.read { try notes.query { Indexed.Note.title == "n5" }.build().findIds() } == expected)
        #expect(try notes.query { Indexed.Note.title == "renamed" }.build().findIds() == [1])
        if dropped {
            // The duplicate rank stored while no index existed stops the index's rebuild.
            #expect(throws: CofferError.self) { try notes.put(Indexed.Note(title: "x", rank: 50)) }
            try store.box(for: Note.self).remove(12)
        }
        // Writes maintain every index the catalog lists (rebuilt when it was dropped).
        let added = try notes.put(Indexed.Note(title: "n5", rank: 200))
        var third = try #require(try notes.get(3))
        third.title = "n5"
        try notes.put(&third)
        try notes.remove(4)
        #expect(try notes.query { Indexed.Note.title == "n5" }.build().findIds() == [3, 6, 11, added])
        #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
        #expect(try store.verify().isIntact)
    }

    /// The child: another build that only drops the index on `title` (one commit).
    @Test func dropOnlyChild() throws {
        guard let store = try ChildProcess.openStore(role: "drop-only") else { return }
        try store.box(for: Note.self).dropIndex(on: Note.title)
        try store.close()
    }

    /// A write that stores nothing commits no transaction, so its id is the next commit's,
    /// whoever makes it: the generation this process knows must not be vouched for it.
    @Test func anEmptyWriteDoesNotVouchForTheNextCommitsGeneration() throws {
        guard ChildProcess.role == nil else { return }
        let (directory, store) = try ChildProcess.parentStore()
        defer { try? store.close(); directory.cleanUp() }
        let notes = store.box(for: Indexed.Note.self)
        try notes.put((0..<10).map { Indexed.Note(title: "n\($0)", rank: $0) })
        #expect(try notes.query { Indexed.Note.title == "n5" }.build().findIds() == [6])
        try store.write {}
        try #require(try ChildProcess.run(filter: "dropOnlyChild", role: "drop-only", directory: directory.path) == 0)
        // The emptied index would answer nothing: the read must see the new generation.
        #expect(try notes.query { Indexed.Note.title == "n5" }.build().findIds() == [6])
    }

    /// The child: creates an entity the parent has never seen and stores objects in it.
    @Test func newEntityChild() throws {
        guard let store = try ChildProcess.openStore(role: "new-entity") else { return }
        try store.box(for: Person.self).put((0..<25).map { Person(firstName: "p\($0)", lastName: "x", age: $0) })
        try store.close()
    }

    /// Regression: a process that reads only inside `store.read { }` never saw an entity
    /// another process created after it opened: every read threw an error.
    @Test func readsInsideAClosureSeeEntitiesAnotherProcessCreated() throws {
        guard ChildProcess.role == nil else { return }
        let (directory, store) = try ChildProcess.parentStore()
        defer { try? store.close(); directory.cleanUp() }
        try store.box(for: Note.self).put(Note(title: "x"))
        let people = store.box(for: Person.self)
        try #require(try ChildProcess.run(filter: "newEntityChild", role: "new-entity", directory: directory.path) == 0)
        var runs = 0
        let (count, young) = try store.read {
            runs += 1
            return (try people.count(), try people.query { Person.age < 5 }.build().count())
        }
        #expect(count == 25 && young == 5)
        #expect(runs == 2)   // the first run met the unknown table; the closure ran again
    }

    /// The child: a build with a `ToMany` relation the parent's first build lacks.
    @Test func relationBuildChild() throws {
        guard let store = try ChildProcess.openStore(role: "relation-build") else { return }
        var student = Student(name: "s2")
        student.teachers.append(Teacher(name: "t"))
        try store.box(for: Student.self).put(&student)
        try store.close()
    }

    /// Regression: a relation another process added after this one opened its tables was
    /// read as "no relations" (its tables' handles were unknown).
    @Test func relationsAnotherProcessAddedAreNeverReadAsEmpty() throws {
        guard ChildProcess.role == nil else { return }
        let (directory, store) = try ChildProcess.parentStore()
        defer { try? store.close(); directory.cleanUp() }
        try store.box(for: Lacking.Student.self).put(Lacking.Student(name: "s1"))
        let students = store.box(for: Student.self)
        #expect(try students.query(selector: #"{"teachers.name": "t"}"#).build().count() == 0)
        try #require(try ChildProcess.run(filter: "relationBuildChild", role: "relation-build", directory: directory.path) == 0)
        #expect(try students.query(selector: #"{"teachers.name": "t"}"#).build().find().map(\.name) == ["s2"])
        #expect(try store.read { try students.query(selector: #"{"teachers.name": "t"}"#).build().count() } == 1)
        let loaded = try #require(try students.query { Student.name == "s2" }.build().findFirst())
        #expect(try loaded.teachers.load().map(\.name) == ["t"])
        var lines: [String] = []
        try store.query(entity: "Student", selector: #"{"name": "s2"}"#, fields: ["teachers"]) { lines.append($0) }
        #expect(lines.count == 1 && lines[0].contains("\"teachers\":["))
    }

    /// The child: stores enough objects to grow a tiny map several times.
    @Test func mapGrowingChild() throws {
        guard ChildProcess.role == "map-growing", let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync))
        try store.box(for: Note.self).put((0..<20_000).map { Note(title: "n\($0)", body: String(repeating: "g", count: 400)) })
        try store.close()
    }

    /// Regression: a store opened before another process grew the map failed to open new
    /// tables (`info()`, a first read of an entity) with MDB_MAP_RESIZED ("cannot read the
    /// catalog"), where reads and writes adopt the new size and retry.
    @Test func readerAdoptsTheMapSizeAnotherProcessGrew() throws {
        guard ChildProcess.role == nil else { return }
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try Store(directory: directory.path, options: StoreOptions(initialMapSize: 1 << 20)).close()
        let reader = try Store(directory: directory.path, options: StoreOptions(initialMapSize: 1 << 20, readOnly: true))
        defer { try? reader.close() }
        #expect(try reader.info().mapSize <= 1 << 20)
        try #require(try ChildProcess.run(filter: "mapGrowingChild", role: "map-growing", directory: directory.path) == 0)
        // A copy adopts the new size too (and leaves no partial file when it cannot copy).
        try reader.backup(to: directory.path + "/copy")
        let info = try reader.info()
        #expect(info.mapSize > 1 << 20)
        #expect(info.entities.first { $0.name == "Note" }?.count == 20_000)
        #expect(try reader.read { try reader.box(for: Note.self).count() } == 20_000)
        let copy = try Store(directory: directory.path + "/copy")
        defer { try? copy.close() }
        #expect(try copy.box(for: Note.self).count() == 20_000)
    }
}
