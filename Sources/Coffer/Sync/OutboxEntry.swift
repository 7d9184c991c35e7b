import Foundation

/// One entry of the sync outbox: which object changed (entity, sync id), how (upsert or
/// delete), and which fields, each with the clock value of its latest change. Field values
/// are not stored: a pusher reads them from the current record, so a resend always sends the
/// latest state.
///
/// Stored under its mutation id (`mid`, 8 bytes big-endian) in `sync.outbox`, as
/// version 1: `[1, op, flags, entity id (4), sync id (16), clock (8), field count (2),
/// count × (stored field id (2), clock (8))]`, integers big-endian. Bytes read back are
/// checked: anything else is a damaged store, never a trap.
///
/// A *whole* creation (flag 2, with the creation flag, no fields listed) stands for every
/// field the object holds when a pusher reads it, all at the entry's clock. Objects created
/// with derived sync ids get one: it costs no field list, and while no pusher took it, later
/// local changes of the object need no outbox write at all (the server has never seen the
/// object, so no other replica can have written any of its fields: the values a pusher
/// reads are the latest, and the creation's clock orders them correctly against every
/// later change, which is made after this clock by any replica that saw the object).
/// Stores that may hold whole creations are marked with catalog format 3, which earlier
/// builds refuse.
struct OutboxEntry: Equatable {
    enum Operation: UInt8 {
        case upsert = 0
        case delete = 1
    }

    static let version: UInt8 = 1
    private static let headerSize = 33
    /// Flag bit: the entry holds the object's creation (nothing of it was handed to a pusher).
    private static let createdFlag: UInt8 = 1
    /// Flag bit: a whole creation (see above).
    private static let wholeFlag: UInt8 = 2

    var operation: Operation
    /// Whether the entry includes the object's creation: a delete merged into such an entry
    /// drops it (the server never saw the object).
    var isCreation: Bool
    /// Whether the entry is a whole creation: it lists no fields and stands for all of them,
    /// at `clock`.
    var isWhole: Bool
    /// The catalog id of the entity.
    var entityId: UInt32
    var syncId: UUID
    /// The clock of the entry's latest change.
    var clock: UInt64
    /// Changed fields by stored field id, with the clock of their latest change, in id order.
    var fields: [(id: UInt16, clock: UInt64)]

    static func == (lhs: OutboxEntry, rhs: OutboxEntry) -> Bool {
        lhs.operation == rhs.operation && lhs.isCreation == rhs.isCreation && lhs.isWhole == rhs.isWhole && lhs.entityId == rhs.entityId
            && lhs.syncId == rhs.syncId && lhs.clock == rhs.clock
            && lhs.fields.map(\.id) == rhs.fields.map(\.id) && lhs.fields.map(\.clock) == rhs.fields.map(\.clock)
    }

