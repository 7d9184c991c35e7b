@testable import Coffer
import Foundation
import Testing

/// Values of the kinds Cloudant's own query tests compare: arrays, floating-point numbers
/// of both precisions, optional arrays (missing fields) and a document. No index.
struct Reading: Entity, Equatable {
    var id: Id = 0
    var label: String = ""
    var f: Float = 0
    var d: Double = 0
    var n: Int64 = 0
    var nums: [Int]? = nil
    var reals: [Double] = []
    var floats: [Float]? = nil
    var words: [String]? = nil
    var doc: JSONValue? = nil
}

/// `Reading` with indexes on the scalar and element values the selectors compare, so the
/// same selectors run through index look-ups.
struct IndexedReading: Entity, Equatable {
    var id: Id = 0
    var label: String = ""
    @Index var f: Float = 0
    var d: Double = 0
    @Index var n: Int64 = 0
    var nums: [Int]? = nil
    var reals: [Double] = []
    @Index var floats: [Float]? = nil
    @Index var words: [String]? = nil
    var doc: JSONValue? = nil
}

/// Cloudant Query compatibility (issue 29): where Cloudant's engine answers, a selector
/// gives the same answer on the same data.
@Suite struct SelectorCloudantTests {
    static let readings = [
        Reading(label: "a", f: 1.01, d: 7.9, n: 9_007_199_254_740_993, nums: [1, 5], reals: [0.5, 2.5], floats: [1.01, 3.3], words: ["ant", "cat"],
                doc: ["list": [1, 2, 3], "x": 4.5]),
        Reading(label: "b", f: 0.1, d: -7.9, n: 9_007_199_254_740_992, nums: [], reals: [], floats: [], words: [], doc: ["list": [], "x": "s"]),
        Reading(label: "c", f: 3.3, d: .nan, n: 12, nums: nil, reals: [.nan], floats: nil, words: nil, doc: nil),
        Reading(label: "d", f: -2.5, d: .infinity, n: -7, nums: [9], reals: [10], floats: [0.1], words: ["bee"], doc: ["x": [7]]),
        Reading(label: "e", f: 16_777_216, d: 1e300, n: 4, nums: [2, 3, 4], reals: [-1, 1e300], floats: [16_777_216], words: ["cat", "dog", "eel"]),
    ]

    func withReadings(_ body: (Box<Reading>, Box<IndexedReading>) throws -> Void) throws {
        try withStore { (store: Store) throws in
            let plain = store.box(for: Reading.self)
            let indexed = store.box(for: IndexedReading.self)
            var rows = Self.readings
            try plain.put(&rows)
            var copies = rows.map(IndexedReading.init)
            try indexed.put(&copies)
            try body(plain, indexed)
        }
    }

    /// The labels of the matches, the same through the scan and the indexes.
    func labels(_ plain: Box<Reading>, _ indexed: Box<IndexedReading>, _ selector: String,
                sort: [(String, SortDirection)] = []) throws -> String {
        let scanned = try plain.query(selector: selector, sort: sort).build().find().map(\.label).joined()
        let looked = try indexed.query(selector: selector, sort: sort).build().find().map(\.label).joined()
        #expect(scanned == looked, "\(selector): scan \(scanned), indexes \(looked)")
        return scanned
    }

