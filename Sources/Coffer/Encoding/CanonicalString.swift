import Foundation

/// The form in which Coffer compares stored strings: Unicode canonical equivalence, as
/// Swift's `String ==` does.
///
/// "é" stored precomposed (U+00E9) and "e" followed by U+0301 are one value for `==`, `<`,
/// index keys and unique constraints. Comparisons use the NFC form's UTF-8 bytes (whose byte
/// order is the order of Unicode scalar values). Pure ASCII text is already canonical, so it
/// is compared byte for byte without any conversion: only strings with non-ASCII bytes pay
/// for normalisation. Records keep the exact bytes the app stored.
enum CanonicalString {
    /// Calls `body` with the canonical UTF-8 of `utf8` (the same buffer when it is ASCII).
    static func withCanonicalUTF8<T>(_ utf8: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        guard !isASCII(utf8) else { return try body(utf8) }
        let normalized = Array(String(decoding: utf8, as: UTF8.self).precomposedStringWithCanonicalMapping.utf8)
        return try normalized.withUnsafeBytes(body)
    }

    /// The canonical UTF-8 of a Swift string.
    static func utf8(_ text: String) -> [UInt8] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return Array(text.utf8) }
        return Array(text.precomposedStringWithCanonicalMapping.utf8)
    }

    /// The canonical form of a Swift string.
    static func string(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        return text.precomposedStringWithCanonicalMapping
    }

    /// Orders two stored strings by their canonical forms.
    static func order(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        withCanonicalUTF8(a) { x in withCanonicalUTF8(b) { y in ByteSearch.order(x, y) } }
    }

    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where byte >= 0x80 { return false }
        return true
    }
}
