@_spi(CofferGenerated) @testable import Coffer
import Foundation
import Testing

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
