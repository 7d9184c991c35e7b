import Foundation

// Arrays of every scalar type. Four wire kinds hold them all (see `FieldKind`):
// signed integers as `int64Array`, unsigned ones as `uint64Array`, `Float`, `Double` and
// `Date` (seconds since 2001) as `float64Array`, `UUID`s as `uuidArray` and `Bool`s as
// `boolArray`. A narrower element type reads the wide values back only when each fits
// exactly: anything else is a kind mismatch (damage), never a truncated value.

extension RecordWriter {
    /// The length, then `count` little-endian 8-byte values.
    @inlinable
    mutating func write8ByteArray(_ field: Int, _ kind: FieldKind, count: Int, _ element: (Int) -> UInt64) {
        header(field, kind, payload: 5 + 8 * count)
        appendLength(8 * count)
        for index in 0..<count { append(element(index)) }
    }
}

extension RecordReader {
    /// The 8-byte elements of an array field of `kind`, or nil for another kind or a length
    /// that is not a whole number of elements.
    @inlinable
    func read8ByteArray<T>(_ kind: FieldKind, _ element: (UInt64) -> T?) -> [T]? {
        guard self.kind == kind, payloadLength % 8 == 0 else { return nil }
        var result: [T] = []
        result.reserveCapacity(payloadLength / 8)
        for index in 0..<payloadLength / 8 {
            guard let value = element(load(UInt64.self, at: payload + 8 * index)) else { return nil }
            result.append(value)
        }
        return result
    }
}

// Signed integers other than `Int` (which has its own conformance).
extension RecordArrayElement where Self: FixedWidthInteger & SignedInteger {
    /// Writes the elements as 64-bit values.
    ///
    /// ```swift
    /// Int8.cofferWriteArray([1], field: 3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Self], field: Int, to writer: inout RecordWriter) {
        writer.write8ByteArray(field, .int64Array, count: array.count) { UInt64(bitPattern: Int64(array[$0])) }
    }
    /// Reads the elements, each of which must fit.
    ///
    /// ```swift
    /// Int8.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Self]? {
        reader.read8ByteArray(.int64Array) { Self(exactly: Int64(bitPattern: $0)) }
    }
}
extension Int8: RecordArrayElement {}
extension Int16: RecordArrayElement {}
extension Int32: RecordArrayElement {}
extension Int64: RecordArrayElement {}

// Unsigned integers.
extension RecordArrayElement where Self: FixedWidthInteger & UnsignedInteger {
    /// Writes the elements as 64-bit values.
    ///
    /// ```swift
    /// UInt8.cofferWriteArray([1], field: 3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Self], field: Int, to writer: inout RecordWriter) {
        writer.write8ByteArray(field, .uint64Array, count: array.count) { UInt64(array[$0]) }
    }
    /// Reads the elements, each of which must fit.
    ///
    /// ```swift
    /// UInt8.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Self]? {
        reader.read8ByteArray(.uint64Array) { Self(exactly: $0) }
    }
}
extension UInt: RecordArrayElement {}
extension UInt8: RecordArrayElement {}
extension UInt16: RecordArrayElement {}
extension UInt32: RecordArrayElement {}
extension UInt64: RecordArrayElement {}

extension Float: RecordArrayElement {
    /// Writes `[Float]` as doubles.
    ///
    /// ```swift
    /// Float.cofferWriteArray([1.5], field: 3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Float], field: Int, to writer: inout RecordWriter) {
        writer.write8ByteArray(field, .float64Array, count: array.count) { Double(array[$0]).bitPattern }
    }
    /// Reads `[Float]`; a double no `Float` holds exactly is damage (NaN stays NaN).
    /// ```swift
    /// Float.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Float]? {
        reader.read8ByteArray(.float64Array) { bits in
            let wide = Double(bitPattern: bits)
            return wide.isNaN ? Float.nan : Float(exactly: wide)
        }
    }
}