    /// Reads an entry stored under `mid`.
    ///
    /// - Throws: ``CofferError/damagedStore(part:reason:)`` (`.sync`) naming the mid when the
    ///   bytes are not a version-1 entry.
    init(decoding bytes: UnsafeRawBufferPointer, mid: UInt64) throws {
        func damage(_ reason: String) -> CofferError {
            CofferError.damagedStore(part: .sync, reason: "the outbox entry \(mid) \(reason)")
        }
        guard bytes.count >= Self.headerSize else { throw damage("has \(bytes.count) bytes, fewer than an entry's \(Self.headerSize)") }
        guard bytes[0] == Self.version else { throw damage("has format version \(bytes[0]); this build reads \(Self.version)") }
        guard let operation = Operation(rawValue: bytes[1]) else { throw damage("has the unknown operation \(bytes[1])") }
        let count = Int(Self.read(UInt16.self, bytes, at: 31))
        if let problem = Self.flagProblem(bytes[2], operation: operation, fieldCount: count) { throw damage(problem) }
        guard bytes.count == Self.headerSize + count * 10 else {
            throw damage("has \(bytes.count) bytes, not the \(Self.headerSize + count * 10) its \(count) fields need")
        }
        self.operation = operation
        isCreation = bytes[2] & Self.createdFlag != 0
        isWhole = bytes[2] & Self.wholeFlag != 0
        entityId = Self.read(UInt32.self, bytes, at: 3)
        guard let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: bytes[7..<23])) else { throw damage("has no sync id") }
        self.syncId = syncId
        clock = Self.read(UInt64.self, bytes, at: 23)
        var fields: [(id: UInt16, clock: UInt64)] = []
        fields.reserveCapacity(count)
        var previous: UInt16?
        for index in 0..<count {
            let offset = Self.headerSize + index * 10
            let id = Self.read(UInt16.self, bytes, at: offset)
            // In id order, each once: what merging relies on.
            if let previous, id <= previous { throw damage("lists its fields out of order") }
            previous = id
            fields.append((id, Self.read(UInt64.self, bytes, at: offset + 2)))
        }
        self.fields = fields
    }

    init(operation: Operation, isCreation: Bool, isWhole: Bool = false, entityId: UInt32, syncId: UUID, clock: UInt64,
         fields: [(id: UInt16, clock: UInt64)]) {
        self.operation = operation
        self.isCreation = isCreation
        self.isWhole = isWhole
        self.entityId = entityId
        self.syncId = syncId
        self.clock = clock
        self.fields = fields
    }

    /// Why `flags` cannot be those of an entry of `operation` listing `fieldCount` fields, or
    /// nil when they can: only known bits, and a whole creation is an upsert's creation
    /// that lists nothing.
    private static func flagProblem(_ flags: UInt8, operation: Operation, fieldCount: Int) -> String? {
        guard flags & ~(createdFlag | wholeFlag) == 0 else { return "has unknown flags \(flags)" }
        guard flags & wholeFlag != 0 else { return nil }
        guard flags & createdFlag != 0, operation == .upsert, fieldCount == 0 else {
            return "is marked whole but is not a creation without listed fields (flags \(flags), \(fieldCount) fields)"
        }
        return nil
    }

    /// The size of a whole creation.
    static let wholeCreationSize = headerSize

    /// Writes a whole creation into `bytes` (exactly ``wholeCreationSize`` of them).
    @inline(__always)
    static func encodeWholeCreation(into bytes: UnsafeMutableRawBufferPointer, entityId: UInt32, syncId: UUID, clock: UInt64) {
        bytes[0] = version
        bytes[1] = Operation.upsert.rawValue
        bytes[2] = createdFlag | wholeFlag
        bytes.storeBytes(of: entityId.bigEndian, toByteOffset: 3, as: UInt32.self)
        syncId.copySyncBytes(to: bytes.baseAddress.unsafelyUnwrapped + 7)
        bytes.storeBytes(of: clock.bigEndian, toByteOffset: 23, as: UInt64.self)
        bytes.storeBytes(of: UInt16(0).bigEndian, toByteOffset: 31, as: UInt16.self)
    }

    /// The size of an entry with `fieldCount` fields.
    @inline(__always)
    static func size(fieldCount: Int) -> Int { headerSize + fieldCount * 10 }

    /// Writes an entry whose `fields` (ascending stored field ids) all changed at `clock` into
    /// `bytes` (exactly `size(fieldCount: fields.count)` of them: LMDB's reserved space), with
    /// no array in between.
    static func encode(into bytes: UnsafeMutableRawBufferPointer, operation: Operation, isCreation: Bool, entityId: UInt32,
                       syncId: UUID, clock: UInt64, fields: UnsafeBufferPointer<UInt16>) {
        bytes[0] = version
        bytes[1] = operation.rawValue
        bytes[2] = isCreation ? createdFlag : 0
        bytes.storeBytes(of: entityId.bigEndian, toByteOffset: 3, as: UInt32.self)
        syncId.copySyncBytes(to: bytes.baseAddress.unsafelyUnwrapped + 7)
        bytes.storeBytes(of: clock.bigEndian, toByteOffset: 23, as: UInt64.self)
        bytes.storeBytes(of: UInt16(truncatingIfNeeded: fields.count).bigEndian, toByteOffset: 31, as: UInt16.self)
        var offset = headerSize
        for id in fields {
            bytes.storeBytes(of: id.bigEndian, toByteOffset: offset, as: UInt16.self)
            bytes.storeBytes(of: clock.bigEndian, toByteOffset: offset + 2, as: UInt64.self)
            offset += 10
        }
    }

    /// The largest entry a merge that only advances clocks rewrites where it lies: far
    /// below the size at which LMDB moves a value to overflow pages (about half a page),
    /// whose reserved space would not hold the stored bytes.
    static let largestRewrittenInPlace = 1_000

    /// How many fields `record` (whose bytes start at `base`) holds, when their ids ascend
    /// strictly (as a put encodes them); nil otherwise (fields carried from another build
    /// can follow out of order) or when there are too many for an entry.
    static func ascendingFieldCount(of record: RecordFields, base: UnsafeRawPointer) throws -> Int? {
        let compact = try record.walk().compact
        let end = record.bytes.count
        var offset = 1, count = 0, last = -1
        while offset < end {
            switch FieldHeader.parse(base, at: offset, end: end, compact: compact) {
            case .failure(let problem): throw record.damage(problem)
            case .success(let header):
                guard header.fieldId > last else { return nil }
                last = header.fieldId
                count &+= 1
                offset = header.payloadEnd
            }
        }
        return count <= Int(UInt16.max) ? count : nil
    }

    /// Writes the creation entry of `record` (every field at `clock`) into `bytes`, exactly
    /// `size(fieldCount:)` of its fields (see ``ascendingFieldCount(of:base:)``).
    static func encodeCreation(into bytes: UnsafeMutableRawBufferPointer, entityId: UInt32, syncId: UUID, clock: UInt64,
                               record: RecordFields, base: UnsafeRawPointer) throws {
        let compact = try record.walk().compact
        let end = record.bytes.count
        let count = (bytes.count &- headerSize) / 10
        bytes[0] = version
        bytes[1] = Operation.upsert.rawValue
        bytes[2] = createdFlag
        bytes.storeBytes(of: entityId.bigEndian, toByteOffset: 3, as: UInt32.self)
        syncId.copySyncBytes(to: bytes.baseAddress.unsafelyUnwrapped + 7)
        bytes.storeBytes(of: clock.bigEndian, toByteOffset: 23, as: UInt64.self)
        bytes.storeBytes(of: UInt16(truncatingIfNeeded: count).bigEndian, toByteOffset: 31, as: UInt16.self)
        var offset = 1, target = headerSize
        while offset < end && target &+ 10 <= bytes.count {
            switch FieldHeader.parse(base, at: offset, end: end, compact: compact) {
            case .failure(let problem): throw record.damage(problem)
            case .success(let header):
                bytes.storeBytes(of: UInt16(truncatingIfNeeded: header.fieldId).bigEndian, toByteOffset: target, as: UInt16.self)
                bytes.storeBytes(of: clock.bigEndian, toByteOffset: target &+ 2, as: UInt64.self)
                target &+= 10
                offset = header.payloadEnd
            }
        }
        guard target == bytes.count else { throw record.damage("changed while its outbox entry was written") }
    }

    /// A stored entry read in place (no copy, no array), for merging a change into it.
    struct View {
        let bytes: UnsafeRawBufferPointer
        let mid: UInt64
        let operation: Operation
        let fieldCount: Int

        /// Checks the header and the size; the field order is checked while merging.
        init(_ bytes: UnsafeRawBufferPointer, mid: UInt64) throws {
            self.bytes = bytes
            self.mid = mid
            guard bytes.count >= OutboxEntry.headerSize else {
                throw OutboxEntry.damage(mid, "has \(bytes.count) bytes, fewer than an entry's \(OutboxEntry.headerSize)")
            }
            guard bytes[0] == OutboxEntry.version else {
                throw OutboxEntry.damage(mid, "has format version \(bytes[0]); this build reads \(OutboxEntry.version)")
            }
            guard let operation = Operation(rawValue: bytes[1]) else { throw OutboxEntry.damage(mid, "has the unknown operation \(bytes[1])") }
            let count = Int(OutboxEntry.read(UInt16.self, bytes, at: 31))
            if let problem = OutboxEntry.flagProblem(bytes[2], operation: operation, fieldCount: count) { throw OutboxEntry.damage(mid, problem) }
            guard bytes.count == OutboxEntry.size(fieldCount: count) else {
                throw OutboxEntry.damage(mid, "has \(bytes.count) bytes, not the \(OutboxEntry.size(fieldCount: count)) its \(count) fields need")
            }
            self.operation = operation
            fieldCount = count
        }

        var isCreation: Bool { bytes[2] & OutboxEntry.createdFlag != 0 }
        var isWhole: Bool { bytes[2] & OutboxEntry.wholeFlag != 0 }
        var entityId: UInt32 { OutboxEntry.read(UInt32.self, bytes, at: 3) }

        /// Whether the entry lists every field of `changed` (ascending stored field ids), so
        /// that merging them only advances clocks. False for fields out of order (the full
        /// merge reports them).
        func lists(every changed: UnsafeBufferPointer<UInt16>) -> Bool {
            var old = 0, previous = -1
            for id in changed {
                while true {
                    guard old < fieldCount else { return false }
                    let stored = Int(OutboxEntry.read(UInt16.self, bytes, at: OutboxEntry.headerSize &+ old &* 10))
                    guard stored > previous else { return false }
                    previous = stored
                    old &+= 1
                    if stored == Int(id) { break }
                    if stored > Int(id) { return false }
                }
            }
            return true
        }

        /// In the entry `bytes` (checked by `init`, listing every field of `changed`, see
        /// ``lists(every:)``): each field of `changed` and the entry itself move to `clock`
        /// unless already later.
        static func advanceClocks(in bytes: UnsafeMutableRawBufferPointer, of changed: UnsafeBufferPointer<UInt16>, to clock: UInt64) {
            let latest = Swift.max(OutboxEntry.read(UInt64.self, UnsafeRawBufferPointer(bytes), at: 23), clock)
            bytes.storeBytes(of: latest.bigEndian, toByteOffset: 23, as: UInt64.self)
            var offset = OutboxEntry.headerSize
            for id in changed {
                while offset &+ 10 <= bytes.count {
                    let stored = OutboxEntry.read(UInt16.self, UnsafeRawBufferPointer(bytes), at: offset)
                    offset &+= 10
                    guard stored == id else { continue }
                    let fieldClock = Swift.max(OutboxEntry.read(UInt64.self, UnsafeRawBufferPointer(bytes), at: offset &- 8), clock)
                    bytes.storeBytes(of: fieldClock.bigEndian, toByteOffset: offset &- 8, as: UInt64.self)
                    break
                }
            }
        }

        func hasSyncId(_ syncId: UUID) -> Bool {
            withUnsafeBytes(of: syncId.uuid) { uuid in
                uuid.loadUnaligned(as: UInt64.self) == bytes.loadUnaligned(fromByteOffset: 7, as: UInt64.self)
                    && uuid.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == bytes.loadUnaligned(fromByteOffset: 15, as: UInt64.self)
            }
        }

        /// Writes this entry with a later change merged in (the union of the fields, each at
        /// its latest clock) into `output` (room for `fieldCount + changed.count` fields);
        /// returns the merged entry's size. `changed`: ascending stored field ids.
        func merged(fields changed: UnsafeBufferPointer<UInt16>, clock: UInt64, into output: UnsafeMutableRawBufferPointer) throws -> Int {
            guard let source = bytes.baseAddress, let target = output.baseAddress else { return 0 }
            target.copyMemory(from: source, byteCount: OutboxEntry.headerSize)
            let latest = Swift.max(OutboxEntry.read(UInt64.self, bytes, at: 23), clock)
            output.storeBytes(of: latest.bigEndian, toByteOffset: 23, as: UInt64.self)
            var old = 0, new = 0, offset = OutboxEntry.headerSize
            var previous = -1
            func put(_ id: UInt16, _ fieldClock: UInt64) {
                output.storeBytes(of: id.bigEndian, toByteOffset: offset, as: UInt16.self)
                output.storeBytes(of: fieldClock.bigEndian, toByteOffset: offset + 2, as: UInt64.self)
                offset += 10
            }
            while old < fieldCount || new < changed.count {
                let oldId = old < fieldCount ? Int(OutboxEntry.read(UInt16.self, bytes, at: OutboxEntry.headerSize + old * 10)) : Int.max
                if old < fieldCount {
                    // In id order, each once: what merging relies on.
                    guard oldId > previous else { throw OutboxEntry.damage(mid, "lists its fields out of order") }
                }
                let newId = new < changed.count ? Int(changed[new]) : Int.max
                if oldId < newId {
                    put(UInt16(oldId), OutboxEntry.read(UInt64.self, bytes, at: OutboxEntry.headerSize + old * 10 + 2))
                    previous = oldId
                    old += 1
                } else if newId < oldId {
                    put(UInt16(newId), clock)
                    new += 1
                } else {
                    let oldClock = OutboxEntry.read(UInt64.self, bytes, at: OutboxEntry.headerSize + old * 10 + 2)
                    put(UInt16(oldId), Swift.max(oldClock, clock))
                    previous = oldId
                    old += 1
                    new += 1
                }
            }
            output.storeBytes(of: UInt16(truncatingIfNeeded: (offset - OutboxEntry.headerSize) / 10).bigEndian, toByteOffset: 31, as: UInt16.self)
            return offset
        }
    }

    private static func damage(_ mid: UInt64, _ reason: String) -> CofferError {
        CofferError.damagedStore(part: .sync, reason: "the outbox entry \(mid) \(reason)")
    }

    private static func read<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> T {
        T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
