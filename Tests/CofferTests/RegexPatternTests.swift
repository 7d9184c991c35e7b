@testable import Coffer
import Foundation
import Testing

/// `$regex` patterns: a matcher whose work is bounded by text length × pattern size, so a
/// pattern that makes a backtracking engine take exponential time answers at once.
@Suite struct RegexPatternTests {
    func matches(_ pattern: String, _ text: String) throws -> Bool {
        try RegexPattern(pattern).matches(text)
    }

    @Test func patternsThatBacktrackCatastrophicallyFinishWithTheRightAnswer() throws {
        // Each of these takes about 2^n steps in a backtracking engine on n a's and no match.
        let text = String(repeating: "a", count: 5_000) + "b"
        #expect(try !matches("(a+)+$", text))
        #expect(try !matches("^(a|aa)+$", text))
        #expect(try !matches("(a*)*c", text))
        #expect(try !matches("^(a|a?)+$", text))
        #expect(try !matches("(x+x+)+y", String(repeating: "x", count: 5_000)))
        #expect(try matches("(a+)+b$", text))
        #expect(try matches("(a+)+$", String(repeating: "a", count: 5_000)))
    }

    /// Through a selector query on stored data: the query answers instead of hanging.
    @Test func aPathologicalSelectorRegexAnswers() throws {
        try withStore { (store: Store) throws in
            let pals = store.box(for: Pal.self)
            try pals.put(Pal(name: String(repeating: "a", count: 3_000) + "b", age: 1))
            try pals.put(Pal(name: "aaaa", age: 2))
            let found = try pals.query(selector: #"{"name": {"$regex": "^(a+)+$"}}"#).build().find()
            #expect(found.map(\.age) == [2])
        }
    }

    @Test func theSupportedSyntax() throws {
        #expect(try matches("^m.k", "mike"))
        #expect(try !matches("^m.k", "amike"))
        #expect(try matches("doc(tor|ent)", "a docent"))
        #expect(try matches("colou?r", "color") && matches("colou?r", "colour"))
        #expect(try matches("^a{2,3}$", "aaa") && !matches("^a{2,3}$", "aaaa") && !matches("^a{2,3}$", "a"))
        #expect(try matches("^a{2,}$", "aaaaa") && !matches("^a{2,}$", "a"))
        #expect(try matches("^a{2}$", "aa") && !matches("^a{2}$", "aaa"))
        #expect(try matches("x{,2}", "x{,2}"), "a brace that is no repetition is a literal")
        #expect(try matches("\\d+", "abc 42") && !matches("\\d", "abc"))
        #expect(try matches("^\\w+\\s\\w+$", "hello world") && !matches("^\\W", "hello"))
        #expect(try matches("[[:alpha:]]", "1a") && !matches("[[:alpha:]]", "12"))
        #expect(try matches("\\p{Lu}", "abC") && !matches("\\p{Lu}", "abc"))
        #expect(try matches("(?i)MIKE", "mike") && matches("(?i:M)ike", "mike") && !matches("(?i:M)IKE", "mike"))
        #expect(try matches("(?i)[a-c]", "B") && !matches("[a-c]", "B"))
        #expect(try matches("[^a-c]", "abd") && !matches("[^a-c]", "abc"))
        #expect(try matches("\\bdoc", "a doctor") && !matches("\\bdoc", "adoc"))
        #expect(try matches("a\\.b", "a.b") && !matches("a\\.b", "axb"))
        #expect(try matches("^a.b$", "a\u{E9}b"), "one Unicode scalar")
        #expect(try !matches("a.b", "a\nb") && matches("(?s)a.b", "a\nb"))
        #expect(try matches("b$", "ab\n") && !matches("b\\z", "ab\n"))
        #expect(try matches("(?m)^b$", "a\nb\nc") && !matches("^b$", "a\nb\nc"))
        #expect(try matches("(?<name>ab)+c", "ababc") && matches("\\x41\\u00e9\\x{1F600}", "A\u{E9}\u{1F600}"))
        #expect(try matches("[a\\-z]", "-") && matches("[]a]", "]") && matches("[a-]", "-"))
        #expect(try matches("", "anything") && matches("a|", "b"))
        #expect(try matches("()*x", "x") && matches("(a*)*", ""))
    }

    @Test(arguments: ["(a)\\1", "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "(?>a)", "a*+", "(", "a)", "[a", "*a", "a{3,2}",
                      "(a{1000}){1000}", "a{1001}", "a**", "a+*", "a*{2}", "a?*?", "a(?#unclosed", "((((){1000}){1000}){1000}){1000}",
                      String(repeating: "a", count: 30_000), "\\q", "\\p{Nope}", "(?z)", "[z-a]", "\\", "\\x{110000}",
                      String(repeating: "(", count: 200) + String(repeating: ")", count: 200)])
    func unsupportedOrMalformedPatternsAreRefused(pattern: String) {
        #expect(throws: RegexPattern.SyntaxError.self, "\(pattern)") { try RegexPattern(pattern) }
    }

    /// Random patterns over a small alphabet against Swift's `Regex` (a backtracking engine,
    /// fine on short texts), on random short texts. Without `\b` and `[:upper:]`, where the
    /// two differ on purpose: `\b` here is PCRE's (between a word and a non-word scalar, never
    /// at the ends of an empty text), Swift's is Unicode's word break; under `(?i)` PCRE's
    /// `[:upper:]` matches either case.
    @Test(arguments: [21, 22] as [UInt64])
    func randomPatternsAgreeWithSwiftRegex(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        func pattern(_ depth: Int) -> String {
            switch Int.random(in: 0..<(depth == 0 ? 6 : 12), using: &random) {
            case 0, 1: return ["a", "b", "A"].randomElement(using: &random)!
            case 2: return "."
            case 3: return ["[ab]", "[^a]", "[a-b]", "\\w", "\\d", "[[:digit:]]"].randomElement(using: &random)!
            case 4: return ["^", "$"].randomElement(using: &random)!
            case 5: return "c"
            case 6, 7: return pattern(depth - 1) + pattern(depth - 1)
            case 8: return "(" + pattern(depth - 1) + "|" + pattern(depth - 1) + ")"
            case 9: return "(?:" + pattern(depth - 1) + ")" + ["*", "+", "?", "{1,2}", "*?", "{2}"].randomElement(using: &random)!
            case 10: return "(?i:" + pattern(depth - 1) + ")"
            default: return "(" + pattern(depth - 1) + ")" + ["*", "+", "?"].randomElement(using: &random)!
            }
        }
        var checked = 0
        for _ in 0..<300 {
            let source = pattern(3)
            let ours = try RegexPattern(source)
            let theirs = try Regex(source)
            for _ in 0..<10 {
                let text = String((0..<Int.random(in: 0...6, using: &random)).map { _ in "abA1 ".randomElement(using: &random)! })
                #expect(ours.matches(text) == text.contains(theirs), "\(source) on \(text)")
                checked += 1
            }
        }
        print("Regex (seed \(seed)): \(checked) pattern/text pairs agree with Swift Regex")
    }
}
