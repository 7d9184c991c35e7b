@testable import Coffer
import Foundation
import Testing

/// Property prefixes in `$text` use stored names, as every selector field does; NEAR across
/// two properties is refused, not answered with nothing.
@Suite struct TextPrefixReviewTests {
    @Test func prefixesUseStoredNamesInSelectorsAndNearStaysInOneProperty() throws {
        try withStore { (store: Store) throws in
            let notes = store.box(for: TextNote.self)
            try notes.put(TextNote(heading: "cats", body: "dogs and cats"))
            // `body` is stored as body_text.
            #expect(try notes.query(selector: #"{"$text": {"$search": "body_text:dogs"}}"#).build().count() == 1)
            #expect(throws: CofferError.self) { try notes.query(selector: #"{"$text": {"$search": "body:dogs"}}"#).build().count() }
            var lines: [String] = []
            try store.query(entity: "TextNote", selector: #"{"$text": {"$search": "body_text:dogs"}}"#) { lines.append($0) }
            #expect(lines.count == 1)
            // The typed DSL uses Swift names.
            #expect(try notes.query { TextNote.body.matches("body:dogs") }.build().count() == 1)
            #expect(throws: CofferError.self) { try notes.query(selector: #"{"$text": {"$search": "heading:cats NEAR body_text:dogs"}}"#).build().count() }
            #expect(try notes.query(selector: #"{"$text": {"$search": "body_text:dogs NEAR body_text:cats"}}"#).build().count() == 1)
        }
    }
}
