import Foundation

/// Appends fields to a record; generated `_cofferEncode` functions drive it.
///
/// The writer works on one reusable buffer per store, so encoding an object allocates
/// nothing. Field numbers are the property's position in the entity schema; the writer
/// translates them to the stable property ids of the store's catalog.
///
/// ```swift
/// static func _cofferEncode(_ entity: inout Person, to writer: inout RecordWriter) {
///     writer.write(1, entity.firstName)
///     writer.write(2, entity.age)
/// }
/// ```
@_spi(CofferGenerated)
public struct RecordWriter {
    @usableFromInline var base: UnsafeMutableRawPointer
    @usableFromInline var capacity: Int
    @usableFromInline var count: Int
    /// Stored property id for each schema position.
    @usableFromInline let storedIds: UnsafePointer<UInt16>
    /// The deepest nesting level of the document field being written (see `DocumentCodec`).
    var documentLevels = 0
    /// The first document field nested deeper than the reader accepts, by schema position,
    /// and its depth: the put refuses the object (encoding cannot throw).
    var tooDeepDocument: (field: Int, depth: Int)?

    init(buffer: RecordBuffer, storedIds: UnsafePointer<UInt16>) {
        self.base = buffer.base
        self.capacity = buffer.capacity
        self.count = 1
        self.storedIds = storedIds
        base.storeBytes(of: recordFormatVersion, as: UInt8.self)
    }

    /// The encoded bytes so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    @usableFromInline
    mutating func grow(_ extra: Int) {
        var newCapacity = Swift.max(capacity * 2, 256)
        while newCapacity < count + extra { newCapacity *= 2 }
        guard let grown = realloc(base, newCapacity) else {
            // Out of memory: there is nothing sensible to return to the caller.
            preconditionFailure("Coffer: cannot allocate \(newCapacity) bytes for a record")
        }
        base = grown
        capacity = newCapacity
    }

    /// Writes the format 2 header of the field at schema position `field` and reserves room
    /// for it and `payload` more bytes (a variable kind's length included: at most 5).
    @inlinable @inline(__always)
    mutating func header(_ field: Int, _ kind: FieldKind, payload: Int) {
        reserve(4 + payload)
        appendTag(storedIds[field], kind)
    }

    /// A format 2 tag: the property id and kind in two bytes, or the escape and the id in
    /// four for ids from 2047 on. The caller has reserved 4 bytes.
    @inlinable @inline(__always)
    mutating func appendTag(_ storedId: UInt16, _ kind: FieldKind) {
        if Int(storedId) < escapedPropertyId {
            append(UInt16(truncatingIfNeeded: Int(storedId) << 5) | UInt16(kind.rawValue))
        } else {
            append(UInt16(truncatingIfNeeded: escapedPropertyId << 5) | UInt16(kind.rawValue))
            append(storedId)
        }
    }

    /// Writes a variable kind's payload length: one byte below 255, else the marker and a
    /// `u32`. The caller has reserved 5 bytes.
    @inlinable @inline(__always)
    mutating func appendLength(_ length: Int) {
        if length < Int(longLengthMarker) {
            append(UInt8(truncatingIfNeeded: length))
        } else {
            append(longLengthMarker)
            append(UInt32(truncatingIfNeeded: length))
        }
    }

    /// Writes the long form of a length that is known only after the payload; returns where
    /// its `u32` goes, for ``endLength(at:)``. The caller has reserved 5 bytes.
    @inlinable
    mutating func beginLength() -> Int {
        append(longLengthMarker)
        let offset = count
        append(UInt32(0))
        return offset
    }

    /// Stores the length of the payload written since ``beginLength()`` returned `offset`.
    @inlinable
    mutating func endLength(at offset: Int) {
        let length = UInt32(truncatingIfNeeded: count - offset - 4)
        base.storeBytes(of: length.littleEndian, toByteOffset: offset, as: UInt32.self)
    }

