@_spi(CofferGenerated) @testable import Coffer
import Foundation
import Testing

@Suite struct InspectionTests {
    @Test func infoAndDumpReadOnlyTheCatalog() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        do {
            let store = try Store(directory: directory.path)
            try store.box(for: Contact.self).put([Contact(email: "a@x", city: "Oslo", age: 3, score: .nan), Contact(city: "Rome")])
            try store.box(for: Note.self).put(Note(title: "t\"q", body: "b"))
            try store.close()
        }
        let store = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        let info = try store.info()
        #expect(info.entities.map(\.name) == ["Contact", "Note"])
        #expect(info.entities.map(\.count) == [2, 1])
        let email = try #require(info.entities[0].properties.first { $0.name == "email" })
        #expect(email.isUnique && email.isIndexed && email.swiftType == "String?" && email.type == .string)
        #expect(info.entities[1].properties.map(\.name) == ["title", "body_text", "rank"])
        #expect(info.fileSize > 0 && info.usedBytes > 0)

        var lines: [String] = []
        try store.dump(entity: "Note") { lines.append($0) }
        #expect(lines == [#"{"id":1,"title":"t\"q","body_text":"b","rank":0}"#])
        lines = []
        try store.dump(entity: "Contact", limit: 1) { lines.append($0) }
        #expect(lines.count == 1)
        #expect(lines[0].hasPrefix(#"{"id":1,"email":"a@x","city":"Oslo","age":3,"score":"nan""#))
        #expect(throws: CofferError.unknownEntity(name: "Nope", path: store.path, known: ["Contact", "Note"])) {
            try store.dump(entity: "Nope") { _ in }
        }
    }

    /// A record may hold its fields in any order (another build, an import, another
    /// writer): the dump shows them in catalog order whatever the order, so dumps of the
    /// same objects compare equal. A damaged record still shows what it could read, in
    /// catalog order, then the damage.
    @Test func dumpsShowFieldsInCatalogOrderWhateverTheRecordsOrder() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 41)
            for round in 0..<100 {
                var object = HotPathTests.randomEverything(&generator)
                try box.put(&object)
                let fields = try HotPathTests.storedFields(store, id: object.id)
                var dumped: [String] = []
                try store.dump(entity: "Everything") { dumped.append($0) }
                var shuffled = fields
                shuffled.shuffle(using: &generator)
                let compact = round % 2 == 0
                try Damage.overwriteRecord(store, Everything.self, id: object.id, with: HotPathTests.RawField.record(shuffled, compact: compact))
                var dumpedAgain: [String] = []
                try store.dump(entity: "Everything") { dumpedAgain.append($0) }
                #expect(dumpedAgain == dumped, "round \(round)")

                // Cut inside the last field: the readable fields in catalog order, then the damage.
                let whole = HotPathTests.RawField.record(shuffled, compact: compact)
                try Damage.overwriteRecord(store, Everything.self, id: object.id, with: Array(whole.dropLast(1)))
                var damaged: [String] = []
                try store.dump(entity: "Everything") { damaged.append($0) }
                let line = try #require(damaged.last)
                #expect(line.contains("\"$corrupt\":"), "round \(round)")
                let names = Everything._cofferSchema.properties.map { "\"\($0.name)\":" }
                let shownOrder = names.compactMap { name in line.range(of: name).map { line.distance(from: line.startIndex, to: $0.lowerBound) } }
                #expect(shownOrder == shownOrder.sorted(), "round \(round)")
                try Damage.overwriteRecord(store, Everything.self, id: object.id, with: whole)
            }
        }
    }
}
