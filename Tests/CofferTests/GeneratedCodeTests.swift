@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct GeneratedCodeTests {
    /// Regression: an internal enum without an explicit `Sendable` made the generated file
    /// fail to compile.
    @Test func enumWithoutExplicitSendableWorks() throws {
        try withStore { (store: Store) throws in
            let poems = store.box(for: Poem.self)
            try poems.put([Poem(title: "a", genre: .fiction), Poem(title: "b", maybe: .fiction)])
            #expect(try poems.query { Poem.genre == .fiction }.build().find().map(\.title) == ["a"])
            #expect(try poems.query { Poem.maybe == .fiction }.build().find().map(\.title) == ["b"])
        }
    }
}