    /// `$gt`, `$gte`, `$lt`, `$lte` on an array match when an element does; `$not` around
    /// them is the complement of that (missing arrays included).
    @Test func comparisonsOnArraysMatchAnElement() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            #expect(try labels(plain, indexed, #"{"nums": {"$gt": 4}}"#) == "ad")
            #expect(try labels(plain, indexed, #"{"nums": {"$gte": 4, "$lt": 5}}"#) == "ae", "each operator on some element")
            #expect(try labels(plain, indexed, #"{"nums": {"$not": {"$gt": 4}}}"#) == "bce")
            #expect(try labels(plain, indexed, #"{"words": {"$lt": "b"}}"#) == "a")
            #expect(try labels(plain, indexed, #"{"words": {"$lte": "bee"}}"#) == "ad")
            #expect(try labels(plain, indexed, #"{"floats": {"$gte": 3.3}}"#) == "ae")
            #expect(try labels(plain, indexed, #"{"floats": {"$lte": 0.1}}"#) == "d")
            #expect(try labels(plain, indexed, #"{"reals": {"$lt": 0}}"#) == "e")
            #expect(try labels(plain, indexed, #"{"reals": {"$gt": 1e299}}"#) == "e", "NaN elements never compare")
            #expect(try labels(plain, indexed, #"{"doc.list": {"$gt": 2}}"#) == "a")
        }
    }

    /// `$mod` on floating-point values truncates them first; NaN, infinities and values
    /// beyond Int64 match nothing (and their `$not` everything).
    @Test func modTruncatesFloatingPointValues() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            #expect(try labels(plain, indexed, #"{"d": {"$mod": [7, 0]}}"#) == "ab", "7.9 is 7, -7.9 is -7")
            #expect(try labels(plain, indexed, #"{"d": {"$mod": [4, -3]}}"#) == "b", "-7.9 is -7, remainder -3")
            #expect(try labels(plain, indexed, #"{"d": {"$not": {"$mod": [7, 0]}}}"#) == "cde")
            #expect(try labels(plain, indexed, #"{"f": {"$mod": [2, 1]}}"#) == "ac", "1.01 is 1, 3.3 is 3")
            #expect(try labels(plain, indexed, #"{"f": {"$mod": [2, 0]}}"#) == "bde", "0.1 is 0, -2.5 is -2")
            #expect(try labels(plain, indexed, #"{"doc.x": {"$mod": [2, 0]}}"#) == "a", "4.5 is 4; a string or array no number")
        }
    }

    /// Operators on a property of the wrong kind, and `$size` with a count no array has,
    /// match nothing; their `$not` matches everything.
    @Test func operatorsOnTheWrongKindMatchNothing() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            for selector in [#"{"label": {"$mod": [3, 1]}}"#, #"{"words": {"$mod": [3, 1]}}"#, #"{"n": {"$size": 1}}"#,
                             #"{"f": {"$size": 0}}"#, #"{"nums": {"$size": -1}}"#, #"{"nums": {"$size": 1.5}}"#,
                             #"{"nums": {"$size": "2"}}"#, #"{"nums": {"$size": null}}"#, #"{"_id": {"$size": 1}}"#,
                             #"{"doc.x": {"$size": 0}}"#] {
                #expect(try labels(plain, indexed, selector) == "", "\(selector)")
                let negated = selector.replacingOccurrences(of: #"": {"#, with: #"": {"$not": {"#) .replacingOccurrences(of: "}}", with: "}}}")
                #expect(try labels(plain, indexed, negated) == "abcde", "\(negated)")
            }
            // Malformed operands stay refused: they are no question Cloudant answers.
            #expect(throws: CofferError.self) { try plain.query(selector: #"{"label": {"$mod": [0, 1]}}"#) }
            #expect(throws: CofferError.self) { try plain.query(selector: #"{"d": {"$mod": "7"}}"#) }
        }
    }

    /// A missing array has no size: `$size: 0` matches stored empty arrays only.
    @Test func sizeNeverMatchesAMissingArray() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            #expect(try labels(plain, indexed, #"{"nums": {"$size": 0}}"#) == "b")
            #expect(try labels(plain, indexed, #"{"words": {"$size": 0}}"#) == "b")
            #expect(try labels(plain, indexed, #"{"nums": {"$not": {"$size": 0}}}"#) == "acde")
            #expect(try labels(plain, indexed, #"{"doc.list": {"$size": 0}}"#) == "b")
            #expect(try labels(plain, indexed, #"{"doc.list": {"$size": 3}}"#) == "a")
            // The typed `count` keeps reading nil as 0.
            #expect(try plain.query { Reading.nums.count == 0 }.build().find().map(\.label) == ["b", "c"])
        }
    }

    /// A `Float` property compares with the selector's number at `Float` precision, through
    /// the scan and the index alike.
    @Test func floatPropertiesCompareAtTheirOwnPrecision() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            #expect(try labels(plain, indexed, #"{"f": 1.01}"#) == "a")
            #expect(try labels(plain, indexed, #"{"f": {"$in": [0.1, 3.3]}}"#) == "bc")
            #expect(try labels(plain, indexed, #"{"f": {"$gte": 1.01, "$lte": 3.3}}"#) == "ac")
            #expect(try labels(plain, indexed, #"{"f": {"$gt": 1.01}}"#) == "ce")
            #expect(try labels(plain, indexed, #"{"f": {"$ne": 0.1}}"#) == "acde")
            #expect(try labels(plain, indexed, #"{"floats": 1.01}"#) == "a")
            #expect(try labels(plain, indexed, #"{"floats": {"$all": [3.3, 1.01]}}"#) == "a")
            // Beyond Float's range a number stays what it is: no Float equals it, all are below it.
            #expect(try labels(plain, indexed, #"{"f": 1e300}"#) == "")
            #expect(try labels(plain, indexed, #"{"f": {"$lt": 1e300}}"#) == "abcde")
        }
    }

    /// Integers in selector operands are read exactly from their digits, whatever their
    /// form; one that is no integer is refused for an integer property.
    @Test func largeIntegerOperandsAreExact() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            #expect(try labels(plain, indexed, #"{"n": 9007199254740993}"#) == "a")
            #expect(try labels(plain, indexed, #"{"n": 9007199254740993.0}"#) == "a")
            #expect(try labels(plain, indexed, #"{"n": 9.007199254740993e15}"#) == "a")
            #expect(try labels(plain, indexed, #"{"n": {"$in": [9007199254740992.000]}}"#) == "b")
            #expect(try labels(plain, indexed, #"{"n": {"$gt": 9007199254740992e0}}"#) == "a")
            for bad in [#"{"n": 9007199254740993.5}"#, #"{"n": 9007199254740992.0000001}"#, #"{"n": {"$lt": 9223372036854775808.0}}"#] {
                do {
                    _ = try plain.query(selector: bad)
                    Issue.record("\(bad) was accepted")
                } catch CofferError.invalidSelector(_, _, let reason) {
                    #expect(reason.contains("needs an integer"), "\(reason)")
                }
            }
        }
        #expect(JSONNumber(text: "9007199254740993.0").int64 == 9_007_199_254_740_993)
        #expect(JSONNumber(text: "-9223372036854775808.00").int64 == .min && JSONNumber(text: "-9223372036854775809").int64 == nil)
        #expect(JSONNumber(text: "18446744073709551615e0").uint64 == .max && JSONNumber(text: "1844674407370955161.5e1").uint64 == .max)
        #expect(JSONNumber(text: "1e19").int64 == nil && JSONNumber(text: "1e19").uint64 == 10_000_000_000_000_000_000)
        #expect(JSONNumber(text: "-0.0").uint64 == 0 && JSONNumber(text: "0e99999999999999999999").int64 == 0)
        #expect(JSONNumber(text: "1e-99999999999999999999").int64 == nil && SelectorCompiler.truncated(JSONNumber(text: "1e-99999999999999999999")) == 0)
        #expect(SelectorCompiler.truncated(JSONNumber(text: "-9007199254740993.9")) == -9_007_199_254_740_993)
        #expect(JSONNumber(text: "7.0000000000000001").int64 == nil, "a fraction a Double would round away")
    }

    /// Arrays sort as CouchDB collates them: element by element, a prefix first; nil first.
    @Test func arraysSortElementByElement() throws {
        try withReadings { (plain: Box<Reading>, indexed: Box<IndexedReading>) throws in
            #expect(try labels(plain, indexed, "{}", sort: [("nums", .ascending)]) == "cbaed")
            #expect(try labels(plain, indexed, "{}", sort: [("nums", .descending)]) == "cdeab", "nil first in both directions")
            #expect(try labels(plain, indexed, "{}", sort: [("words", .ascending)]) == "cbade")
            #expect(try labels(plain, indexed, "{}", sort: [("reals", .ascending)]) == "beadc", "NaN after every number")
        }
    }

    /// Cloudant reads `limit: 0` as no limit and an empty `fields` list as every field.
    @Test func limitZeroAndEmptyFieldsMeanNoRestriction() throws {
        try withReadings { (plain: Box<Reading>, _: Box<IndexedReading>) throws in
            #expect(try plain.query(selector: "{}", limit: 0).build().find().count == Self.readings.count)
            #expect(try plain.query(selector: "{}", skip: 2, limit: 0).build().find().map(\.label) == ["c", "d", "e"])
            var lines: [String] = []
            try plain.store.query(entity: "Reading", selector: #"{"label": "b"}"#, limit: 0, fields: []) { lines.append($0) }
            #expect(lines.count == 1)
            #expect(lines.first?.contains(#""label":"b""#) == true && lines.first?.contains(#""id":"#) == true, "\(lines)")
            var all = 0
            try plain.store.query(entity: "Reading", selector: "{}", limit: 0) { _ in all += 1 }
            #expect(all == Self.readings.count)
        }
    }

    /// Random selectors with the operators Cloudant answers differently from a plain typed
    /// query (comparisons on arrays, `$mod` on floating-point values, `$size` with any
    /// operand, operators on the wrong kind, `Float` precision, integers past 2^53, `$not`
    /// and the combinations) over random objects: the same ids through the scan and the
    /// indexes as a plain Swift model of Cloudant's rules, and arrays sorted by CouchDB's
    /// collation.
    @Test func randomSelectorsAgreeWithAModelOfCloudant() throws {
        var rng = SplitMix64(state: 2_903)
        var rows = (0..<80).map { _ in CloudantModel.randomReading(using: &rng) }
        try withStore { (store: Store) throws in
            let plain = store.box(for: Reading.self)
            let indexed = store.box(for: IndexedReading.self)
            try plain.put(&rows)
            var copies = rows.map(IndexedReading.init)
            try indexed.put(&copies)
            #expect(copies.map(\.id) == rows.map(\.id))
            var matchedSome = 0, matchedNone = 0
            for round in 0..<300 {
                let (json, holds) = CloudantModel.selector(depth: 2, using: &rng)
                var expected = rows.filter(holds)
                var sort: [(String, SortDirection)] = []
                if round % 3 == 0 {
                    let descending = Bool.random(using: &rng)
                    sort = [("nums", descending ? .descending : .ascending)]
                    expected.sort { CloudantModel.precedes($0, $1, descending: descending) }
                }
                let ids = expected.map(\.id)
                if ids.isEmpty { matchedNone += 1 } else if ids.count < rows.count { matchedSome += 1 }
                #expect(try plain.query(selector: json, sort: sort).build().findIds() == ids, "\(json)")
                #expect(try indexed.query(selector: json, sort: sort).build().findIds() == ids, "\(json)")
            }
            // The selectors discriminate: most keep some objects and drop others.
            #expect(matchedSome > 150 && matchedNone > 10, "\(matchedSome) partial, \(matchedNone) empty")
        }
    }
}

