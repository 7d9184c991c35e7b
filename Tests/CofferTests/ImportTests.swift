@testable import Coffer
import Foundation
import Testing

/// Exports and imports (`Store.dump`/`query(entity:)` JSON lines, `Store.importObjects`,
/// `Store.copySchema`): round trips, every refusal, upserts, timestamps, conflicts,
/// relations, retired properties, and mutated input that must never crash or half-import.
@Suite struct ImportTests {
    func export(_ store: Store, _ entity: String) throws -> Data {
        var text = ""
        try store.dump(entity: entity) { text += $0 + "\n" }
        return Data(text.utf8)
    }

    func withTwoStores<T>(_ body: (Store, Store) throws -> T) throws -> T {
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in try body(source, target) }
        }
    }

    static func randomEverything(using rng: inout SplitMix64) -> Everything {
        func text() -> String {
            let pieces = ["a", "Z", "é", "世界", "🌍", "\"", "\\", "\n", "\t", "\u{01}", " ", "/", "\u{7F}"]
            return (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
        }
        func double() -> Double {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: return [0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e15, -1e15 + 0.5].randomElement(using: &rng)!
            case 1: return Double(Int.random(in: -1000...1000, using: &rng))
            default:
                let value = Double(bitPattern: rng.next())
                return value.isNaN ? 1.5 : value
            }
        }
        func seconds() -> Double {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return Double(Int.random(in: -2_000_000_000...2_000_000_000, using: &rng))
            case 1: return Double.random(in: -1e9...1e9, using: &rng)
            case 2: return Double.random(in: -1...1, using: &rng)
            default: return [Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate, 1e13, -1e300].randomElement(using: &rng)!
            }
        }
        var value = Everything()
        value.bool = Bool.random(using: &rng)
        value.int = Int(truncatingIfNeeded: rng.next())
        value.int8 = Int8(truncatingIfNeeded: rng.next())
        value.int16 = Int16(truncatingIfNeeded: rng.next())
        value.int32 = Int32(truncatingIfNeeded: rng.next())
        value.int64 = Int64(truncatingIfNeeded: rng.next() >> UInt64.random(in: 0...63, using: &rng))
        value.uint = UInt(truncatingIfNeeded: rng.next())
        value.uint8 = UInt8(truncatingIfNeeded: rng.next())
        value.uint16 = UInt16(truncatingIfNeeded: rng.next())
        value.uint32 = UInt32(truncatingIfNeeded: rng.next())
        value.uint64 = rng.next()
        let float = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
        value.float = float.isNaN ? -0.0 : float
        value.double = double()
        value.string = text()
        value.date = Date(timeIntervalSinceReferenceDate: seconds())
        value.data = Data((0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        value.uuid = UUID()
        value.strings = (0..<Int.random(in: 0...4, using: &rng)).map { _ in text() }
        value.ints = (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int(truncatingIfNeeded: rng.next()) }
        value.doubles = (0..<Int.random(in: 0...4, using: &rng)).map { _ in double() }
        value.mood = Bool.random(using: &rng) ? .happy : .grumpy
        value.level = Bool.random(using: &rng) ? .low : .high
        if Bool.random(using: &rng) {
            value.optBool = Bool.random(using: &rng)
            value.optInt = Int(truncatingIfNeeded: rng.next())
            value.optInt8 = .min
            value.optInt16 = .max
            value.optInt32 = Int32(truncatingIfNeeded: rng.next())
            value.optInt64 = .min
            value.optUInt8 = .max
            value.optUInt16 = 0
            value.optUInt32 = UInt32(truncatingIfNeeded: rng.next())
            value.optUInt64 = .max
            value.optFloat = 0.1
            value.optDouble = double()
            value.optString = text()
            value.optDate = Date(timeIntervalSinceReferenceDate: seconds())
            value.optData = Data()
            value.optUUID = UUID()
            value.optStrings = [text()]
            value.optInts = []
            value.optDoubles = [double()]
            value.optMood = .grumpy
            value.optLevel = .high
        }
        return value
    }

    @Test func exportThenImportIntoANewStoreGivesIdenticalObjects() throws {
        var rng = SplitMix64(state: 0x1F0E)
        try withTwoStores { source, target in
            let originals = try source.box(for: Everything.self).put((0..<300).map { _ in Self.randomEverything(using: &rng) })
            // Gaps in the ids must survive too.
            try source.box(for: Everything.self).remove(Array(originals.prefix(20)))
            let exported = try export(source, "Everything")
            try target.copySchema(of: "Everything", from: source)
            let summary = try target.importObjects(entity: "Everything", jsonLines: exported)
            #expect(summary == ImportSummary(inserted: 280, updated: 0))
            let before = try source.box(for: Everything.self).all()
            let after = try target.box(for: Everything.self).all()
            #expect(before.map(\.id) == after.map(\.id))
            for (a, b) in zip(before, after) { RoundTripTests().assertSame(a, b) }
            #expect(try export(target, "Everything") == exported)
            #expect(try target.verify().isIntact)
            // The sequence continues above the imported ids.
            let next = try target.box(for: Everything.self).put(Everything())
            #expect(next > originals.last!)
        }
    }

    @Test func importingTheSameExportAgainUpdatesEveryObjectInPlace() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Contact.self)
            try people.put((0..<50).map { Contact(email: "p\($0)@x.org", externalId: "e\($0)", city: "C\($0 % 7)", age: $0) })
            let exported = try export(store, "Contact")
            let summary = try store.importObjects(entity: "Contact", jsonLines: exported)
            #expect(summary == ImportSummary(inserted: 0, updated: 50))
            #expect(try export(store, "Contact") == exported)
            #expect(try store.verify().isIntact)
            #expect(try people.query { Contact.city == "C3" }.build().count() == 7)
        }
    }

    @Test func everyBadLineIsRefusedWithItsNumberAndNothingIsImported() throws {
        let bad: [(String, String)] = [
            ("{\"title\": \"x\"", "not valid JSON"),
            ("[1, 2]", "one JSON object"),
            ("{\"title\": \"x\", \"colour\": 1}", "no property colour"),
            ("{\"title\": 7}", "needs a string"),
            ("{\"title\": \"x\", \"rank\": \"7\"}", "needs an integer"),
            ("{\"title\": \"x\", \"rank\": 1.5}", "needs an integer"),
            ("{\"title\": \"x\", \"rank\": 1e30}", "needs an integer"),
            ("{\"rank\": 1}", "needs a value"),
            ("{\"title\": null}", "needs a value"),
            ("{\"id\": 0, \"title\": \"x\"}", "integer from 1"),
            ("{\"id\": -4, \"title\": \"x\"}", "integer from 1"),
            ("{\"id\": \"4\", \"title\": \"x\"}", "integer from 1"),
            ("{\"title\": \"x\", \"title\": \"y\"}", "given twice"),
            ("{\"id\": 3, \"_id\": 3, \"title\": \"x\"}", "not both"),
            ("{\"id\": 3, \"title\": \"x\", \"$corrupt\": \"cut off\"}", "damaged record"),
        ]
        for (line, expected) in bad {
            try withStore { (store: Store) throws in
                let notes = store.box(for: Note.self)
                let kept = try notes.put(Note(title: "kept", rank: 1))
                let before = try export(store, "Note")
                let input = Data("{\"title\": \"a\"}\n\n{\"title\": \"b\", \"rank\": 2}\n\(line)\n{\"title\": \"c\"}\n".utf8)
                do {
                    try store.importObjects(entity: "Note", jsonLines: input)
                    Issue.record("accepted \(line)")
                } catch CofferError.invalidImport(_, let number, let message) {
                    #expect(number == 4, "\(line)")
                    #expect(message.contains(expected), "\(line): \(message)")
                }
                #expect(try export(store, "Note") == before)
                #expect(try notes.get(kept)?.title == "kept")
                // The ids the refused import handed out are not reused, but nothing points at them.
                #expect(try notes.count() == 1)
            }
        }
    }

    @Test func valuesAreCheckedAgainstEachStoredType() throws {
        let bad: [String] = [
            #"{"int8": 128}"#, #"{"int8": -129}"#, #"{"uint8": 256}"#, #"{"uint8": -1}"#, #"{"uint64": 18446744073709551616}"#,
            #"{"int16": 40000}"#, #"{"int32": 3000000000}"#, #"{"uint32": 5000000000}"#, #"{"bool": 1}"#,
            #"{"double": "1"}"#, #"{"date": "yesterday"}"#, #"{"date": "2023-02-30"}"#, #"{"date": true}"#,
            #"{"data": "***"}"#, #"{"uuid": "not-a-uuid"}"#, #"{"strings": [1]}"#, #"{"strings": "a"}"#,
            #"{"ints": [1.5]}"#, #"{"doubles": ["x"]}"#, #"{"mood": 1}"#, #"{"level": "high"}"#,
        ]
        try withStore { (store: Store) throws in
            try store.box(for: Everything.self).put(Everything())
            let complete = String(decoding: try export(store, "Everything"), as: UTF8.self)
            // One valid object as a template (without its id), each bad value patched into it.
            guard case .object(let members) = try JSONParser.parse(Array(complete.split(separator: "\n")[0].utf8)) else {
                Issue.record("the export is not an object")
                return
            }
            for value in bad {
                guard case .object(let patch) = try JSONParser.parse(Array(value.utf8)), let change = patch.first else { continue }
                #expect(members.contains { $0.key == change.key }, "\(value)")
                let line = JSONNode.object(members.filter { $0.key != "id" }.map { $0.key == change.key ? change : $0 }).text
                #expect(throws: CofferError.self, "\(value)") {
                    try store.importObjects(entity: "Everything", jsonLines: Data(line.utf8))
                }
            }
            // The template itself imports.
            let line = JSONNode.object(members.filter { $0.key != "id" }).text
            try store.importObjects(entity: "Everything", jsonLines: Data(line.utf8))
            #expect(try store.box(for: Everything.self).count() == 2)
        }
    }

    @Test func upsertByAKeyUpdatesMatchesAndInsertsTheRest() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            var ada = Contact(externalId: "sf-1", city: "London", age: 36)
            try contacts.put(&ada)
            let lines = Data("""
                {"id": 999, "externalId": "sf-1", "city": "Paris", "age": 37}
                {"externalId": "sf-2", "city": "Oslo", "age": 20}
                """.utf8)
            let summary = try store.importObjects(entity: "Contact", jsonLines: lines, upsertBy: "externalId")
            #expect(summary == ImportSummary(inserted: 1, updated: 1))
            let all = try contacts.all()
            #expect(all.count == 2)
            #expect(try contacts.get(ada.id)?.city == "Paris")   // the key decided, not the id
            #expect(try contacts.get(999) == nil)
            #expect(all.contains { $0.externalId == "sf-2" && $0.city == "Oslo" })
            #expect(throws: CofferError.self) {
                try store.importObjects(entity: "Contact", jsonLines: lines, upsertBy: "note")   // not indexed
            }
            #expect(throws: CofferError.self) {
                try store.importObjects(entity: "Contact", jsonLines: lines, upsertBy: "nothing")
            }
        }
    }

    @Test func anAmbiguousUpsertKeyOrAUniqueViolationRollsTheWholeImportBack() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put([Contact(externalId: "twice", city: "A"), Contact(externalId: "twice", city: "B"),
                              Contact(email: "taken@x.org", city: "C")])
            let before = try export(store, "Contact")
            do {
                try store.importObjects(entity: "Contact", jsonLines: Data("{\"externalId\": \"new\"}\n{\"externalId\": \"twice\"}".utf8), upsertBy: "externalId")
                Issue.record("an ambiguous key was accepted")
            } catch CofferError.importFailed("Contact", let line, .ambiguousUpsert("Contact", "externalId", _, let count)) {
                #expect(line == 2 && count == 2)
            }
            do {
                try store.importObjects(entity: "Contact", jsonLines: Data("{\"city\": \"D\"}\n{\"email\": \"taken@x.org\"}".utf8))
                Issue.record("a unique violation was accepted")
            } catch CofferError.importFailed("Contact", let line, .uniqueViolation("Contact", "email", let value)) {
                #expect(line == 2 && value.contains("taken@x.org"))
            }
            #expect(try export(store, "Contact") == before)
        }
    }

    @Test func conflictStrategiesApplyAsForPut() throws {
        try withStore { (store: Store) throws in
            let accounts = store.box(for: Account.self)
            let old = try accounts.put(Account(handle: "ada", balance: 1))
            try store.importObjects(entity: "Account", jsonLines: Data(#"{"handle": "ada", "balance": 2}"#.utf8))
            #expect(try accounts.get(old) == nil)   // .replace removed the holder
            #expect(try accounts.all().map(\.balance) == [2])
            let profiles = store.box(for: Profile.self)
            let holder = try profiles.put(Profile(key: "theme", value: "dark"))
            let summary = try store.importObjects(entity: "Profile", jsonLines: Data(#"{"key": "theme", "value": "light"}"#.utf8))
            #expect(summary == ImportSummary(inserted: 0, updated: 1))
            #expect(try profiles.all().map(\.id) == [holder])   // .update became the holder
            #expect(try profiles.get(holder)?.value == "light")
        }
    }

    @Test func timestampsInTheLineAreKeptAndMissingOnesStamped() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put(Contact(city: "registers the entity"))
            let start = Date()
            try store.importObjects(entity: "Contact", jsonLines: Data("""
                {"id": 5, "city": "Kept", "created": "2001-02-03T04:05:06.789Z", "modified": "2002-01-01T00:00:00.000Z"}
                {"id": 6, "city": "Stamped"}
                """.utf8))
            let kept = try #require(try contacts.get(5))
            #expect(kept.created == Date(timeIntervalSinceReferenceDate: ISODate.seconds(from: "2001-02-03T04:05:06.789Z")!))
            #expect(kept.modified == Date(timeIntervalSinceReferenceDate: ISODate.seconds(from: "2002-01-01T00:00:00Z")!))
            let stamped = try #require(try contacts.get(6))
            #expect(stamped.created >= start && stamped.modified >= start)
            // Updating without a creation date keeps the stored one.
            try store.importObjects(entity: "Contact", jsonLines: Data(#"{"id": 5, "city": "Again"}"#.utf8))
            #expect(try contacts.get(5)?.created == kept.created)
            #expect(try contacts.get(5)!.modified >= start)
        }
    }

    @Test func linksAndManyToManyRelationsRoundTrip() throws {
        try withTwoStores { source, target in
            var joe = Customer(name: "Joe")
            var ann = Customer(name: "Ann")
            try source.box(for: Customer.self).put(&joe)
            try source.box(for: Customer.self).put(&ann)
            try source.box(for: Order.self).put([Order(date: Date(timeIntervalSinceReferenceDate: 5), total: 9, customer: ToOne(joe)),
                                                  Order(date: Date(timeIntervalSinceReferenceDate: 6), total: 3, customer: ToOne(ann)),
                                                  Order(date: Date(timeIntervalSinceReferenceDate: 7), total: 1)])
            var smith = Teacher(name: "Smith")
            var jones = Teacher(name: "Jones")
            try source.box(for: Teacher.self).put(&smith)
            try source.box(for: Teacher.self).put(&jones)
            var amy = Student(name: "Amy")
            amy.teachers = [smith, jones]
            var bob = Student(name: "Bob")
            bob.teachers = [jones]
            try source.box(for: Student.self).put([amy, bob, Student(name: "Cy")])
            let studentLines = try export(source, "Student")
            #expect(String(decoding: studentLines, as: UTF8.self).contains("\"teachers\":[1,2]"))
            // Owners before targets: links and relations may point ahead.
            for entity in ["Order", "Student", "Customer", "Teacher"] {
                try target.copySchema(of: entity, from: source)
                try target.importObjects(entity: entity, jsonLines: try export(source, entity))
            }
            for entity in ["Order", "Student", "Customer", "Teacher"] {
                #expect(try export(target, entity) == export(source, entity), "\(entity)")
            }
            let students = try target.box(for: Student.self).all()
            #expect(try students.map { try $0.teachers.load().map(\.name).sorted() } == [["Jones", "Smith"], ["Jones"], []])
            let joeInTarget = try #require(try target.box(for: Customer.self).query { Customer.name == "Joe" }.build().findFirst())
            #expect(try joeInTarget.orders.load().map(\.total) == [9])
            #expect(try target.verify().isIntact)
            // An update replaces the relation rows with the line's.
            try target.importObjects(entity: "Student", jsonLines: Data(#"{"id": 1, "name": "Amy", "teachers": [2]}"#.utf8))
            #expect(try target.box(for: Student.self).get(1)?.teachers.load().map(\.name) == ["Jones"])
            #expect(try target.verify().isIntact)
        }
    }

    @Test func retiredPropertiesKeepTheirValuesThroughExportAndImport() throws {
        try withTwoStores { source, target in
            try source.box(for: Poem.self).put(Poem(title: "Ode", genre: .poetry, maybe: .fiction))
            try source.box(for: V2.Poem.self).put(V2.Poem(title: "Later"))   // retires `maybe`
            let exported = try export(source, "Poem")
            #expect(String(decoding: exported, as: UTF8.self).contains("\"maybe\":\"fiction\""))
            try target.copySchema(of: "Poem", from: source)
            try target.importObjects(entity: "Poem", jsonLines: exported)
            #expect(try target.box(for: Poem.self).get(1)?.maybe == .fiction)
            // Into the same store, too: the retired value comes from the line.
            try source.importObjects(entity: "Poem", jsonLines: exported)
            #expect(try source.box(for: Poem.self).get(1)?.maybe == .fiction)
        }
    }

    @Test func copyingASchemaRefusesAnEntityTheStoreHasOrTheSourceLacks() throws {
        try withTwoStores { source, target in
            try source.box(for: Note.self).put(Note(title: "x"))
            try target.box(for: Note.self).put(Note(title: "y"))
            #expect(throws: CofferError.self) { try target.copySchema(of: "Note", from: source) }
            #expect(throws: CofferError.self) { try target.copySchema(of: "Nothing", from: source) }
            #expect(throws: CofferError.self) { try target.importObjects(entity: "Nothing", jsonLines: Data()) }
        }
    }

    @Test func anImportThatGrowsTheMapGivesTheSameResultAsOneThatDoesNot() throws {
        // Full-text and index entries make the import outgrow a 1 MiB map several times.
        let lines = Data((0..<3_000).map { "{\"title\": \"title \($0) of many words\", \"body\": \"\(String(repeating: "body text \($0) ", count: 8))\"}" }
            .joined(separator: "\n").utf8)
        func importInto(_ options: StoreOptions) throws -> (ImportSummary, Data) {
            try withStore(options: options) { (store: Store) throws in
                try store.box(for: Article.self).put(Article(title: "seed", body: "registers the entity"))
                let summary = try store.importObjects(entity: "Article", jsonLines: lines)
                #expect(try store.verify().isIntact)
                #expect(try store.box(for: Article.self).query { Article.body.matches("\"text 2999\"") }.build().count() == 1)
                if options.initialMapSize == 1 << 20 { #expect(try store.info().mapSize > 1 << 20, "the map grew") }
                return (summary, try export(store, "Article"))
            }
        }
        let grown = try importInto(StoreOptions(initialMapSize: 1 << 20, durability: .noSync))
        let roomy = try importInto(StoreOptions(durability: .noSync))
        #expect(grown.0 == ImportSummary(inserted: 3_000, updated: 0))
        #expect(grown.0 == roomy.0 && grown.1 == roomy.1)
    }

    @Test func progressIsReportedUpToTheLastLine() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "seed"))
            let lines = Data((0..<2500).map { "{\"title\": \"n\($0)\"}" }.joined(separator: "\r\n").utf8)
            var reports: [(Int, Int)] = []
            try store.importObjects(entity: "Note", jsonLines: lines) { reports.append(($0, $1)) }
            #expect(reports.first! == (0, 2500) && reports.last! == (2500, 2500))
            #expect(reports.count == 4)
            #expect(try store.box(for: Note.self).count() == 2501)
        }
    }

    @Test func mutatedExportsNeverCrashAndNeverImportHalfway() throws {
        var rng = SplitMix64(state: 0xFEED)
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            try box.put((0..<6).map { _ in Self.randomEverything(using: &rng) })
            let valid = Array(try export(store, "Everything"))
            let alphabet = Array("{}[]\":,.-+0123456789eEtrufalsn \\u".utf8) + [0x00, 0xFF, 0x0A]
            for _ in 0..<300 {
                var bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let at = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: bytes.remove(at: at)
                    case 1: bytes.insert(alphabet.randomElement(using: &rng)!, at: at)
                    default: bytes[at] = alphabet.randomElement(using: &rng)!
                    }
                }
                let before = try export(store, "Everything")
                do {
                    try store.importObjects(entity: "Everything", jsonLines: Data(bytes))
                } catch let error as CofferError {
                    switch error {
                    case .invalidImport, .importFailed: break
                    default:
                        Issue.record("unexpected \(error)")
                        return
                    }
                    #expect(try export(store, "Everything") == before)
                }
                #expect(try store.verify().isIntact)
            }
        }
    }

    @Test func datesRoundTripExactlyThroughISOText() throws {
        var rng = SplitMix64(state: 0xDA7E)
        let formatter = ISO8601DateFormatter()
        for round in 0..<20_000 {
            let seconds: Double
            switch round % 4 {
            case 0: seconds = Double(Int64.random(in: -63_000_000_000...252_000_000_000, using: &rng))
            case 1: seconds = Double.random(in: -1e9...1e9, using: &rng)
            case 2: seconds = Double.random(in: -100...100, using: &rng)
            default: seconds = Double(bitPattern: rng.next())
            }
            guard let text = ISODate.string(seconds: seconds) else {
                // Outside the years 1...9999, or a fraction of a second around 2001 with more
                // digits than ISO text is given: exports write the number instead.
                #expect(!seconds.isFinite || abs(seconds) > 6e10 || abs(seconds) < 1, "\(seconds)")
                continue
            }
            #expect(ISODate.seconds(from: text) == seconds, "\(seconds) -> \(text)")
            if round % 4 == 0, abs(seconds) < 3e9 {
                let whole = formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
                #expect(text == whole.dropLast() + ".000Z", "\(seconds)")
            }
        }
        #expect(ISODate.string(seconds: 0) == "2001-01-01T00:00:00.000Z")
        #expect(ISODate.string(seconds: -0.25) == "2000-12-31T23:59:59.750Z")
        #expect(ISODate.seconds(from: "2001-01-01T01:00:00+01:00") == 0)
        #expect(ISODate.seconds(from: "2000-12-31T23:00:00-01:00") == 0)
        #expect(ISODate.seconds(from: "2001-01-02") == 86_400)
        #expect(ISODate.seconds(from: "2024-02-29T12:00:00.5Z") == ISODate.seconds(from: "2024-02-29T12:00:00Z")! + 0.5)
        for invalid in ["", "2001", "2001-13-01", "2023-02-29", "2001-01-01T24:00:00Z", "2001-01-01T00:60:00Z",
                        "2001-01-01T00:00:00", "2001-01-01T00:00:00.Z", "2001-01-01T00:00:00Zjunk", "2001-01-01 00:00:00Z",
                        "+2001-01-01", "2001-01-01T00:00:00+1:00", "２００１-01-01"] {
            #expect(ISODate.seconds(from: invalid) == nil, "\(invalid)")
        }
    }
}
