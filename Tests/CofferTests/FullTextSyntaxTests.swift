@testable import Coffer
import Foundation
import Testing

@Suite struct PorterStemmerTests {
    /// The examples printed in Porter's 1980 paper, step by step (the paper shows each
    /// step's output; the full algorithm's results are what `stem` returns).
    static let paperExamples: [(String, String)] = [
        // Step 1a
        ("caresses", "caress"), ("ponies", "poni"), ("ties", "ti"), ("caress", "caress"), ("cats", "cat"),
        // Step 1b
        ("feed", "feed"), ("agreed", "agre"), ("plastered", "plaster"), ("bled", "bled"), ("motoring", "motor"),
        ("sing", "sing"), ("conflated", "conflat"), ("troubled", "troubl"), ("sized", "size"), ("hopping", "hop"),
        ("tanned", "tan"), ("falling", "fall"), ("hissing", "hiss"), ("fizzed", "fizz"), ("failing", "fail"), ("filing", "file"),
        // Step 1c
        ("happy", "happi"), ("sky", "sky"),
        // Step 2 (then the later steps)
        ("relational", "relat"), ("conditional", "condit"), ("rational", "ration"), ("valenci", "valenc"),
        ("hesitanci", "hesit"), ("digitizer", "digit"), ("conformabli", "conform"), ("radicalli", "radic"),
        ("differentli", "differ"), ("vileli", "vile"), ("analogousli", "analog"), ("vietnamization", "vietnam"),
        ("predication", "predic"), ("operator", "oper"), ("feudalism", "feudal"), ("decisiveness", "decis"),
        ("hopefulness", "hope"), ("callousness", "callous"), ("formaliti", "formal"), ("sensitiviti", "sensit"),
        ("sensibiliti", "sensibl"),
        // Step 3
        ("triplicate", "triplic"), ("formative", "form"), ("formalize", "formal"), ("electriciti", "electr"),
        ("electrical", "electr"), ("hopeful", "hope"), ("goodness", "good"),
        // Step 4
        ("revival", "reviv"), ("allowance", "allow"), ("inference", "infer"), ("airliner", "airlin"),
        ("gyroscopic", "gyroscop"), ("adjustable", "adjust"), ("defensible", "defens"), ("irritant", "irrit"),
        ("replacement", "replac"), ("adjustment", "adjust"), ("dependent", "depend"), ("adoption", "adopt"),
        ("homologou", "homolog"), ("communism", "commun"), ("activate", "activ"), ("angulariti", "angular"),
        ("homologous", "homolog"), ("effective", "effect"), ("bowdlerize", "bowdler"),
        // Step 5
        ("probate", "probat"), ("rate", "rate"), ("cease", "ceas"), ("controll", "control"), ("roll", "roll"),
        // The paper's closing examples, and the issue's
        ("generalizations", "gener"), ("oscillators", "oscil"), ("books", "book"), ("reading", "read"),
    ]

    @Test func paperExamples() {
        for (word, stem) in Self.paperExamples {
            #expect(PorterStemmer.stem(word) == stem, "\(word)")
        }
    }

    @Test func shortAndNonAsciiWordsAreKept() {
        #expect(PorterStemmer.stem("is") == "is")
        #expect(PorterStemmer.stem("café") == "café")
        #expect(PorterStemmer.stem("2024") == "2024")
    }
}

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

