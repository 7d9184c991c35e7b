@testable import Coffer
import Foundation
import Testing

@Suite struct TextTokenizerTests {
    @Test func simpleSplitsUnicodeWordsAndFolds() {
        #expect(TextTokenizer.simple.terms(in: "Café au lait, CAFE!") == ["cafe", "au", "lait", "cafe"])
        #expect(TextTokenizer.simple.terms(in: "don't stop-me now") == ["don", "t", "stop", "me", "now"])
        #expect(TextTokenizer.simple.terms(in: "Ἀθῆναι Москва 東京 2024") == ["αθηναι", "москва", "東京", "2024"])
        #expect(TextTokenizer.simple.terms(in: "naïve Zürich") == ["naive", "zurich"])
        #expect(TextTokenizer.simple.terms(in: "  ...  ") == [])
        #expect(TextTokenizer.simple.terms(in: "") == [])
    }

    @Test func porterStemsAfterFolding() {
        #expect(TextTokenizer.porter.terms(in: "Reading Books about relational DATABASES") == ["read", "book", "about", "relat", "databas"])
        #expect(TextTokenizer.porter.terms(in: "Crèmes") == ["creme"])   // folded, then stemmed
    }

    @Test func longWordsAreCutAtACharacterBoundary() {
        let long = String(repeating: "é", count: 300)
        let term = TextTokenizer.simple.terms(in: long)
        #expect(term.count == 1 && term[0].utf8.count <= TextTokenizer.maximumTermBytes)
    }
}
