import Coffer
import Foundation
import Testing

@Suite struct LongInListTests {
    /// Lists longer than 8 non-negative integers take the hashed path; the answers equal a
    /// plain filter, for ids, integers, doubles and negated lists.
    @Test func longListsAgreeWithAPlainFilter() throws {
        try withStore { (store: Store) throws in
            var random = SplitMix64(state: 17)
            let people = store.box(for: PlainPerson.self)
            var all: [PlainPerson] = (0..<300).map { _ in
                PlainPerson(name: "p", age: Int.random(in: -20..<200, using: &random), score: Double(Int.random(in: 0..<50, using: &random)),
                            nick: nil, tags: [], born: Date(timeIntervalSince1970: 0), level: nil)
            }
            try people.put(&all)
            for _ in 0..<20 {
                let ages = (0..<Int.random(in: 9...60, using: &random)).map { _ in Int.random(in: -5..<200, using: &random) }
                let nonNegative = ages.map { abs($0) }
                let ids = (0..<40).map { _ in Id.random(in: 1...320, using: &random) }
                let scores = (0..<12).map { _ in Double(Int.random(in: 0..<50, using: &random)) }
                func found(_ condition: QueryCondition<PlainPerson>) throws -> [Id] { try people.query { condition }.build().findIds() }
                #expect(try found(PlainPerson.age.isIn(ages)) == all.filter { ages.contains($0.age) }.map(\.id))
                #expect(try found(PlainPerson.age.isIn(nonNegative)) == all.filter { nonNegative.contains($0.age) }.map(\.id))
                #expect(try found(!PlainPerson.age.isIn(nonNegative)) == all.filter { !nonNegative.contains($0.age) }.map(\.id))
                #expect(try found(PlainPerson.id.isIn(ids)) == all.filter { ids.contains($0.id) }.map(\.id))
                #expect(try found(PlainPerson.score.isIn(scores)) == all.filter { scores.contains($0.score) }.map(\.id))
            }
        }
    }
}