@Suite struct TextSearchSyntaxTests {
    @Test func everyForm() throws {
        #expect(try TextSearch.parse("doctor books") == .and([.word("doctor", prefix: false), .word("books", prefix: false)]))
        #expect(try TextSearch.parse("doctor AND books") == .and([.word("doctor", prefix: false), .word("books", prefix: false)]))
        #expect(try TextSearch.parse("\"is a doctor\"") == .phrase("is a doctor"))
        #expect(try TextSearch.parse("doc*") == .word("doc", prefix: true))
        #expect(try TextSearch.parse("cats OR dogs fish") == .or([.word("cats", prefix: false),
                                                                    .and([.word("dogs", prefix: false), .word("fish", prefix: false)])]))
        #expect(try TextSearch.parse("cats -dogs") == .and([.word("cats", prefix: false), .not(.word("dogs", prefix: false))]))
        #expect(try TextSearch.parse("cats NOT dogs") == .and([.word("cats", prefix: false), .not(.word("dogs", prefix: false))]))
        #expect(try TextSearch.parse("(cats OR dogs) -(fish OR birds)") == .and([
            .or([.word("cats", prefix: false), .word("dogs", prefix: false)]),
            .not(.or([.word("fish", prefix: false), .word("birds", prefix: false)])),
        ]))
        #expect(try TextSearch.parse("cats or dogs") == .and([.word("cats", prefix: false), .word("or", prefix: false), .word("dogs", prefix: false)]))
        #expect(try TextSearch.parse("e-mail") == .word("e-mail", prefix: false), "a hyphen inside a word is part of it")
        #expect(try TextSearch.parse("birds (cats OR -dogs)") == .and([.word("birds", prefix: false),
                                                                         .or([.word("cats", prefix: false), .not(.word("dogs", prefix: false))])]))
        #expect(try TextSearch.parse("cats -(-dogs)") == .and([.word("cats", prefix: false), .not(.not(.word("dogs", prefix: false)))]))
        #expect(try TextSearch.parse("a NEAR b") == .near([.word("a", prefix: false), .word("b", prefix: false)], distances: [10]))
        #expect(try TextSearch.parse("a NEAR/3 \"b c\" NEAR/0 d*") == .near([.word("a", prefix: false), .phrase("b c"), .word("d", prefix: true)],
                                                                            distances: [3, 0]))
        #expect(try TextSearch.parse("x -a NEAR b") == .and([.word("x", prefix: false),
                                                              .not(.near([.word("a", prefix: false), .word("b", prefix: false)], distances: [10]))]))
        #expect(try TextSearch.parse("name:fred comment:\"lives here\" t:x*") == .and([
            .field("name", .word("fred", prefix: false)), .field("comment", .phrase("lives here")), .field("t", .word("x", prefix: true)),
        ]))
        #expect(try TextSearch.parse("12:30 near") == .and([.word("12:30", prefix: false), .word("near", prefix: false)]),
                "a colon after digits is no property prefix; lower-case near is a word")
        #expect(try TextSearch.parse("cats -(-dogs)").summary == "cats -(-dogs)")
    }

    @Test(arguments: ["", "   ", "\"unclosed", "(cats", "cats)", "OR", "cats OR", "OR cats", "AND", "cats AND", "NOT",
                      "-", "cats -", "-dogs", "NOT dogs", "()", "\"\"", "\"...\"", "!!!", "do*g", "*", "cats (OR dogs)",
                      "(-dogs)", "cats OR -dogs", "-(-dogs)", "NEAR", "cats NEAR", "NEAR cats", "cats NEAR/x dogs", "cats NEAR/ dogs",
                      "cats NEAR/99999999999 dogs", "(a b) NEAR c", "a NEAR -b", "name:", "name: fred", "title:(a b)", "a NEAR NEAR b", String(repeating: "(", count: 100) + "a" + String(repeating: ")", count: 100)])
    func malformedSearchesThrowNamingTheText(search: String) {
        do {
            _ = try TextSearch.parse(search)
            Issue.record("parsed: \(search)")
        } catch let CofferError.invalidSearch(text, reason) {
            #expect(text == search)
            #expect(!reason.isEmpty)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func randomTextNeverTraps() {
        var random = SplitMix64(state: 3)
        let alphabet = Array("ab \"()-*ORANDNOTé\t:/1")
        for _ in 0..<5_000 {
            let text = String((0..<Int.random(in: 0..<20, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            _ = try? TextSearch.parse(text)
        }
    }
}
