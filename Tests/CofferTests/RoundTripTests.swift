import Coffer
import Foundation
import Testing

@Suite struct RoundTripTests {
    func roundTrip(_ value: Everything) throws -> Everything? {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var copy = value
            try box.put(&copy)
            return try box.get(copy.id)
        }
    }

    func assertSame(_ a: Everything, _ b: Everything) {
        #expect(a.id == b.id)
        #expect(a.bool == b.bool)
        #expect(a.int == b.int && a.int8 == b.int8 && a.int16 == b.int16 && a.int32 == b.int32 && a.int64 == b.int64)
        #expect(a.uint == b.uint && a.uint8 == b.uint8 && a.uint16 == b.uint16 && a.uint32 == b.uint32 && a.uint64 == b.uint64)
        #expect(a.float.bitPattern == b.float.bitPattern)
        #expect(a.double.bitPattern == b.double.bitPattern)
        #expect(a.string == b.string)
        #expect(a.date == b.date)
        #expect(a.data == b.data)
        #expect(a.uuid == b.uuid)
        #expect(a.strings == b.strings && a.ints == b.ints)
        #expect(a.doubles.map(\.bitPattern) == b.doubles.map(\.bitPattern))
        #expect(a.mood == b.mood && a.level == b.level)
        #expect(a.optBool == b.optBool && a.optInt == b.optInt && a.optInt8 == b.optInt8)
        #expect(a.optInt16 == b.optInt16 && a.optInt32 == b.optInt32 && a.optInt64 == b.optInt64)
        #expect(a.optUInt8 == b.optUInt8 && a.optUInt16 == b.optUInt16 && a.optUInt32 == b.optUInt32 && a.optUInt64 == b.optUInt64)
        #expect(a.optFloat?.bitPattern == b.optFloat?.bitPattern && a.optDouble?.bitPattern == b.optDouble?.bitPattern)
        #expect(a.optString == b.optString && a.optDate == b.optDate && a.optData == b.optData && a.optUUID == b.optUUID)
        #expect(a.optStrings == b.optStrings && a.optInts == b.optInts && a.optDoubles == b.optDoubles)
        #expect(a.optMood == b.optMood && a.optLevel == b.optLevel)
    }

    @Test func defaultsAndNilOptionalsRoundTrip() throws {
        let value = Everything()
        let loaded = try #require(try roundTrip(value))
        var expected = value
        expected.id = loaded.id
        assertSame(loaded, expected)
        #expect(loaded.optInt == nil && loaded.optStrings == nil && loaded.optMood == nil)
    }

    @Test func maximumValuesRoundTrip() throws {
        var value = Everything()
        value.bool = true
        value.int = .max; value.int8 = .max; value.int16 = .max; value.int32 = .max; value.int64 = .max
        value.uint = .max; value.uint8 = .max; value.uint16 = .max; value.uint32 = .max; value.uint64 = .max
        value.float = .greatestFiniteMagnitude; value.double = .infinity
        value.string = "Grüße, 世界 🌍"
        value.date = .distantFuture
        value.data = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        value.strings = ["", "a", "ünïcödé", String(repeating: "x", count: 5000)]
        value.ints = [.min, -1, 0, 1, .max]
        value.doubles = [-.infinity, -0.0, .leastNonzeroMagnitude, .pi]
        value.mood = .grumpy; value.level = .high
        value.optBool = false; value.optInt = .max; value.optInt8 = .max; value.optInt16 = .max
        value.optInt32 = .max; value.optInt64 = .max; value.optUInt8 = .max; value.optUInt16 = .max
        value.optUInt32 = .max; value.optUInt64 = .max
        value.optFloat = .infinity; value.optDouble = -.infinity
        value.optString = ""; value.optDate = .distantPast; value.optData = Data()
        value.optUUID = UUID(); value.optStrings = []; value.optInts = []; value.optDoubles = []
        value.optMood = .happy; value.optLevel = .low
        let loaded = try #require(try roundTrip(value))
        var expected = value
        expected.id = loaded.id
        assertSame(loaded, expected)
        #expect(loaded.data.count == 1 << 20)
        #expect(loaded.optString == "" && loaded.optStrings == [] && loaded.optData == Data())
    }

    @Test func minimumValuesRoundTrip() throws {
        var value = Everything()
        value.int = .min; value.int8 = .min; value.int16 = .min; value.int32 = .min; value.int64 = .min
        value.float = -.greatestFiniteMagnitude; value.double = -.infinity
        value.optInt = .min; value.optInt64 = .min; value.optInt8 = .min
        value.optFloat = -0.0; value.optDouble = .leastNonzeroMagnitude
        value.date = Date(timeIntervalSinceReferenceDate: -1e10)
        let loaded = try #require(try roundTrip(value))
        var expected = value
        expected.id = loaded.id
        assertSame(loaded, expected)
    }

    @Test func nanKeepsItsBitPattern() throws {
        var value = Everything()
        value.float = .nan
        value.double = .signalingNaN
        value.optDouble = .nan
        value.doubles = [.nan]
        let loaded = try #require(try roundTrip(value))
        #expect(loaded.float.isNaN && loaded.double.isNaN && loaded.optDouble?.isNaN == true)
        #expect(loaded.double.bitPattern == Double.signalingNaN.bitPattern)
        #expect(loaded.doubles.count == 1 && loaded.doubles[0].isNaN)
    }

    @Test func integersAtEveryWidthBoundaryRoundTrip() throws {
        // The record writes the narrowest kind that holds a value: check every edge.
        let edges: [Int64] = [0, 127, 128, -128, -129, 32767, 32768, -32768, -32769,
                              Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min), Int64(Int32.min) - 1, .max, .min]
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            for edge in edges {
                var value = Everything()
                value.int64 = edge
                value.optInt = Int(edge)
                value.uint64 = UInt64(bitPattern: edge)
                let id = try box.put(value)
                let loaded = try #require(try box.get(id))
                #expect(loaded.int64 == edge && loaded.optInt == Int(edge) && loaded.uint64 == UInt64(bitPattern: edge))
            }
        }
    }

    @Test func transientPropertiesAreNotStored() throws {
        var value = Everything()
        value.scratch = 7
        let loaded = try #require(try roundTrip(value))
        #expect(loaded.scratch == 42)
    }

    @Test func generatedMetadataNamesEveryStoredProperty() {
        #expect(Everything.id.name == "id")
        #expect(Everything.optLevel.name == "optLevel")
        #expect(Everything._cofferSchema.properties.count == 44)
        #expect(!Everything._cofferSchema.properties.contains { $0.name == "scratch" })
        #expect(Everything.optLevel.schema.type == .int32 && Everything.optLevel.schema.isOptional)
        #expect(Everything.mood.schema.flags.contains(.enumeration))
        #expect(Note.body.schema.storedName == "body_text")
        #expect("\(Note.title)" == "Note.title")
    }
}
