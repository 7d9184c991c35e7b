@_spi(CofferGenerated) @testable import Coffer
import Foundation
import Testing

/// A leaf of every kind an element of an embedded array holds (such arrays are documents).
struct SampleReading: Embedded, Equatable {
    var value: Double
    var precise: Float = 0
    var counter: UInt64 = 0
    var offset: Int64 = 0
    var label: String = ""
    var at: Date = Date(timeIntervalSinceReferenceDate: 0)
    var extra: JSONValue = nil
    var point: GeoPoint? = nil
}

/// Values of every property type, documents and embedded values included (NaN is not
/// `==` to itself: compared with `ValueRulesTests.same`).
struct Sample: Entity {
    var id: Id = 0
    @Index var key: String = ""
    var double: Double = 0
    var float: Float = 0
    var doubles: [Double] = []
    var floats: [Float] = []
    var int64: Int64 = 0
    var uint64: UInt64 = 0
    var uint64s: [UInt64] = []
    var text: String = ""
    var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    var dates: [Date] = []
    var metadata: JSONValue = nil
    var extra: JSONValue? = nil
    var weights: [String: Double] = [:]
    var counts: [String: Int] = [:]
    var names: [String: String] = [:]
    var flags: [String: Bool] = [:]
    var readings: [SampleReading] = []
    var home: Address? = nil
    var origin: GeoPoint = GeoPoint(latitude: 0)
}

/// A unique `Float` (NaN is never equal, so never a duplicate).
struct Gauge: Entity {
    var id: Id = 0
    @Unique var level: Float
    var note: String = ""
}

/// The value rules of issue 29: documents nest at most as deep as the reader reads, export
/// and import keep every value (non-finite numbers and unsigned 64-bit values inside
/// documents too), NaN is never a duplicate, import integers are exact, and embedded values
/// are nested objects in JSON.
@Suite struct ValueRulesTests {
    // MARK: Comparing values (NaN equal to NaN, -0.0 not equal to 0.0)

