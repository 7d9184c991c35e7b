@_spi(CofferGenerated) @testable import Coffer
import Foundation
import Testing

/// Arrays of every scalar type, dates, UUIDs and enums: round trips with extremes, element
/// and count conditions against a plain filter, selectors, export/import, and damage.
@Suite struct ArrayTypeTests {
    static func random(using rng: inout SplitMix64) -> Arrays {
        func some<T>(_ make: () -> T) -> [T] { (0..<Int.random(in: 0...3, using: &rng)).map { _ in make() } }
        var value = Arrays()
        value.bools = some { Bool.random(using: &rng) }
        value.int8s = some { Int8.random(in: -3...3, using: &rng) }
        value.int16s = some { Int16.random(in: .min ... .max, using: &rng) }
        value.int32s = some { Int32.random(in: -3...3, using: &rng) }
        value.int64s = some { Int64.random(in: .min ... .max, using: &rng) }
        value.uints = some { UInt.random(in: 0...3, using: &rng) }
        value.uint8s = some { UInt8.random(in: 0...3, using: &rng) }
        value.uint16s = some { UInt16.random(in: .min ... .max, using: &rng) }
        value.uint32s = some { UInt32.random(in: 0...3, using: &rng) }
        value.uint64s = some { UInt64.random(in: .max - 3 ... .max, using: &rng) }
        value.floats = some { Float(Int.random(in: -3...3, using: &rng)) / 2 }
        value.dates = some { Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...3, using: &rng)) * 86_400) }
        value.uuids = some { UUID(uuidString: "00000000-0000-0000-0000-00000000000\(Int.random(in: 0...3, using: &rng))")! }
        value.moods = some { Bool.random(using: &rng) ? .happy : .grumpy }
        value.levels = Bool.random(using: &rng) ? some { Bool.random(using: &rng) ? .low : .high } : nil
        return value
    }

    @Test func extremesRoundTrip() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Arrays.self)
            var value = Arrays()
            value.bools = [true, false, true]
            value.int8s = [.min, -1, 0, .max]
            value.int16s = [.min, .max]
            value.int32s = [.min, .max]
            value.int64s = [.min, .max]
            value.uints = [0, .max]
            value.uint8s = [0, .max]
            value.uint16s = [.max]
            value.uint32s = [.max]
            value.uint64s = [.max, 0]
            value.floats = [.greatestFiniteMagnitude, -.infinity, .leastNonzeroMagnitude, -0.0]
            value.dates = [.distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0.123456789)]
            value.uuids = [UUID(), UUID()]
            value.moods = [.grumpy, .happy, .grumpy]
            value.levels = [.high]
            let id = try box.put(value)
            value.id = id
            #expect(try box.get(id) == value)
            var empty = Arrays()
            empty.id = try box.put(empty)
            #expect(try box.get(empty.id) == empty)
            var nan = Arrays()
            nan.floats = [.nan]
            let nanId = try box.put(nan)
            #expect(try box.get(nanId)?.floats.first?.isNaN == true)
        }
    }

    @Test func elementAndCountConditionsAgreeWithAPlainFilter() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Arrays.self)
            var rng = SplitMix64(state: 0xA77)
            var all = (0..<200).map { _ in Self.random(using: &rng) }
            try box.put(&all)
            func check(_ condition: QueryCondition<Arrays>, _ expected: (Arrays) -> Bool, _ label: String) throws {
                #expect(try box.query { condition }.build().findIds() == all.filter(expected).map(\.id), "\(label)")
            }
            try check(Arrays.bools.containsElement(true), { $0.bools.contains(true) }, "bools")
            try check(Arrays.int8s.containsElement(-3), { $0.int8s.contains(-3) }, "int8s")
            try check(Arrays.int32s.containsElement(2), { $0.int32s.contains(2) }, "int32s")
            try check(Arrays.uints.containsElement(1), { $0.uints.contains(1) }, "uints")
            try check(Arrays.uint8s.containsElement(0), { $0.uint8s.contains(0) }, "uint8s")
            try check(Arrays.uint32s.containsElement(3), { $0.uint32s.contains(3) }, "uint32s")
            try check(Arrays.uint64s.containsElement(.max), { $0.uint64s.contains(.max) }, "uint64s")
            try check(Arrays.floats.containsElement(0.5), { $0.floats.contains(0.5) }, "floats")
            try check(Arrays.dates.containsElement(Date(timeIntervalSinceReferenceDate: 86_400)),
                      { $0.dates.contains(Date(timeIntervalSinceReferenceDate: 86_400)) }, "dates")
            let uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
            try check(Arrays.uuids.containsElement(uuid), { $0.uuids.contains(uuid) }, "uuids")
            try check(Arrays.moods.containsElement(.grumpy), { $0.moods.contains(.grumpy) }, "moods")
            try check(Arrays.levels.containsElement(.high), { $0.levels?.contains(.high) == true }, "levels")
            try check(Arrays.uint16s.count >= 2, { $0.uint16s.count >= 2 }, "count")
            try check(Arrays.levels.count == 0, { ($0.levels ?? []).isEmpty }, "nil counts 0")
            // The same through selectors.
            func selector(_ text: String, _ expected: (Arrays) -> Bool) throws {
                #expect(try box.query(selector: text).build().findIds() == all.filter(expected).map(\.id), "\(text)")
            }
            try selector(#"{"int8s": -3}"#) { $0.int8s.contains(-3) }
            try selector(#"{"uint64s": 18446744073709551615}"#) { $0.uint64s.contains(.max) }
            try selector(#"{"dates": "2001-01-02T00:00:00Z"}"#) { $0.dates.contains(Date(timeIntervalSinceReferenceDate: 86_400)) }
            try selector(#"{"uuids": {"$all": ["00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003"]}}"#) {
                $0.uuids.contains(uuid) && $0.uuids.contains(UUID(uuidString: "00000000-0000-0000-0000-000000000003")!)
            }
            try selector(#"{"moods": {"$size": 2}}"#) { $0.moods.count == 2 }
            try selector(#"{"bools": {"$nin": [true]}}"#) { !$0.bools.contains(true) }
            try selector(#"{"int32s": {"$elemMatch": {"$gt": 0, "$lt": 3}}}"#) { $0.int32s.contains { $0 > 0 && $0 < 3 } }
            #expect(throws: CofferError.self) { try box.query(selector: #"{"int8s": 200}"#) }
            #expect(throws: CofferError.self) { try box.query(selector: #"{"uuids": "nope"}"#) }
        }
    }

    @Test func exportAndImportKeepEveryArray() throws {
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in
                var rng = SplitMix64(state: 0x1A)
                var all = (0..<50).map { _ in Self.random(using: &rng) }
                try source.box(for: Arrays.self).put(&all)
                var text = ""
                try source.dump(entity: "Arrays") { text += $0 + "\n" }
                try target.copySchema(of: "Arrays", from: source)
                try target.importObjects(entity: "Arrays", jsonLines: Data(text.utf8))
                #expect(try target.box(for: Arrays.self).all() == all)
                #expect(throws: CofferError.self) {
                    try target.importObjects(entity: "Arrays", jsonLines: Data(#"{"int8s": [1, 300]}"#.utf8))
                }
            }
        }
    }

    @Test func elementsThatDoNotFitAreDamageNeverTruncated() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Arrays.self)
            let id = try box.put(Arrays())
            // A record whose [Int8] field holds 300 (as another build or damage could write it).
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Arrays.self, in: transaction)
                var other = Arrays()
                other.id = id
                try transaction.storeObject(id: &other.id, binding: binding) { writer, _ in
                    Int64.cofferWriteArray([1, 300], field: 2, to: &writer)
                }
            }
            #expect(throws: CofferError.self) { try box.get(id) }
            #expect(try store.verify().isIntact, "well-formed: only the element type is wrong")
        }
    }
}
