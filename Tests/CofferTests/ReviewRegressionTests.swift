@testable import Coffer
import Foundation
import Testing

/// Defects found by reviewing the selector, regex and import changes.
@Suite struct ReviewRegressionTests {
    /// Regression: repetitions of an empty group emit no instruction, so the program's size
    /// never reached its cap while the compile did 1000^6 steps.
    @Test func repeatedEmptyGroupsAreRefusedAtOnce() throws {
        try withStore { (store: Store) throws in
            let people = store.box(for: Person.self)
            try people.put(Person(firstName: "Ada", lastName: "L", age: 36))
            for pattern in ["((((((){1000}){1000}){1000}){1000}){1000}){1000}", "(((((?:x{0}){1000}){1000}){1000}){1000}){1000}",
                            "((((((?:){1000}){1000}){1000}){1000}){1000}){1000}"] {
                #expect(throws: CofferError.self, "\(pattern)") {
                    try people.query(selector: #"{"firstName": {"$regex": "\#(pattern)"}}"#).build().count()
                }
            }
            // Small repetitions of empty groups still work.
            #expect(try people.query(selector: #"{"firstName": {"$regex": "^(){3}A(?:){2}d"}}"#).build().count() == 1)
        }
    }

    /// A `Float` property compares at its own precision in every operator, so equal, less
    /// and greater never overlap (1.00000001 is the Float 1.0); index and scan agree.
    @Test func floatComparisonsNeverOverlap() throws {
        try withStore { (store: Store) throws in
            let plain = store.box(for: Reading.self)
            let indexed = store.box(for: IndexedReading.self)
            try plain.put(Reading(label: "one", f: 1.0, floats: [1.0]))
            try indexed.put(IndexedReading(label: "one", f: 1.0, floats: [1.0]))
            for operand in ["1.00000001", "0.99999999", "1", "3.3", "1e-46"] {
                var total = 0
                for op in ["$lt", "$eq", "$gt"] {
                    let selector = #"{"f": {"\#(op)": \#(operand)}}"#
                    let count = try plain.query(selector: selector).build().count()
                    #expect(try indexed.query(selector: selector).build().count() == count, "\(selector)")
                    total += count
                }
                #expect(total == 1, "exactly one of <, ==, > holds for \(operand)")
            }
        }
    }

    /// Regression: an import line could store an array of embedded values as any JSON
    /// (`null`, a number, an array of numbers): every later read of the object failed.
    @Test func importRefusesEmbeddedArraysOfTheWrongShape() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Sample.self).put(Sample(key: "seed"))
            for line in [#"{"key": "a", "readings": 5}"#, #"{"key": "b", "readings": [5]}"#, #"{"key": "c", "readings": "x"}"#,
                         #"{"key": "d", "readings": {"value": 1}}"#] {
                #expect(throws: CofferError.self, "\(line)") { try store.importObjects(entity: "Sample", jsonLines: Data(line.utf8)) }
            }
            // null for a defaulted array of embedded values: absent (its default), readable.
            try store.importObjects(entity: "Sample", jsonLines: Data(#"{"key": "e", "readings": null}"#.utf8))
            let all = try store.box(for: Sample.self).all()
            #expect(all.map(\.key) == ["seed", "e"])
            #expect(all.last?.readings.isEmpty == true)
        }
    }
}