    @inlinable @inline(__always)
    mutating func append<T: FixedWidthInteger>(_ value: T) {
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    @inlinable
    mutating func append(bytes: UnsafeRawBufferPointer) {
        if let source = bytes.baseAddress, bytes.count > 0 {
            (base + count).copyMemory(from: source, byteCount: bytes.count)
        }
        count += bytes.count
    }

    /// Appends a field exactly as another record holds it (a field of a property the
    /// running build does not declare, carried through an update).
    mutating func appendRaw(_ fieldId: UInt16, _ field: RecordFields.Field) {
        reserve(4 + 5 + field.payload.count)
        appendTag(fieldId, field.kind)
        if field.kind.fixedSize == nil { appendLength(field.payload.count) }
        append(bytes: field.payload)
    }

    /// Writes a field; called by generated code.
    ///
    /// ```swift
    /// writer.write(2, entity.age)
    /// ```
    @inlinable @inline(__always)
    public mutating func write<V: RecordValue>(_ field: Int, _ value: V) {
        value.cofferWrite(field, to: &self)
    }

    /// Writes an optional field; nil writes nothing.
    ///
    /// ```swift
    /// writer.write(3, entity.birthday)
    /// ```
    @inlinable @inline(__always)
    public mutating func write<V: RecordValue>(_ field: Int, _ value: V?) {
        if let value { value.cofferWrite(field, to: &self) }
    }

    /// Writes an enum as its raw value.
    ///
    /// ```swift
    /// writer.write(4, entity.color)
    /// ```
    @inlinable @inline(__always)
    public mutating func write<V: RawRepresentable>(_ field: Int, _ value: V) where V.RawValue: RecordValue {
        value.rawValue.cofferWrite(field, to: &self)
    }

    /// Writes an optional enum as its raw value; nil writes nothing.
    ///
    /// ```swift
    /// writer.write(5, entity.previousColor)
    /// ```
    @inlinable @inline(__always)
    public mutating func write<V: RawRepresentable>(_ field: Int, _ value: V?) where V.RawValue: RecordValue {
        if let value { value.rawValue.cofferWrite(field, to: &self) }
    }

    // MARK: Typed field writers used by RecordValue conformances

    @inlinable @inline(__always)
    mutating func writeSigned(_ field: Int, _ value: Int64) {
        if let narrow = Int8(exactly: value) {
            header(field, .int8, payload: 1); append(narrow)
        } else if let narrow = Int16(exactly: value) {
            header(field, .int16, payload: 2); append(narrow)
        } else if let narrow = Int32(exactly: value) {
            header(field, .int32, payload: 4); append(narrow)
        } else {
            header(field, .int64, payload: 8); append(value)
        }
    }

    @inlinable @inline(__always)
    mutating func writeUnsigned(_ field: Int, _ value: UInt64) {
        if let narrow = UInt8(exactly: value) {
            header(field, .uint8, payload: 1); append(narrow)
        } else if let narrow = UInt16(exactly: value) {
            header(field, .uint16, payload: 2); append(narrow)
        } else if let narrow = UInt32(exactly: value) {
            header(field, .uint32, payload: 4); append(narrow)
        } else {
            header(field, .uint64, payload: 8); append(value)
        }
    }

    @inlinable
    mutating func writeBytes(_ field: Int, _ bytes: UnsafeRawBufferPointer) {
        header(field, .bytes, payload: 5 + bytes.count)
        appendLength(bytes.count)
        append(bytes: bytes)
    }
}

/// The growable scratch memory a store encodes records into.
final class RecordBuffer {
    // Used by one writer at a time (under the store's writer lock): no runtime access checks.
    @exclusivity(unchecked) var base: UnsafeMutableRawPointer
    @exclusivity(unchecked) var capacity: Int

    init(capacity: Int = 4096) {
        // malloc'd (not Swift-allocated) because the writer grows it with realloc.
        guard let memory = malloc(capacity) else {
            preconditionFailure("Coffer: cannot allocate a record buffer")
        }
        self.base = memory
        self.capacity = capacity
    }

    /// Takes back the (possibly reallocated) memory after encoding.
    func adopt(_ writer: RecordWriter) {
        base = writer.base
        capacity = writer.capacity
    }

    deinit { free(base) }
}