/// Cloudant's rules as plain Swift over `Reading`, and random selectors with their meaning.
/// A value is what the JSON document would hold: a `Float` is its shortest decimal text.
enum CloudantModel {
    static let floats: [Float] = [1.01, 0.1, 3.3, -2.5, 16_777_216, 0, -0.0, 7, 2.75, 1e30]
    static let doubles: [Double] = [7.9, -7.9, .nan, .infinity, -.infinity, 1e300, 0, -0.5, 4, 9.3e18, 12.25]
    static let integers: [Int64] = [9_007_199_254_740_992, 9_007_199_254_740_993, 4, -7, 12, 0, .max, .min]
    static let words = ["ant", "bee", "cat", "dog"]

    static func randomReading(using rng: inout SplitMix64) -> Reading {
        func list<T>(_ pool: [T]) -> [T] { (0..<Int.random(in: 0...3, using: &rng)).map { _ in pool.randomElement(using: &rng)! } }
        func optional<T>(_ pool: [T]) -> [T]? { Int.random(in: 0..<4, using: &rng) == 0 ? nil : list(pool) }
        return Reading(label: ["a", "b", "c"].randomElement(using: &rng)!, f: floats.randomElement(using: &rng)!,
                       d: doubles.randomElement(using: &rng)!, n: integers.randomElement(using: &rng)!,
                       nums: optional(Array(-2...10)), reals: list(doubles), floats: optional(floats), words: optional(words))
    }

