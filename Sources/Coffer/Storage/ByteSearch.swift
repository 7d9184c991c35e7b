import Foundation

/// Byte-sequence helpers in LMDB's key order (memcmp order, shorter first on a shared
/// prefix), shared by the layers that compare keys and stored bytes.
enum ByteSearch {
    /// memcmp order, shorter first on a shared prefix.
    static func order(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let count = min(a.count, b.count)
        if count > 0, let x = a.baseAddress, let y = b.baseAddress {
            let result = memcmp(x, y, count)
            if result != 0 { return result < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func order(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in order(x, y) } }
    }

    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count)
            where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }
}
