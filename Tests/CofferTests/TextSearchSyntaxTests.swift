@testable import Coffer
import Foundation
import Testing

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
