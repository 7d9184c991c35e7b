import Foundation

/// Where `IndexKey` and `IndexKeySet` write a key: an `[UInt8]` (keys kept as values: query
/// plans, unique checks, `coffer check`) or an ``IndexKeyBytes`` slot that a write
/// transaction reuses from put to put. Writers append; clearing is the caller's.
protocol IndexKeySink {
    mutating func append(_ byte: UInt8)
    mutating func append(contentsOf bytes: UnsafeRawBufferPointer)
}

extension Array: IndexKeySink where Element == UInt8 {}
