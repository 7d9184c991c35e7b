import Foundation

extension UUID {
    /// Parses the canonical text form, 36 characters: 8-4-4-4-12 hexadecimal digits (either
    /// case) separated by hyphens, and nothing else. `UUID(uuidString:)` gives the same value
    /// for these, but its formatted scan also accepts near-misses (a hyphen moved next to a
    /// digit reads as a minus sign) with a value the text does not say, and it dominated the
    /// parsing of pulled pages (every change names its object, and links their targets, by id).
    init?(canonicalText text: String) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        var count = 0
        for byte in text.utf8 {
            defer { count += 1 }
            if count == 8 || count == 13 || count == 18 || count == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt64(digit) }
            digits += 1
            guard digits <= 32 else { return nil }
        }
        guard count == 36, digits == 32 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { raw in
            raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        self.init(uuid: value)
    }
}
