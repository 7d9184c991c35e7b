import Coffer
import Foundation
import Testing

/// Every comparison on every value type, optionals included, against a Swift filter.
@Suite struct QueryTypeTests {
    @Test func everyOperatorOnEveryType() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var rng = SplitMix64(state: 7)
            var objects: [Everything] = (0..<40).map { index in
                var e = Everything()
                e.bool = Bool.random(using: &rng)
                e.int = Int.random(in: -3...3, using: &rng)
                e.int8 = Int8.random(in: -3...3, using: &rng)
                e.int16 = Int16.random(in: -3...3, using: &rng)
                e.int32 = Int32.random(in: -3...3, using: &rng)
                e.int64 = [Int64.min, -1, 0, 1, .max].randomElement(using: &rng)!
                e.uint8 = UInt8.random(in: 0...3, using: &rng)
                e.uint16 = UInt16.random(in: 0...3, using: &rng)
                e.uint32 = UInt32.random(in: 0...3, using: &rng)
                e.uint64 = [0, 1, UInt64.max].randomElement(using: &rng)!
                e.float = [Float(-1), 0, 0.5, .infinity].randomElement(using: &rng)!
                e.double = [-1.0, 0, 0.5, .nan].randomElement(using: &rng)!
                e.string = ["", "a", "B", "ä"].randomElement(using: &rng)!
                e.date = Date(timeIntervalSinceReferenceDate: Double(index % 4))
                e.uuid = UUID(uuidString: ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"].randomElement(using: &rng)!)!
                e.mood = [.happy, .grumpy].randomElement(using: &rng)!
                e.level = [.low, .high].randomElement(using: &rng)!
                e.optInt = [nil, -1, 0, 2].randomElement(using: &rng)!
                e.optUInt64 = [nil, 0, .max].randomElement(using: &rng)!
                e.optDouble = [nil, 0.5, -.infinity].randomElement(using: &rng)!
                e.optString = [nil, "", "x"].randomElement(using: &rng)!
                e.optDate = [nil, Date(timeIntervalSinceReferenceDate: 1)].randomElement(using: &rng)!
                e.optMood = [nil, .happy].randomElement(using: &rng)!
                e.optBool = [nil, true, false].randomElement(using: &rng)!
                e.ints = (0..<Int.random(in: 0...2, using: &rng)).map { $0 }
                e.doubles = [[], [1.5], [0.5, 1.5]].randomElement(using: &rng)!
                return e
            }
            try box.put(&objects)

            func check(_ condition: QueryCondition<Everything>, _ predicate: (Everything) -> Bool, _ label: String) throws {
                let expected = objects.filter(predicate).map(\.id)
                #expect(try box.query { condition }.build().findIds() == expected, "\(label)")
            }
            for v in -3...3 {
                try check(Everything.int == v, { $0.int == v }, "int ==")
                try check(Everything.int8 < Int8(v), { $0.int8 < Int8(v) }, "int8 <")
                try check(Everything.int16 >= Int16(v), { $0.int16 >= Int16(v) }, "int16 >=")
                try check(Everything.int32 != Int32(v), { $0.int32 != Int32(v) }, "int32 !=")
                try check(Everything.optInt == v, { $0.optInt == v }, "optInt ==")
                try check(Everything.optInt != v, { $0.optInt != v }, "optInt !=")
                try check(Everything.optInt > v, { ($0.optInt ?? .min) > v && $0.optInt != nil }, "optInt >")
            }
            for v in [Int64.min, -1, 0, 1, .max] {
                try check(Everything.int64 <= v, { $0.int64 <= v }, "int64 <=")
                try check(Everything.int64 > v, { $0.int64 > v }, "int64 >")
            }
            for v in [UInt64(0), 1, .max] {
                try check(Everything.uint64 < v, { $0.uint64 < v }, "uint64 <")
                try check(Everything.optUInt64 == v, { $0.optUInt64 == v }, "optUInt64 ==")
            }
            for v in UInt8(0)...3 {
                try check(Everything.uint8 > v, { $0.uint8 > v }, "uint8 >")
                try check(Everything.uint16 <= UInt16(v), { $0.uint16 <= UInt16(v) }, "uint16 <=")
                try check(Everything.uint32 == UInt32(v), { $0.uint32 == UInt32(v) }, "uint32 ==")
            }
            for v in [Float(-1), 0, 0.5, .infinity] {
                try check(Everything.float == v, { $0.float == v }, "float ==")
                try check(Everything.float > v, { $0.float > v }, "float >")
            }
            for v in [-1.0, 0, 0.5, .nan] {
                try check(Everything.double < v, { $0.double < v }, "double <")
                try check(Everything.double != v, { $0.double != v }, "double !=")
                try check(Everything.optDouble >= v, { $0.optDouble.map { $0 >= v } ?? false }, "optDouble >=")
            }
            for v in ["", "a", "B", "ä"] {
                try check(Everything.string == v, { $0.string == v }, "string ==")
                try check(Everything.string > v, { Array(v.utf8).lexicographicallyPrecedes(Array($0.string.utf8)) }, "string >")
                try check(Everything.string <= v, { !Array(v.utf8).lexicographicallyPrecedes(Array($0.string.utf8)) }, "string <=")
                try check(Everything.optString == v, { $0.optString == v }, "optString ==")
            }
            try check(Everything.bool == true, { $0.bool }, "bool ==")
            try check(Everything.bool != true, { !$0.bool }, "bool !=")
            try check(Everything.optBool == false, { $0.optBool == false }, "optBool ==")
            let one = Date(timeIntervalSinceReferenceDate: 1)
            try check(Everything.date.isAfter(one), { $0.date > one }, "date after")
            try check(Everything.date.isBetween(Date(timeIntervalSinceReferenceDate: 2), and: one), { (1...2).contains($0.date.timeIntervalSinceReferenceDate) }, "date between")
            try check(Everything.optDate == one, { $0.optDate == one }, "optDate ==")
            try check(Everything.optDate.isNil(), { $0.optDate == nil }, "optDate nil")
            let uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
            try check(Everything.uuid == uuid, { $0.uuid == uuid }, "uuid ==")
            try check(Everything.mood == .grumpy, { $0.mood == .grumpy }, "enum ==")
            try check(Everything.level > .low, { $0.level == .high }, "enum >")
            try check(Everything.optMood == .happy, { $0.optMood == .happy }, "optional enum ==")
            try check(Everything.optMood.isNotNil(), { $0.optMood != nil }, "optional enum not nil")
            try check(Everything.ints.containsElement(1), { $0.ints.contains(1) }, "[Int] contains")
            try check(Everything.ints.count == 2, { $0.ints.count == 2 }, "[Int] count")
            try check(Everything.doubles.containsElement(1.5), { $0.doubles.contains(1.5) }, "[Double] contains")
            try check(Everything.optStrings.count == 0, { ($0.optStrings ?? []).isEmpty }, "[String]? count")
            try check(Everything.int.isNotIn([0, 1]), { ![0, 1].contains($0.int) }, "notIn")
            try check(Everything.optInt.isNotIn([0]), { $0.optInt != 0 }, "optional notIn")
            try check(Everything.optInt ∈ (-1...0), { $0.optInt.map { (-1...0).contains($0) } ?? false }, "optional in range")
            try check(Everything.optInt ∉ (-1..<2), { $0.optInt.map { !(-1..<2).contains($0) } ?? true }, "optional not in range")
            try check(Everything.int.modulo(2) == -1, { $0.int % 2 == -1 }, "modulo negative")
        }
    }
}
