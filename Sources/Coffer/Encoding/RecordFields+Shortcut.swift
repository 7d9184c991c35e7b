extension RecordFields {
    /// Where the previous record of a scan held the tested field, and the exact bytes of every
    /// field header before it: a record whose bytes at those places are the same holds the
    /// field at the same offset, so a scan's per-record condition finds it without parsing the
    /// headers before it (in a table of records written by one build, nearly every record).
    ///
    /// Why this is exact, not a guess: a walk reads a record's version byte, then each field's
    /// header, and moves to the end of its payload, which the header alone determines. When a
    /// record has the learned version byte and header bytes at the learned offsets, its walk
    /// parses the same headers, so it reaches the same offset for the field's header and meets
    /// no field of the wanted id before it (the learned record had none). Every payload before
    /// it ends at or before that offset, so checking that offset against the record's end
    /// covers their bounds checks. The walk then goes on from there as usual: a record without
    /// the field (a nil value) is still walked to its end and checked.
    ///
    /// Invariant: `count == 0` (nothing learned), or `count` checkpoints with increasing
    /// offsets, each at most 8 bytes, every one ending at or before `fieldOffset`.
    final class Shortcut {
        /// Bytes `offset ..< offset + width` of a record, compared as one masked 8-byte load.
        struct Checkpoint {
            var offset: Int
            var mask: UInt64
            var bytes: UInt64
        }

        /// The most headers a shortcut remembers; a field further into the record is walked to.
        static let capacity = 8

        /// How many checkpoints hold: the version byte with the first header, then one per header.
        @exclusivity(unchecked) private(set) var count = 0
        /// Where the learned record's header of the field starts.
        @exclusivity(unchecked) private(set) var fieldOffset = 1
        private let checkpoints: UnsafeMutablePointer<Checkpoint>

        /// A shortcut that knows nothing yet; one per scan and tested field.
        init() {
            checkpoints = .allocate(capacity: Self.capacity)
        }

        deinit {
            checkpoints.deallocate()
        }

        /// Where a walk of the format 2 record at `base` (of `end` bytes, `end >= 1`) may start
        /// looking for the field: the learned offset when the record has the learned bytes
        /// there, else nil (walk from the first header).
        @inline(__always)
        func start(_ base: UnsafeRawPointer, end: Int) -> Int? {
            let count = count
            guard count > 0, fieldOffset <= end else { return nil }
            var index = 0
            while index < count {
                let checkpoint = checkpoints[index]
                guard checkpoint.offset &+ 8 <= end,
                      base.loadUnaligned(fromByteOffset: checkpoint.offset, as: UInt64.self) & checkpoint.mask == checkpoint.bytes
                else { return nil }
                index &+= 1
            }
            return fieldOffset
        }

        /// Forgets what was learned. A walk from the first header calls it, then
        /// ``learn(headerAt:payloadStart:base:)`` for each header it passes and
        /// ``found(at:base:end:)`` when it meets the field.
        @inline(__always)
        func restart() {
            count = 0
            learning = 0
        }

        /// Checkpoints taken by the walk under way, made valid by ``found(at:base:end:)``; -1
        /// once a header did not fit (then nothing is learned from this record).
        @exclusivity(unchecked) private var learning = 0

        /// Records the header from `offset` to `payloadStart` that a walk from the first header
        /// passed (the version byte goes with the first one).
        @inline(__always)
        func learn(headerAt offset: Int, payloadStart: Int, base: UnsafeRawPointer) {
            let taken = learning
            guard taken >= 0 else { return }
            let from = taken == 0 ? 0 : offset
            let width = payloadStart &- from
            guard taken < Self.capacity, width <= 8 else {
                learning = -1
                return
            }
            let mask: UInt64 = width == 8 ? .max : (1 &<< UInt64(width &* 8)) &- 1
            // The bytes themselves are taken by `found`, once the walk reached the field, with
            // the same 8-byte load `start` compares with (so byte order does not matter).
            checkpoints[taken] = Checkpoint(offset: from, mask: mask, bytes: 0)
            learning = taken &+ 1
        }

        /// Makes the headers recorded since ``restart()`` the shortcut to the field whose header
        /// starts at `offset`, in the `end` bytes at `base`; learns nothing when one of them
        /// cannot be read as 8 bytes inside the record.
        @inline(__always)
        func found(at offset: Int, base: UnsafeRawPointer, end: Int) {
            var taken = learning
            if taken == 0 {
                // The field is the first: the version byte alone.
                checkpoints[0] = Checkpoint(offset: 0, mask: 0xFF, bytes: 0)
                taken = 1
            }
            guard taken > 0 else { return }
            var index = 0
            while index < taken {
                let offset = checkpoints[index].offset
                guard offset &+ 8 <= end else { return }
                checkpoints[index].bytes = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & checkpoints[index].mask
                index &+= 1
            }
            fieldOffset = offset
            count = taken
            checkInvariants()
        }

        /// Checks the invariant above in debug builds (nothing in release): the checkpoints
        /// come from headers a walk parsed, so a violation is a bug, never a damaged record.
        func checkInvariants() {
            #if DEBUG
            assert(count >= 0 && count <= Self.capacity, "a shortcut holds at most its capacity of checkpoints")
            var previousEnd = 0
            for index in 0..<count {
                let checkpoint = checkpoints[index]
                let width = (64 - checkpoint.mask.leadingZeroBitCount) / 8
                assert(checkpoint.offset >= previousEnd && width >= 1 && width <= 8, "checkpoints ascend and hold 1 to 8 bytes")
                assert(checkpoint.bytes & ~checkpoint.mask == 0, "a checkpoint's bytes lie inside its mask")
                previousEnd = checkpoint.offset + width
                assert(previousEnd <= fieldOffset, "every checkpoint ends at or before the field's header")
            }
            #endif
        }
    }
}