    static func same(_ a: Double, _ b: Double) -> Bool { a.isNaN ? b.isNaN : a.bitPattern == b.bitPattern }
    static func same(_ a: Float, _ b: Float) -> Bool { a.isNaN ? b.isNaN : a.bitPattern == b.bitPattern }
    static func same(_ a: Date, _ b: Date) -> Bool { same(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate) }

    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return same(x, y)
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
        default: return false
        }
    }

    static func same(_ a: SampleReading, _ b: SampleReading) -> Bool {
        same(a.value, b.value) && same(a.precise, b.precise) && a.counter == b.counter && a.offset == b.offset
            && a.label == b.label && same(a.at, b.at) && same(a.extra, b.extra)
            && a.point.map { p in b.point.map { same(p.latitude, $0.latitude) && same(p.longitude, $0.longitude) } ?? false } ?? (b.point == nil)
    }

    /// Field by field; the first difference as a message, or nil.
    static func difference(_ a: Sample, _ b: Sample) -> String? {
        func zipSame<T>(_ x: [T], _ y: [T], _ equal: (T, T) -> Bool) -> Bool { x.count == y.count && zip(x, y).allSatisfy(equal) }
        func dictionarySame<T>(_ x: [String: T], _ y: [String: T], _ equal: (T, T) -> Bool) -> Bool {
            x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        }
        let checks: [(String, Bool)] = [
            ("id", a.id == b.id), ("key", a.key == b.key),
            ("double", same(a.double, b.double)), ("float", same(a.float, b.float)),
            ("doubles", zipSame(a.doubles, b.doubles, same)), ("floats", zipSame(a.floats, b.floats, same)),
            ("int64", a.int64 == b.int64), ("uint64", a.uint64 == b.uint64), ("uint64s", a.uint64s == b.uint64s),
            ("text", a.text == b.text), ("date", same(a.date, b.date)), ("dates", zipSame(a.dates, b.dates, same)),
            ("metadata", same(a.metadata, b.metadata)),
            ("extra", a.extra.map { x in b.extra.map { same(x, $0) } ?? false } ?? (b.extra == nil)),
            ("weights", dictionarySame(a.weights, b.weights, same)), ("counts", a.counts == b.counts),
            ("names", a.names == b.names), ("flags", a.flags == b.flags),
            ("readings", zipSame(a.readings, b.readings, same)),
            ("home", a.home == b.home), ("origin", a.origin == b.origin),
        ]
        // Names only: printing a Date of NaN seconds traps in Foundation.
        return checks.first { !$0.1 }.map { "\($0.0) of object \(a.id) differs" }
    }

    // MARK: Random values

    struct Generator {
        var rng: SplitMix64

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
        mutating func chance() -> Bool { Bool.random(using: &rng) }

        mutating func double() -> Double {
            switch int(0...4) {
            case 0: return [.nan, -.nan, .infinity, -.infinity, -0.0, 0, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                            9_007_199_254_740_992, 1e15, -1e15 + 0.5, 0.1][int(0...11)]
            case 1: return Double(int(-1000...1000))
            default: return Double(bitPattern: rng.next())   // NaNs of every payload too
            }
        }

        mutating func float() -> Float {
            chance() ? Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())) : [Float.nan, .infinity, -.infinity, -0.0, 0.1][int(0...4)]
        }

        mutating func uint64() -> UInt64 {
            [rng.next(), .max, UInt64(Int64.max), UInt64(Int64.max) + 1, 0, 1 << 53 + 1][int(0...5)]
        }

        mutating func text() -> String {
            let pieces = ["a", "Z", "é", "世界", "🌍", "\"", "\\", "\n", "\t", "\u{01}", " ", "/", "\u{7F}", "nan", "inf", "-inf",
                          "$number", "$object", "e\u{301}", "\u{FEFF}", "\u{10FFFF}"]
            return (0..<int(0...4)).map { _ in pieces[int(0...pieces.count - 1)] }.joined()
        }

        mutating func date() -> Date {
            Date(timeIntervalSinceReferenceDate: chance() ? Double(int(-2_000_000_000...2_000_000_000)) + 0.25 : double())
        }

        /// Documents whose objects sometimes look like the export's tags.
        mutating func json(depth: Int) -> JSONValue {
            switch int(0...(depth > 3 ? 4 : 7)) {
            case 0: return .null
            case 1: return .bool(chance())
            case 2, 3: return .number(double())
            case 4: return .string(text())
            case 5: return .array((0..<int(0...3)).map { _ in json(depth: depth + 1) })
            case 6:
                // One member named like a tag, holding what a tag would hold or not.
                let key = chance() ? "$number" : "$object"
                return .object([key: chance() ? .string(["nan", "inf", "-inf", "x"][int(0...3)]) : json(depth: depth + 1)])
            default:
                var members: [String: JSONValue] = [:]
                for _ in 0..<int(0...3) { members[text()] = json(depth: depth + 1) }
                return .object(members)
            }
        }

        mutating func reading() -> SampleReading {
            SampleReading(value: double(), precise: float(), counter: uint64(), offset: Int64(bitPattern: rng.next()), label: text(),
                    at: date(), extra: json(depth: 2), point: chance() ? GeoPoint(latitude: double(), longitude: -0.0) : nil)
        }

        mutating func sample() -> Sample {
            var value = Sample()
            value.key = text()
            value.double = double()
            value.float = float()
            value.doubles = (0..<int(0...3)).map { _ in double() }
            value.floats = (0..<int(0...3)).map { _ in float() }
            value.int64 = [Int64.min, .max, -1, Int64(bitPattern: rng.next())][int(0...3)]
            value.uint64 = uint64()
            value.uint64s = (0..<int(0...3)).map { _ in uint64() }
            value.text = text()
            value.date = date()
            value.dates = (0..<int(0...2)).map { _ in date() }
            value.metadata = json(depth: 0)
            value.extra = [json(depth: 0), .some(.null), .none][int(0...2)]
            for _ in 0..<int(0...3) {
                value.weights[text()] = double()
                value.counts[text()] = [Int.min, .max, 0, int(-9...9)][int(0...3)]
                value.names[text()] = text()
                value.flags[text()] = chance()
            }
            value.readings = (0..<int(0...3)).map { _ in reading() }
            if chance() {
                // Address's leaves: finite latitudes (Address is Equatable: NaN would never equal itself).
                value.home = Address(city: text(), zip: chance() ? text() : nil,
                                     location: chance() ? GeoPoint(latitude: Double(int(-90...90)) / 4, longitude: -0.0) : nil,
                                     level: chance() ? .low : .high)
            }
            value.origin = GeoPoint(latitude: 1e300, longitude: -1e-300)
            return value
        }
    }

    func export(_ store: Store, _ entity: String) throws -> Data {
        var text = ""
        try store.dump(entity: entity) { text += $0 + "\n" }
        return Data(text.utf8)
    }

    /// Export then import into a fresh store gives every value back, field by field: NaN
    /// (any payload), infinities and -0.0 in every numeric position, documents included;
    /// UInt64 above Int64.max; strings that read like the export's own tags.
    @Test func randomObjectsOfEveryTypeSurviveExportAndImport() throws {
        var generator = Generator(rng: SplitMix64(state: 0xE1A7))
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in
                var originals = (0..<200).map { _ in generator.sample() }
                try source.box(for: Sample.self).put(&originals)
                let exported = try export(source, "Sample")
                try target.copySchema(of: "Sample", from: source)
                let summary = try target.importObjects(entity: "Sample", jsonLines: exported)
                #expect(summary == ImportSummary(inserted: 200, updated: 0))
                let copies = try target.box(for: Sample.self).all()
                #expect(copies.count == originals.count)
                for (original, copy) in zip(originals, copies) {
                    if let difference = Self.difference(original, copy) { Issue.record("\(difference)") }
                }
                #expect(try export(target, "Sample") == exported, "a second export is the same text")
                #expect(try target.verify().isIntact)
            }
        }
        // Every scalar, optional and array type (ImportTests' Everything), with NaN where a
        // number can hold it (the canonical NaN: a payload is the one thing JSON drops).
        var rng = SplitMix64(state: 0xE1A8)
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in
                var originals = (0..<100).map { _ in ImportTests.randomEverything(using: &rng) }
                for index in originals.indices where index % 3 == 0 {
                    originals[index].double = .nan
                    originals[index].float = .nan
                    originals[index].doubles.append(.nan)
                    originals[index].optDouble = .nan
                    originals[index].optFloat = -.infinity
                }
                try source.box(for: Everything.self).put(&originals)
                try target.copySchema(of: "Everything", from: source)
                try target.importObjects(entity: "Everything", jsonLines: try export(source, "Everything"))
                let copies = try target.box(for: Everything.self).all()
                #expect(copies.count == originals.count)
                for (original, copy) in zip(originals, copies) { RoundTripTests().assertSame(original, copy) }
            }
        }
    }

    /// The tagged forms: a non-finite number in a `JSONValue` is `{"$number":"nan"}` (the
    /// string "nan" stays a string), a typed `[String: Double]` writes "nan" as a Double
    /// property does, and an object that looks like a tag is wrapped in `$object`.
    @Test func nonFiniteNumbersInDocumentsHaveOneUnambiguousForm() throws {
        try withStore { (store: Store) throws in
            var sample = Sample()
            sample.metadata = ["n": .number(.nan), "s": "nan", "i": .number(-.infinity), "t": ["$number": "nan"]]
            sample.weights = ["w": .nan, "x": .infinity]
            try store.box(for: Sample.self).put(&sample)
            let line = String(decoding: try export(store, "Sample"), as: UTF8.self)
            #expect(line.contains(#""metadata":{"i":{"$number":"-inf"},"n":{"$number":"nan"},"s":"nan","t":{"$object":{"$number":"nan"}}}"#), "\(line)")
            #expect(line.contains(#""weights":{"w":"nan","x":"inf"}"#), "\(line)")
            // A look-alike that is not a tag is refused, not read two ways.
            for bad in [#"{"metadata": {"$number": "seven"}}"#, #"{"metadata": {"$object": 1}}"#] {
                #expect(throws: CofferError.self, "\(bad)") { try store.importObjects(entity: "Sample", jsonLines: Data(bad.utf8)) }
            }
            #expect(try store.box(for: Sample.self).count() == 1)
        }
    }

    // MARK: Document depth

    /// `levels` nested arrays around a number: `levels` levels, the root being 1.
    static func nested(_ levels: Int) -> JSONValue {
        var value: JSONValue = 1
        for _ in 1..<levels { value = [value] }
        return value
    }

    /// A document as deep as the reader reads is stored and read back; one level more is
    /// refused by every write path (put, put in a batch, update, upsert, an element of an
    /// embedded array, an import line), naming the entity, property and depth, with
    /// nothing stored and the caller's value as it was.
    @Test func documentsDeeperThanTheReaderReadsAreRefusedByEveryWrite() throws {
        let limit = DocumentCodec.maximumDepth
        try withStore { (store: Store) throws in
            let box = store.box(for: Sample.self)
            var deepest = Sample(key: "deepest", metadata: Self.nested(limit))
            try box.put(&deepest)
            #expect(try box.get(deepest.id).map { Self.same($0.metadata, Self.nested(limit)) } == true)
            // An embedded array's element is an object in an array: its JSONValue leaf has two levels less.
            var element = Sample(key: "element", readings: [SampleReading(value: 1, extra: Self.nested(limit - 2))])
            try box.put(&element)
            #expect(try box.get(element.id)?.readings.first.map { Self.same($0.extra, Self.nested(limit - 2)) } == true)

            let tooDeep = CofferError.documentTooDeep(entity: "Sample", property: "metadata", depth: limit + 1, limit: limit)
            var refused = Sample(key: "refused", metadata: Self.nested(limit + 1))
            #expect(throws: tooDeep) { try box.put(&refused) }
            #expect(refused.id == 0)
            var batch = [Sample(key: "fine"), refused]
            #expect(throws: tooDeep) { try box.put(&batch) }
            #expect(batch.map(\.id) == [0, 0])
            var update = deepest
            update.metadata = Self.nested(limit + 1)
            #expect(throws: tooDeep) { try box.put(&update) }
            #expect(throws: tooDeep) { try box.upsert(&refused, by: Sample.key) }
            #expect(refused.id == 0)
            var deepElement = Sample(key: "deep element", readings: [SampleReading(value: 1, extra: Self.nested(limit - 1))])
            #expect(throws: CofferError.documentTooDeep(entity: "Sample", property: "readings", depth: limit + 1, limit: limit)) {
                try box.put(&deepElement)
            }
            // Inside a write that goes on after the refusal, the refused object is not stored.
            try store.write {
                #expect(throws: tooDeep) { try box.put(&refused) }
                try box.put(Sample(key: "after"))
            }
            // An import line (the JSON parser reads deeper lines than a record holds).
            let line = #"{"key": "imported", "metadata": "# + String(repeating: "[", count: limit) + "1" + String(repeating: "]", count: limit) + "}"
            do {
                try store.importObjects(entity: "Sample", jsonLines: Data(line.utf8))
                Issue.record("the import was accepted")
            } catch CofferError.importFailed("Sample", let number, .documentTooDeep("Sample", "metadata", let depth, _)) {
                #expect(number == 1 && depth == limit + 1)
            }
            #expect(try box.all().map(\.key).sorted() == ["after", "deepest", "element"])
            #expect(try box.get(deepest.id).map { Self.same($0.metadata, Self.nested(limit)) } == true)
            #expect(try store.verify().isIntact)
            // The deepest storable document survives its own export and import.
            try withStore { (target: Store) throws in
                try target.copySchema(of: "Sample", from: store)
                try target.importObjects(entity: "Sample", jsonLines: try export(store, "Sample"))
                #expect(try target.box(for: Sample.self).get(deepest.id).map { Self.same($0.metadata, Self.nested(limit)) } == true)
            }
        }
    }

    // MARK: Unique NaN

    /// NaN equals no value, itself included: two NaNs are no duplicate under `@Unique`
    /// (Double and Float), and an upsert by NaN inserts.
    @Test func uniqueNaNsNeverCollide() throws {
        try withStore { (store: Store) throws in
            let measured = store.box(for: Measured.self)
            try measured.put(Measured(weight: .nan, label: "a"))
            try measured.put(Measured(weight: -.nan, label: "b"))
            var third = Measured(weight: .nan, label: "c")
            let id = try measured.upsert(&third, by: Measured.weight)
            #expect(try measured.count() == 3 && id == third.id)
            try measured.put(Measured(weight: 1, label: "one"))
            #expect(throws: CofferError.self) { try measured.put(Measured(weight: 1, label: "again")) }
            let gauges = store.box(for: Gauge.self)
            try gauges.put([Gauge(level: .nan), Gauge(level: .nan), Gauge(level: 2)])
            #expect(throws: CofferError.self) { try gauges.put(Gauge(level: 2)) }
            #expect(try gauges.count() == 3)
            #expect(try store.verify().isIntact)
        }
    }

    // MARK: Exact integers

    /// An import's integers are read from their text exactly: "9007199254740993.0" is
    /// 9007199254740993 (a Double would round it), a fraction or a value out of range is
    /// refused naming the line and property.
    @Test func importIntegersAreExactOrRefused() throws {
        #expect(JSONNumber(text: "9007199254740993.0").int64 == 9_007_199_254_740_993)
        #expect(JSONNumber(text: "-9223372036854775808").int64 == .min)
        #expect(JSONNumber(text: "-9.223372036854775808e18").int64 == .min)
        #expect(JSONNumber(text: "18446744073709551615.000").uint64 == .max)
        #expect(JSONNumber(text: "1.8446744073709551615e19").uint64 == .max)
        #expect(JSONNumber(text: "15e-1").int64 == nil)
        #expect(JSONNumber(text: "1500e-2").int64 == 15)
        #expect(JSONNumber(text: "0.000e5").uint64 == 0)
        #expect(JSONNumber(text: "-0").uint64 == 0)
        #expect(JSONNumber(text: "1e-400").int64 == nil)
        #expect(JSONNumber(text: "1e400").int64 == nil)
        #expect(JSONNumber(text: "9223372036854775808").int64 == nil)
        #expect(JSONNumber(text: "-1").uint64 == nil)
        try withStore { (store: Store) throws in
            try store.box(for: Sample.self).put(Sample(key: "seed"))   // the catalog gets the entity
            try store.importObjects(entity: "Sample", jsonLines: Data(#"{"key": "a", "int64": 9007199254740993.0, "uint64": 1.8446744073709551615e19}"#.utf8))
            let stored = try store.box(for: Sample.self).all().filter { $0.key == "a" }
            #expect(stored.map(\.int64) == [9_007_199_254_740_993] && stored.map(\.uint64) == [.max])
            for (line, property) in [(#"{"key": "b", "int64": 9007199254740993.5}"#, "Sample.int64"),
                                     (#"{"key": "b", "counts": {"c": 1e-400}}"#, "Sample.counts"),
                                     (#"{"key": "b", "uint64s": [18446744073709551616]}"#, "Sample.uint64s")] {
                do {
                    try store.importObjects(entity: "Sample", jsonLines: Data(("{\"key\": \"ok\"}\n" + line).utf8))
                    Issue.record("accepted: \(line)")
                } catch CofferError.invalidImport(let entity, let number, let message) {
                    #expect(entity == "Sample" && number == 2 && message.contains(property), "\(message)")
                }
            }
            #expect(try store.box(for: Sample.self).count() == 2)
        }
    }

    /// A UInt64 above Int64.max inside an embedded array is the number it is: conditions
    /// compare it as such (it was stored by bit pattern and compared as negative), and it
    /// reads back exactly.
    @Test func largeUnsignedValuesInEmbeddedArraysCompareAsThemselves() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Sample.self)
            let big = UInt64(Int64.max) + 10
            var samples = [Sample(key: "big", readings: [SampleReading(value: 0, counter: big)]),
                           Sample(key: "small", readings: [SampleReading(value: 0, counter: 5)])]
            try box.put(&samples)
            #expect(try box.get(samples[0].id)?.readings.first?.counter == big)
            #expect(try box.query { Sample.readings["counter"] > 100 }.build().find().map(\.key) == ["big"])
            #expect(try box.query { Sample.readings["counter"] < 100 }.build().find().map(\.key) == ["small"])
            #expect(try box.query { Sample.readings["counter"] == big }.build().find().map(\.key) == ["big"])
            #expect(try box.query(selector: #"{"readings.counter": {"$gt": 9223372036854775807}}"#).build().find().map(\.key) == ["big"])
            let line = String(decoding: try export(store, "Sample"), as: UTF8.self)
            #expect(line.contains("\"counter\":\(big)"), "\(line)")
        }
    }

    // MARK: Embedded values as nested JSON

    /// `dump`, `query(entity:)` and exports write an embedded value as a nested object
    /// (`null` when absent); imports read that form and the flattened one.
    @Test func embeddedValuesAreNestedObjects() throws {
        try withStore { (store: Store) throws in
            let residents = store.box(for: Resident.self)
            let oslo = Address(city: "Oslo", zip: "0150", location: GeoPoint(latitude: 59.9, longitude: 10.7), level: .high)
            var ada = Resident(name: "Ada", home: oslo, work: nil)
            try residents.put(&ada)
            var lines: [String] = []
            try store.dump(entity: "Resident") { lines.append($0) }
            let expected = #"{"id":1,"name":"Ada","home":{"city":"Oslo","postcode":"0150","location":{"latitude":59.9,"longitude":10.7},"level":99},"work":null,"origin":{"latitude":0,"longitude":0}}"#
            #expect(lines == [expected])
            var queried: [String] = []
            try store.query(entity: "Resident", selector: #"{"home.city": "Oslo"}"#, fields: ["name", "home.location", "work.city"]) { queried.append($0) }
            #expect(queried == [#"{"name":"Ada","home":{"location":{"latitude":59.9,"longitude":10.7}},"work":null}"#])
            // Both forms import; a leaf given in both is given twice.
            let nested = #"{"name": "Bo", "home": {"city": "Rome", "location": null}, "work": {"city": "Lima", "level": 1}}"#
            let flat = #"{"name": "Cy", "home": true, "home.city": "Rome", "work": null}"#
            try store.importObjects(entity: "Resident", jsonLines: Data((nested + "\n" + flat).utf8))
            let all = try residents.all()
            #expect(all.map(\.name) == ["Ada", "Bo", "Cy"])
            #expect(all[1].home == Address(city: "Rome") && all[1].work == Address(city: "Lima", level: .low))
            #expect(all[2].home == Address(city: "Rome") && all[2].work == nil)
            #expect(throws: CofferError.self) {
                try store.importObjects(entity: "Resident", jsonLines: Data(#"{"name": "D", "home": {"city": "A"}, "home.city": "B"}"#.utf8))
            }
            #expect(throws: CofferError.self) {
                try store.importObjects(entity: "Resident", jsonLines: Data(#"{"name": "D", "home": {"town": "A"}}"#.utf8))
            }
            #expect(try residents.count() == 3)
        }
    }

    /// The same through the `coffer` tool: `query` prints nested objects, and `export` then
    /// `import` into a new store gives the same objects.
    @Test func theToolPrintsAndReadsNestedEmbeddedValues() throws {
        try withStore { (store: Store) throws in
            let residents = store.box(for: Resident.self)
            var all = [Resident(name: "Ada", home: Address(city: "Oslo", location: GeoPoint(latitude: 1.5)), work: Address(city: "Rome")),
                       Resident(name: "Bo", home: Address(city: "Lima", zip: "L1"), work: nil)]
            try residents.put(&all)
            let run = try ToolTests.coffer(["query", store.path, "Resident", #"{"home.city": "Oslo"}"#, "--fields", "name,home,work.city"])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.lines == [#"{"name":"Ada","home":{"city":"Oslo","location":{"latitude":1.5,"longitude":0},"level":1},"work":{"city":"Rome"}}"#])
            let exported = try ToolTests.coffer(["export", store.path, "Resident", "--quiet"])
            #expect(exported.lines.count == 2 && exported.lines[1].contains(#""work":null"#), "\(exported.output)")
            let copy = TemporaryDirectory()
            defer { copy.cleanUp() }
            let imported = try ToolTests.coffer(["import", copy.path, "Resident", "--schema-from", store.path, "--quiet"], input: Data(exported.output.utf8))
            #expect(imported.status == 0, "\(imported.errors)")
            let restored = try Store(directory: copy.path)
            defer { try? restored.close() }
            #expect(try restored.box(for: Resident.self).all() == all)
        }
    }
}
