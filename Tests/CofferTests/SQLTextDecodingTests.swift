@testable import Coffer
import CofferTestSupport
import Foundation
import Testing

/// The SQL reader's text decoding accepts exactly what `String(validating:as:)` accepts (its
/// model), with the same string: ASCII, multi-byte text, and none of the malformed forms
/// (a stray continuation byte, a cut sequence, an overlong form, a surrogate, bytes above
/// U+10FFFF), which are damage rather than text.
@Suite struct SQLTextDecodingTests {
    static func decode(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { SQLRecordReader.text($0) }
    }

    @Test func knownFormsMatchTheStandardLibrary() {
        let cases: [[UInt8]] = [
            [], Array("team12".utf8), Array("é".utf8), Array("e\u{301}".utf8), Array("🙂 ok".utf8),
            [0x80], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x61, 0xE2, 0x82],
        ]
        for bytes in cases {
            #expect(Self.decode(bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
        #expect(Self.decode([0xC3]) == nil)
        #expect(Self.decode(Array("é".utf8)) == "é")
    }

    @Test func randomBytesMatchTheStandardLibrary() {
        var random = SplitMix64(state: 23)
        // Mostly ASCII with some high bytes, as text and damage mix in practice.
        for _ in 0..<20_000 {
            let count = Int(random.next() % 12)
            let bytes = (0..<count).map { _ -> UInt8 in
                let roll = random.next()
                return roll % 3 == 0 ? UInt8(truncatingIfNeeded: roll >> 8) : UInt8(0x20 + roll % 0x5F)
            }
            #expect(Self.decode(bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }
}
