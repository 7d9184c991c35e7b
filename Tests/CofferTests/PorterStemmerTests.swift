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
