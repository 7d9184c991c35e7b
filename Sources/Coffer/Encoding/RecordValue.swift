import Foundation

/// A value type Coffer can store in a record field.
///
/// Coffer conforms the supported types (Bool, the integer and floating-point types, String,
/// Date, Data, UUID and arrays of String, Int and Double); enums are stored through their
/// raw value. Do not conform your own types: the generator only accepts the supported ones.
///
/// ```swift
/// writer.write(1, "Ada")            // String: RecordValue
/// let age = try reader.value(Int.self)
/// ```
public protocol RecordValue: Sendable {
    /// Appends this value as field `field` (a schema position).
    ///
    /// ```swift
    /// 42.cofferWrite(2, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    func cofferWrite(_ field: Int, to writer: inout RecordWriter)

    /// Reads the reader's current field, or nil when its stored kind cannot represent `Self`.
    ///
    /// ```swift
    /// Int.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    static func cofferRead(from reader: _RecordReader) -> Self?
}

extension Bool: RecordValue {
    /// Writes a Bool field.
    ///
    /// ```swift
    /// true.cofferWrite(1, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        writer.header(field, self ? .boolTrue : .boolFalse, payload: 0)
    }
    /// Reads a Bool field.
    ///
    /// ```swift
    /// Bool.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Bool? {
        switch reader.kind {
        case .boolTrue: return true
        case .boolFalse: return false
        default: return nil
        }
    }
}

// Signed integers share one encoding: the narrowest signed kind that holds the value.
extension RecordValue where Self: FixedWidthInteger & SignedInteger {
    /// Writes a signed integer field.
    ///
    /// ```swift
    /// 42.cofferWrite(2, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        writer.writeSigned(field, Int64(self))
    }
    /// Reads a signed integer field.
    ///
    /// ```swift
    /// Int.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Self? {
        reader.signedValue.flatMap { Self(exactly: $0) }
    }
}

// Unsigned integers share one encoding: the narrowest unsigned kind that holds the value.
extension RecordValue where Self: FixedWidthInteger & UnsignedInteger {
    /// Writes an unsigned integer field.
    ///
    /// ```swift
    /// UInt8(7).cofferWrite(2, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        writer.writeUnsigned(field, UInt64(self))
    }
    /// Reads an unsigned integer field.
    ///
    /// ```swift
    /// UInt64.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Self? {
        reader.unsignedValue.flatMap { Self(exactly: $0) }
    }
}

extension Int: RecordValue {}
extension Int8: RecordValue {}
extension Int16: RecordValue {}
extension Int32: RecordValue {}
extension Int64: RecordValue {}
extension UInt: RecordValue {}
extension UInt8: RecordValue {}
extension UInt16: RecordValue {}
extension UInt32: RecordValue {}
extension UInt64: RecordValue {}

extension Float: RecordValue {
    /// Writes a Float field (bit pattern, so NaN payloads survive).
    ///
    /// ```swift
    /// Float(1.5).cofferWrite(3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        writer.header(field, .float32, payload: 4)
        writer.append(bitPattern)
    }
    /// Reads a Float field.
    ///
    /// ```swift
    /// Float.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Float? {
        guard reader.kind == .float32 else { return nil }
        return Float(bitPattern: reader.load(UInt32.self, at: reader.payload))
    }
}

extension Double: RecordValue {
    /// Writes a Double field (bit pattern).
    ///
    /// ```swift
    /// 2.5.cofferWrite(3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        writer.header(field, .float64, payload: 8)
        writer.append(bitPattern)
    }
    /// Reads a Double field, widening a stored Float.
    ///
    /// ```swift
    /// Double.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Double? {
        reader.doubleValue
    }
}

extension Date: RecordValue {
    /// Writes a Date as its seconds since the reference date (exact round trip).
    /// ```swift
    /// Date().cofferWrite(4, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        timeIntervalSinceReferenceDate.cofferWrite(field, to: &writer)
    }
    /// Reads a Date field.
    ///
    /// ```swift
    /// Date.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Date? {
        reader.doubleValue.map(Date.init(timeIntervalSinceReferenceDate:))
    }
}

extension String: RecordValue {
    /// Writes a String as UTF-8.
    ///
    /// ```swift
    /// "Ada".cofferWrite(1, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        // Native and small strings lend their UTF-8 without a copy of the string.
        let written: Void? = utf8.withContiguousStorageIfAvailable { writer.writeBytes(field, UnsafeRawBufferPointer($0)) }
        if written != nil { return }
        var string = self
        string.withUTF8 { writer.writeBytes(field, UnsafeRawBufferPointer($0)) }
    }
    /// Reads a String field; invalid UTF-8 is repaired, never trapped on.
    /// ```swift
    /// String.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> String? {
        guard reader.kind == .bytes else { return nil }
        return String(recordBytes: reader.payloadBytes)
    }
}

