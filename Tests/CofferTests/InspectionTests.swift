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

@Suite struct IndexKeyTests {
    func key(_ type: PropertyType, _ write: (inout RecordWriter) -> Void) throws -> [UInt8] {
        let buffer = RecordBuffer()
        let ids: [UInt16] = [0, 1]
        return try ids.withUnsafeBufferPointer { idPointer in
            var writer = RecordWriter(buffer: buffer, storedIds: idPointer.baseAddress!)
            write(&writer)
            buffer.adopt(writer)
            guard let field = try RecordFields(bytes: writer.bytes, entity: "T", id: 1).field(1) else { return [IndexKey.nilTag] }
            var key: [UInt8] = []
            #expect(IndexKey.encode(type, kind: field.kind, payload: field.payload, into: &key))
            return key
        }
    }

    @Test func keysSortLikeTheirValues() throws {
        let ints: [Int64] = [.min, -70000, -129, -1, 0, 1, 127, 128, 70000, .max]
        let intKeys = try ints.map { value in try key(.int64) { $0.write(1, value) } }
        #expect(intKeys == intKeys.sorted { $0.lexicographicallyPrecedes($1) })
        let doubles: [Double] = [-.infinity, -1e300, -1, -.leastNonzeroMagnitude, -0.0, 0, .leastNonzeroMagnitude, 1, 1e300, .infinity]
        let doubleKeys = try doubles.map { value in try key(.double) { $0.write(1, value) } }
        #expect(doubleKeys == doubleKeys.sorted { $0.lexicographicallyPrecedes($1) })
        let strings = ["", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é"]
        let stringKeys = try strings.map { value in try key(.string) { $0.write(1, value) } }
        #expect(stringKeys == stringKeys.sorted { $0.lexicographicallyPrecedes($1) })
        let nilKey = try key(.string) { $0.write(1, String?.none) }
        #expect(stringKeys.allSatisfy { nilKey.lexicographicallyPrecedes($0) })
        // Narrow and wide encodings of one value give one key, so widening keeps the index.
        let narrow = try key(.int64) { $0.write(1, Int8(-5)) }
        #expect(try narrow == key(.int) { $0.write(1, -5) })
        var random = SystemRandomNumberGenerator()
        let values = (0..<500).map { _ in Int64.random(in: .min ... .max, using: &random) }
        let keys = try values.map { value in try key(.int64) { $0.write(1, value) } }
        let byKey = zip(values, keys).sorted { $0.1.lexicographicallyPrecedes($1.1) }.map(\.0)
        #expect(byKey == values.sorted())
    }
}