    /// The number a JSON document holding `value` holds.
    static func json(_ value: Float) -> Double { Double("\(value)")! }

    static func holds<T: Comparable>(_ op: String, _ a: T, _ b: T) -> Bool {
        switch op {
        case "$eq": return a == b
        case "$ne": return a != b
        case "$gt": return a > b
        case "$gte": return a >= b
        case "$lt": return a < b
        default: return a <= b
        }
    }

    /// Cloudant's `$mod`: the value truncated to an integer (none for NaN, infinities and
    /// values beyond Int64), its truncating remainder.
    static func modulo(_ value: Double, _ divisor: Int64, _ remainder: Int64) -> Bool {
        guard value.isFinite, value.magnitude < 9.2e18 else { return false }
        return modulo(Int64(value), divisor, remainder)
    }

    static func modulo(_ value: Int64, _ divisor: Int64, _ remainder: Int64) -> Bool {
        let (result, overflow) = value.remainderReportingOverflow(dividingBy: divisor)
        return (overflow ? 0 : result) == remainder
    }

    /// One field condition: the field, an object of one operator, and its meaning.
    static func leaf(using rng: inout SplitMix64) -> (field: String, operators: String, holds: (Reading) -> Bool) {
        let comparisons = ["$gt", "$gte", "$lt", "$lte"]
        let op = comparisons.randomElement(using: &rng)!
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            let value = Int.random(in: -1...10, using: &rng)
            return ("nums", #"{"\#(op)": \#(value)}"#, { $0.nums?.contains { holds(op, $0, value) } ?? false })
        case 1:
            let value = floats.randomElement(using: &rng)!
            return ("floats", #"{"\#(op)": \#(value)}"#, { $0.floats?.contains { holds(op, json($0), json(value)) } ?? false })
        case 2:
            let value = doubles.filter(\.isFinite).randomElement(using: &rng)!
            return ("reals", #"{"\#(op)": \#(value)}"#, { $0.reals.contains { holds(op, $0, value) } })
        case 3:
            let value = ["a", "ant", "bee", "c", "cat", "dog", "z"].randomElement(using: &rng)!
            return ("words", #"{"\#(op)": "\#(value)"}"#, { $0.words?.contains { holds(op, $0, value) } ?? false })
        case 4:
            let scalar = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in"].randomElement(using: &rng)!
            if scalar == "$in" {
                let values = (0..<Int.random(in: 1...3, using: &rng)).map { _ in floats.randomElement(using: &rng)! }
                return ("f", #"{"$in": [\#(values.map { "\($0)" }.joined(separator: ","))]}"#,
                        { reading in values.contains { json($0) == json(reading.f) } })
            }
            let value = floats.randomElement(using: &rng)!
            return ("f", #"{"\#(scalar)": \#(value)}"#, { holds(scalar, json($0.f), json(value)) })
        case 5:
            let divisor: Int64 = [1, 2, 3, -4, 7].randomElement(using: &rng)!
            let remainder = Int64.random(in: -3...3, using: &rng)
            let text = #"{"$mod": [\#(divisor), \#(remainder)]}"#
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return ("d", text, { modulo($0.d, divisor, remainder) })
            case 1: return ("f", text, { modulo(json($0.f), divisor, remainder) })
            default: return ("n", text, { modulo($0.n, divisor, remainder) })
            }
        case 6:
            let operand = ["0", "1", "2", "3", "-1", "1.5", "2.0", #""2""#, "null"].randomElement(using: &rng)!
            let count = Int(operand).flatMap { $0 >= 0 ? $0 : nil } ?? (operand == "2.0" ? 2 : nil)
            let text = #"{"$size": \#(operand)}"#
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return ("nums", text, { reading in count.map { reading.nums?.count == $0 } ?? false })
            case 1: return ("words", text, { reading in count.map { reading.words?.count == $0 } ?? false })
            default: return ("floats", text, { reading in count.map { reading.floats?.count == $0 } ?? false })
            }
        case 7:
            // The wrong kind: nothing matches.
            let wrong = [("f", #"{"$size": 0}"#), ("n", #"{"$size": 1}"#), ("label", #"{"$size": 1}"#), ("label", #"{"$mod": [2, 0]}"#),
                         ("words", #"{"$mod": [2, 0]}"#), ("nums", #"{"$mod": [3, 1]}"#)].randomElement(using: &rng)!
            return (wrong.0, wrong.1, { _ in false })
        default:
            let literal = ["9007199254740992", "9007199254740993", "9007199254740993.0", "9.007199254740993e15", "4", "-7.0", "12e0"]
                .randomElement(using: &rng)!
            let exact: Int64 = literal.hasPrefix("9") ? (literal.hasSuffix("992") ? 9_007_199_254_740_992 : 9_007_199_254_740_993)
                : (literal == "4" ? 4 : (literal == "-7.0" ? -7 : 12))
            let scalar = ["$eq", "$ne", "$gt", "$lte"].randomElement(using: &rng)!
            return ("n", #"{"\#(scalar)": \#(literal)}"#, { holds(scalar, $0.n, exact) })
        }
    }

    /// A random selector and its meaning: leaves, `$not` on a field, and the combinations.
    static func selector(depth: Int, using rng: inout SplitMix64) -> (String, (Reading) -> Bool) {
        if depth > 0, Int.random(in: 0..<3, using: &rng) == 0 {
            let (a, ha) = selector(depth: depth - 1, using: &rng)
            let (b, hb) = selector(depth: depth - 1, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return (#"{"$and": [\#(a), \#(b)]}"#, { ha($0) && hb($0) })
            case 1: return (#"{"$or": [\#(a), \#(b)]}"#, { ha($0) || hb($0) })
            case 2: return (#"{"$nor": [\#(a), \#(b)]}"#, { !ha($0) && !hb($0) })
            default: return (#"{"$not": \#(a)}"#, { !ha($0) })
            }
        }
        let (field, operators, holds) = leaf(using: &rng)
        if Bool.random(using: &rng) { return (#"{"\#(field)": {"$not": \#(operators)}}"#, { !holds($0) }) }
        return (#"{"\#(field)": \#(operators)}"#, holds)
    }

    /// The model's order of a sort by `nums`: nil first (in both directions), arrays as
    /// CouchDB collates them, then ids.
    static func precedes(_ a: Reading, _ b: Reading, descending: Bool) -> Bool {
        switch (a.nums, b.nums) {
        case (nil, nil): return a.id < b.id
        case (nil, _): return true
        case (_, nil): return false
        case (let x?, let y?):
            if x == y { return a.id < b.id }
            return descending ? y.lexicographicallyPrecedes(x) : x.lexicographicallyPrecedes(y)
        }
    }
}

extension IndexedReading {
    init(_ reading: Reading) {
        self.init(id: 0, label: reading.label, f: reading.f, d: reading.d, n: reading.n, nums: reading.nums, reals: reading.reals,
                  floats: reading.floats, words: reading.words, doc: reading.doc)
    }
}