extension Data: RecordValue {
    /// Writes Data as raw bytes.
    ///
    /// ```swift
    /// Data([1, 2]).cofferWrite(5, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        #if canImport(Darwin)
        withUnsafeBytes { writer.writeBytes(field, $0) }
        #else
        // Through `bytes` (a RawSpan, available on every Linux toolchain Coffer supports, on
        // Apple platforms only from the 2025 releases): Foundation makes one runtime
        // exclusivity check fewer per Data field than through `withUnsafeBytes`.
        bytes.withUnsafeBytes { writer.writeBytes(field, $0) }
        #endif
    }
    /// Reads a Data field.
    ///
    /// ```swift
    /// Data.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> Data? {
        guard reader.kind == .bytes else { return nil }
        return Data(recordBytes: reader.payloadBytes)
    }
}

extension UUID: RecordValue {
    /// Writes the 16 bytes of a UUID.
    ///
    /// ```swift
    /// UUID().cofferWrite(6, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        writer.header(field, .uuid, payload: 16)
        withUnsafeBytes(of: uuid) { writer.append(bytes: $0) }
    }
    /// Reads a UUID field.
    ///
    /// ```swift
    /// UUID.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> UUID? {
        guard reader.kind == .uuid else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: reader.payloadBytes) }
        return UUID(uuid: value)
    }
}

/// Element types of storable arrays: String, Int and Double.
///
/// ```swift
/// var tags: [String] = []     // stored; [Date] would be a build error
/// ```
public protocol RecordArrayElement: Sendable {
    /// Writes a whole array field.
    ///
    /// ```swift
    /// String.cofferWriteArray(["a"], field: 7, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    static func cofferWriteArray(_ array: [Self], field: Int, to writer: inout RecordWriter)
    /// Reads a whole array field.
    ///
    /// ```swift
    /// String.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    static func cofferReadArray(from reader: _RecordReader) -> [Self]?
}

extension Array: RecordValue where Element: RecordArrayElement {
    /// Writes an array field.
    ///
    /// ```swift
    /// ["a", "b"].cofferWrite(7, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        Element.cofferWriteArray(self, field: field, to: &writer)
    }
    /// Reads an array field.
    ///
    /// ```swift
    /// [String].cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable @inline(__always)
    public static func cofferRead(from reader: _RecordReader) -> [Element]? {
        Element.cofferReadArray(from: reader)
    }
}

extension String: RecordArrayElement {
    /// Writes `[String]`: a count, then each string's length and UTF-8 bytes.
    /// ```swift
    /// String.cofferWriteArray(["a"], field: 7, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [String], field: Int, to writer: inout RecordWriter) {
        writer.header(field, .stringArray, payload: 9)
        let lengthOffset = writer.beginLength()
        writer.append(UInt32(truncatingIfNeeded: array.count))
        for element in array {
            var element = element
            element.withUTF8 { utf8 in
                writer.reserve(4 + utf8.count)
                writer.append(UInt32(truncatingIfNeeded: utf8.count))
                writer.append(bytes: UnsafeRawBufferPointer(utf8))
            }
        }
        writer.endLength(at: lengthOffset)
    }
    /// Reads `[String]`, checking every length against the field's end.
    /// ```swift
    /// String.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [String]? {
        guard reader.kind == .stringArray, reader.payloadLength >= 4 else { return nil }
        let end = reader.payload + reader.payloadLength
        let count = Int(reader.load(UInt32.self, at: reader.payload))
        // Each element needs at least its 4-byte length: a larger count is damage.
        guard count <= (reader.payloadLength - 4) / 4 else { return nil }
        var result: [String] = []
        result.reserveCapacity(count)
        var offset = reader.payload + 4
        for _ in 0..<count {
            guard end - offset >= 4 else { return nil }
            let length = Int(reader.load(UInt32.self, at: offset))
            offset += 4
            guard end - offset >= length else { return nil }
            result.append(String(decoding: UnsafeRawBufferPointer(start: reader.base + offset, count: length), as: UTF8.self))
            offset += length
        }
        return result
    }
}

extension Int: RecordArrayElement {
    /// Writes `[Int]` as little-endian 64-bit values.
    /// ```swift
    /// Int.cofferWriteArray([1, 2], field: 8, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Int], field: Int, to writer: inout RecordWriter) {
        writer.header(field, .int64Array, payload: 5 + 8 * array.count)
        writer.appendLength(8 * array.count)
        for element in array { writer.append(Int64(element)) }
    }
    /// Reads `[Int]`.
    ///
    /// ```swift
    /// Int.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Int]? {
        guard reader.kind == .int64Array, reader.payloadLength % 8 == 0 else { return nil }
        let count = reader.payloadLength / 8
        return (0..<count).map { Int(reader.load(Int64.self, at: reader.payload + 8 * $0)) }
    }
}

extension Double: RecordArrayElement {
    /// Writes `[Double]` as little-endian bit patterns.
    /// ```swift
    /// Double.cofferWriteArray([1.5], field: 9, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Double], field: Int, to writer: inout RecordWriter) {
        writer.header(field, .float64Array, payload: 5 + 8 * array.count)
        writer.appendLength(8 * array.count)
        for element in array { writer.append(element.bitPattern) }
    }
    /// Reads `[Double]`.
    ///
    /// ```swift
    /// Double.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Double]? {
        guard reader.kind == .float64Array, reader.payloadLength % 8 == 0 else { return nil }
        let count = reader.payloadLength / 8
        return (0..<count).map { Double(bitPattern: reader.load(UInt64.self, at: reader.payload + 8 * $0)) }
    }
}
