@testable import Coffer
import Foundation
import Testing

/// The parsers that read pulled pages and imports: JSON strings (runs validated and appended
/// whole, escapes decoded) and UUIDs in their canonical text form, each against an
/// independent reference on random input.
@Suite struct TextParsingTests {
    /// A random string of ASCII, multi-byte, combining, astral and control scalars, written as
    /// JSON with a random mix of raw characters, short escapes and \u escapes (surrogate pairs
    /// for astral ones); parsing gives back exactly its scalars.
    @Test func jsonStringsParseToTheirScalars() throws {
        var generator = SplitMix64(state: 0x5EED_0031)
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\u{08}", "\u{0C}", "\n", "\r", "\t", "\u{00}",
                                      "\u{1F}", "é", "\u{0301}", "ß", "中", "\u{FFFD}", "\u{1F600}", "\u{10FFFF}", "\u{7F}"]
        for _ in 0..<2_000 {
            var expected = String.UnicodeScalarView()
            var json = "\""
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                let scalar = pool.randomElement(using: &generator) ?? "a"
                expected.append(scalar)
                json += Self.written(scalar, style: Int.random(in: 0...2, using: &generator))
            }
            json += "\""
            let parsed = try JSONParser.parse(Array(json.utf8))
            #expect(parsed == .string(String(expected)), "\(json)")
            guard case .string(let text) = parsed else { continue }
            #expect(Array(text.unicodeScalars) == Array(expected), "\(json)")
        }
    }

    @Test func malformedStringsAreRefused() {
        let bad: [[UInt8]] = [
            Array("\"abc".utf8), Array("\"a\\".utf8), Array("\"\\x\"".utf8), Array("\"\\u12\"".utf8),
            Array("\"\\uD800\"".utf8), Array("\"\\uDC00\"".utf8), Array("\"\\uD800\\u0041\"".utf8),
            [0x22, 0x61, 0x0A, 0x22],          // a raw control character
            [0x22, 0xC3, 0x22],                // a cut multi-byte sequence
            [0x22, 0x61, 0xFF, 0x62, 0x22],    // a byte that is never UTF-8
            [0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22],   // an encoded surrogate after an escape
        ]
        for bytes in bad {
            #expect(throws: JSONParser.Failure.self, "\(bytes)") { try JSONParser.parse(bytes) }
        }
    }

    /// Valid UUIDs in random case, and random near-misses of them (a character replaced,
    /// dropped or added, a hyphen moved, non-ASCII): the parser accepts exactly the canonical
    /// form (checked by a pattern), with Foundation's value for it. Foundation's formatted scan
    /// also accepts some near-misses (a hyphen moved next to a digit reads as a sign), with
    /// values that are not what the text says; those are refused here.
    @Test func uuidTextMatchesFoundation() {
        var generator = SplitMix64(state: 0x0055_1D)
        let alphabet = Array("0123456789abcdefABCDEFgG-xé ".unicodeScalars)
        for round in 0..<5_000 {
            var text = Array(UUID().uuidString.unicodeScalars).map { scalar in
                Bool.random(using: &generator) ? Unicode.Scalar(String(scalar).lowercased()) ?? scalar : scalar
            }
            switch round % 5 {
            case 0: break
            case 1: text[Int.random(in: 0..<text.count, using: &generator)] = alphabet.randomElement(using: &generator) ?? "x"
            case 2: text.remove(at: Int.random(in: 0..<text.count, using: &generator))
            case 3: text.insert(alphabet.randomElement(using: &generator) ?? "x", at: Int.random(in: 0...text.count, using: &generator))
            default:
                let hyphen = [8, 13, 18, 23].randomElement(using: &generator) ?? 8
                text.swapAt(hyphen, hyphen + (Bool.random(using: &generator) ? 1 : -1))
            }
            var string = ""
            string.unicodeScalars.append(contentsOf: text)
            let canonical = Self.isCanonical(string)
            #expect(UUID(canonicalText: string) == (canonical ? UUID(uuidString: string) : nil), "\(string)")
            if canonical { #expect(UUID(canonicalText: string) != nil, "\(string)") }
        }
        for string in ["", "-", String(repeating: "0", count: 36), "00000000-0000-0000-0000-000000000000",
                       "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "00000000-0000-0000-0000-0000000000000",
                       "{00000000-0000-0000-0000-000000000000}", "00000000000000000000000000000000"] {
            let canonical = Self.isCanonical(string)
            #expect(UUID(canonicalText: string) == (canonical ? UUID(uuidString: string) : nil), "\(string)")
        }
    }

    static func isCanonical(_ string: String) -> Bool {
        string.wholeMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) != nil
    }

    /// `scalar` as JSON string content: 0 raw (escaped where JSON requires), 1 a short escape
    /// where one exists, 2 a \u escape (a surrogate pair above the BMP).
    static func written(_ scalar: Unicode.Scalar, style: Int) -> String {
        let short: [Unicode.Scalar: String] = ["\"": "\\\"", "\\": "\\\\", "/": "\\/", "\u{08}": "\\b", "\u{0C}": "\\f",
                                               "\n": "\\n", "\r": "\\r", "\t": "\\t"]
        func unicodeEscape() -> String {
            if scalar.value > 0xFFFF {
                let value = scalar.value - 0x10000
                return String(format: "\\u%04X\\u%04x", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
            }
            return String(format: "\\u%04x", scalar.value)
        }
        let mustEscape = scalar == "\"" || scalar == "\\" || scalar.value < 0x20
        switch style {
        case 0 where !mustEscape: return String(scalar)
        case 0, 1: return short[scalar] ?? unicodeEscape()
        default: return unicodeEscape()
        }
    }
}