extension Date: RecordArrayElement {
    /// Writes `[Date]` as seconds since 2001.
    ///
    /// ```swift
    /// Date.cofferWriteArray([now], field: 3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Date], field: Int, to writer: inout RecordWriter) {
        writer.write8ByteArray(field, .float64Array, count: array.count) { array[$0].timeIntervalSinceReferenceDate.bitPattern }
    }
    /// Reads `[Date]`.
    ///
    /// ```swift
    /// Date.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Date]? {
        reader.read8ByteArray(.float64Array) { Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0)) }
    }
}

extension UUID: RecordArrayElement {
    /// Writes `[UUID]`: 16 bytes each.
    ///
    /// ```swift
    /// UUID.cofferWriteArray([id], field: 3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [UUID], field: Int, to writer: inout RecordWriter) {
        writer.header(field, .uuidArray, payload: 5 + 16 * array.count)
        writer.appendLength(16 * array.count)
        for element in array { withUnsafeBytes(of: element.uuid) { writer.append(bytes: $0) } }
    }
    /// Reads `[UUID]`.
    ///
    /// ```swift
    /// UUID.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [UUID]? {
        guard reader.kind == .uuidArray, reader.payloadLength % 16 == 0 else { return nil }
        return (0..<reader.payloadLength / 16).map { index in
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &value) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: reader.base + reader.payload + 16 * index, count: 16))
            }
            return UUID(uuid: value)
        }
    }
}

extension Bool: RecordArrayElement {
    /// Writes `[Bool]`: one byte each, 0 or 1.
    ///
    /// ```swift
    /// Bool.cofferWriteArray([true], field: 3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferWriteArray(_ array: [Bool], field: Int, to writer: inout RecordWriter) {
        writer.header(field, .boolArray, payload: 5 + array.count)
        writer.appendLength(array.count)
        for element in array { writer.append(UInt8(element ? 1 : 0)) }
    }
    /// Reads `[Bool]`; a byte other than 0 or 1 is damage.
    ///
    /// ```swift
    /// Bool.cofferReadArray(from: reader)
    /// ```
    @_spi(CofferGenerated)
    @inlinable
    public static func cofferReadArray(from reader: _RecordReader) -> [Bool]? {
        guard reader.kind == .boolArray else { return nil }
        var result: [Bool] = []
        result.reserveCapacity(reader.payloadLength)
        for index in 0..<reader.payloadLength {
            switch reader.load(UInt8.self, at: reader.payload + index) {
            case 0: result.append(false)
            case 1: result.append(true)
            default: return nil
            }
        }
        return result
    }
}

extension RecordWriter {
    /// Writes an array of enums as the array of their raw values; called by generated code.
    ///
    /// ```swift
    /// writer.write(6, entity.moods)
    /// ```
    @inlinable
    public mutating func write<V: RawRepresentable>(_ field: Int, _ values: [V]) where V.RawValue: RecordArrayElement {
        V.RawValue.cofferWriteArray(values.map(\.rawValue), field: field, to: &self)
    }

    /// Writes an optional array of enums; nil writes nothing.
    ///
    /// ```swift
    /// writer.write(7, entity.previousMoods)
    /// ```
    @inlinable
    public mutating func write<V: RawRepresentable>(_ field: Int, _ values: [V]?) where V.RawValue: RecordArrayElement {
        if let values { V.RawValue.cofferWriteArray(values.map(\.rawValue), field: field, to: &self) }
    }
}

@_spi(CofferGenerated)
extension RecordReader {
    /// Decodes the current field as an array of enums; a raw value without a case is damage.
    ///
    /// ```swift
    /// case 6: moods = try reader.value([Mood].self)
    /// ```
    @inlinable
    public func value<V: RawRepresentable>(_ type: [V].Type) throws -> [V] where V.RawValue: RecordArrayElement {
        guard let raws = V.RawValue.cofferReadArray(from: self) else { throw mismatch(String(describing: [V].self)) }
        return try raws.map { raw in
            guard let value = V(rawValue: raw) else { throw corrupt("\(V.self) has no case with raw value \(raw)") }
            return value
        }
    }
}
