@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// A pulled value is stored exactly as a local put of the same value stores it, for every
/// mapped type and the values at the edges of each.
@Suite struct SyncApplyValueTests {
    static func wireFields(_ sample: SyncedSample) -> [(String, String)] {
        sample.wireFields(document: #"{"b": [1, 2.5, null, "x", {"$number": "nan"}], "a": {"nested": true}, "big": 18446744073709551615}"#)
    }

    static var samples: [SyncedSample] {
        let date = Date(timeIntervalSinceReferenceDate: 786_000_000.123456789)
        var edges = SyncedSample()
        edges.flag = true
        edges.int = .min; edges.int8 = .min; edges.int16 = .max; edges.int32 = .min; edges.int64 = .max
        edges.uint8 = .max; edges.uint16 = .max; edges.uint32 = .max; edges.uint64 = .max; edges.uint = .max
        edges.float = Float(0.1); edges.double = 0.1
        edges.string = "héllo ☃ \"quoted\" \\ back\nnew line\ttab 𝄞 and a NUL: \u{0} end"
        edges.date = date
        edges.data = Data([0, 1, 2, 127, 128, 254, 255])
        edges.bytes = [9, 8, 0, 255]
        edges.strings = ["a", "", "ü", "with \u{0} inside"]
        edges.ints = [Int.min, 0, Int.max]
        edges.int8s = [-128, 127]
        edges.uint64s = [.max, 0, 42]
        edges.doubles = [0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, .nan, .infinity, -.infinity, -2.5]
        edges.floats = [Float(1.1), 0.5, .infinity]
        edges.dates = [date, Date(timeIntervalSinceReferenceDate: -1e9)]
        edges.bools = [true, false]
        edges.uuids = [UUID(), UUID()]
        edges.counts = ["x": 1, "y": -2]
        edges.optionalText = "present"
        edges.home = SyncedPlace("Paris", zip: nil)
        var negatives = SyncedSample()
        negatives.double = -0.0
        negatives.float = -0.0
        negatives.date = Date(timeIntervalSinceReferenceDate: .nan)
        negatives.home = SyncedPlace("", zip: "75001")
        return [SyncedSample(), edges, negatives]
    }

    @Test func pulledValuesAreStoredAsALocalPutStoresThem() throws {
        try withStore { local in
            try withStore { pulled in
                try register(SyncedSample.self, in: pulled)
                let localBox = local.box(for: SyncedSample.self)
                let pulledBox = pulled.box(for: SyncedSample.self)
                var builder = PageBuilder()
                var expected: [(Id, UUID)] = []
                for var sample in Self.samples {
                    try localBox.put(&sample)
                    let syncId = UUID()
                    builder.upsert(syncId, clock: 1 << 40, origin: nil, fields: Self.wireFields(sample))
                    expected.append((sample.id, syncId))
                }
                let summary = try pulled.applyPulledPage(builder.page(), entity: "SyncedSample", stream: PageBuilder.stream)
                #expect(summary.upserted == Self.samples.count)
                for (localId, syncId) in expected {
                    let pulledId = try #require(try pulledBox.id(forSyncId: syncId))
                    let original = try storedFields(SyncedSample.self, id: localId, in: local)
                    let arrived = try storedFields(SyncedSample.self, id: pulledId, in: pulled)
                    // Field ids are assigned alike in both stores (one build registered both).
                    let ids = try SyncProbe.fieldIds(SyncedSample.self, in: local)
                    let names = Dictionary(uniqueKeysWithValues: ids.map { ($1, $0) })
                    #expect(arrived.keys.sorted() == original.keys.sorted(),
                            "\(Set(arrived.keys).symmetricDifference(original.keys).map { names[$0] ?? "?" }) of \(localId)")
                    let document = try SyncProbe.fieldIds(SyncedSample.self, in: local)["document"]
                    for (field, bytes) in original where field != document {
                        #expect(arrived[field] == bytes, "field \(field) of \(localId)")
                    }
                    let a = try #require(try localBox.get(localId))
                    let b = try #require(try pulledBox.get(pulledId))
                    #expect(a.string == b.string && a.strings == b.strings && a.uint64 == b.uint64 && a.bytes == b.bytes)
                    #expect(a.double.bitPattern == b.double.bitPattern || (a.double.isNaN && b.double.isNaN))
                    #expect(a.date.timeIntervalSinceReferenceDate.bitPattern == b.date.timeIntervalSinceReferenceDate.bitPattern
                            || (a.date.timeIntervalSinceReferenceDate.isNaN && b.date.timeIntervalSinceReferenceDate.isNaN))
                    #expect(a.home == b.home && a.counts == b.counts && a.uuids == b.uuids)
                }
                // The document as the wire gave it, tags read back.
                let edges = try #require(try pulledBox.id(forSyncId: expected[1].1).flatMap { try pulledBox.get($0) })
                #expect(edges.document["a"]?["nested"] == .bool(true))
                #expect(edges.document["b"]?[4]?.isNaNNumber == true)
                #expect(try pulled.verify().problems.isEmpty)
            }
        }
    }

    @Test func valuesOutsideTheirTypeAreRefusedNamingTheField() throws {
        try withStore { store in
            try register(SyncedSample.self, in: store)
            let cases: [(String, String)] = [
                ("int8", "128"), ("uint8", "-1"), ("uint32", "4294967296"), ("uint64", "\"18446744073709551616\""),
                ("uint64", "\"-1\""), ("int", "1.5"), ("flag", "1"), ("data", "\"not base64!\""), ("bytes", "\"%%\""),
                ("uuid", "\"nope\""), ("ints", "[1, \"2\"]"), ("string", "{\"nul\": \"//79\"}"), ("double", "\"NAN\""),
                ("counts", "[1]"), ("home.city", "5"),
            ]
            for (field, value) in cases {
                var builder = PageBuilder()
                builder.upsert(UUID(), clock: 1, origin: nil, fields: [(field, value)])
                #expect(performing: { _ = try store.applyPulledPage(builder.page(), entity: "SyncedSample", stream: PageBuilder.stream) },
                        throws: { error in
                            guard case CofferError.invalidSyncPage("SyncedSample", field, let reason) = error else { return false }
                            return !reason.isEmpty
                        })
            }
            #expect(try store.box(for: SyncedSample.self).count() == 0)
        }
    }
}

extension JSONValue {
    var isNaNNumber: Bool {
        if case .number(let value) = self { return value.isNaN }
        return false
    }
}
