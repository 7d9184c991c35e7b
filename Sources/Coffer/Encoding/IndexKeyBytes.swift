import Foundation

/// One index key (or an element index's key set) built for a put or a remove, in raw memory
/// the transaction keeps: appending is a capacity check and a store, clearing sets the
/// count. (An `[UInt8]` pays a uniqueness check per append and more to clear, on every
/// insert.)
///
/// Invariants: `count <= capacity`; `base` is nil exactly when `capacity` is 0. The value
/// owns its memory, so it is never copied: it lives in `Transaction`'s key slots, is reached
/// through a pointer (`WriteScratch.keyPair`) and is freed with the transaction.
struct IndexKeyBytes: IndexKeySink {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private var capacity = 0

    /// The key's bytes; valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    mutating func removeAll() { count = 0 }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        base.unsafelyUnwrapped.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
        checkInvariants()
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if capacity - count < bytes.count { grow(bytes.count) }
        (base.unsafelyUnwrapped + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
        checkInvariants()
    }

    /// Whether both keys hold the same bytes.
    func hasSameBytes(as other: IndexKeyBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let a = base, let b = other.base else { return true }
        return memcmp(a, b, count) == 0
    }

    private mutating func grow(_ extra: Int) {
        // Keys are short (strings are cut at 400 bytes); sets of array elements can be long.
        let newCapacity = Swift.max(64, capacity * 2, count + extra)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        if let base, count > 0 { grown.copyMemory(from: base, byteCount: count) }
        base?.deallocate()
        base = grown
        capacity = newCapacity
        checkInvariants()
    }

    /// Checks the invariants above in debug builds (nothing in release).
    @inline(__always)
    func checkInvariants() {
        assert(count >= 0 && count <= capacity && (base == nil) == (capacity == 0), "an index key stays within its memory")
    }

    /// Frees the memory; the value must not be used afterwards.
    func deallocate() { base?.deallocate() }
}

/// The old and new index key of one index for the object being put or removed.
struct IndexKeyPair {
    var old = IndexKeyBytes()
    var new = IndexKeyBytes()
    /// Set by a put when the indexed field holds the same bytes as before (its entries stay).
    var isUnchanged = false
}
