@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

/// The fast paths of issue 14 against the general ones they shortcut: the generated decoder's
/// straight path against records laid out differently, updates written in place through a
/// cursor against a plain model, and exact index look-ups against scans.
@Suite struct HotPathTests {
    /// One stored field as raw bytes: header and payload.
    struct RawField {
        var storedId: UInt16
        var kind: UInt8
        var payload: [UInt8]

        /// The field in record format 2 (`compact`, what stores write now) or format 1 (what
        /// earlier releases wrote), encoded here by hand, independently of `RecordWriter`.
        func bytes(compact: Bool) -> [UInt8] {
            func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
            let variable = FieldKind(rawValue: kind)?.fixedSize == nil
            guard compact else {
                return littleEndian(storedId) + [kind] + (variable ? littleEndian(UInt32(payload.count)) : []) + payload
            }
            var out = storedId < 2047 ? littleEndian(storedId << 5 | UInt16(kind)) : littleEndian(UInt16(2047 << 5) | UInt16(kind)) + littleEndian(storedId)
            if variable { out += payload.count < 255 ? [UInt8(payload.count)] : [0xFF] + littleEndian(UInt32(payload.count)) }
            return out + payload
        }

        /// A whole record of `fields` in format 2 or format 1.
        static func record(_ fields: [RawField], compact: Bool) -> [UInt8] {
            [compact ? 2 : 1] + fields.flatMap { $0.bytes(compact: compact) }
        }
    }

    static func fields(of bytes: UnsafeRawBufferPointer) throws -> [RawField] {
        var fields: [RawField] = []
        try RecordFields(bytes: bytes, entity: "test", id: 0).forEach { id, field in
            fields.append(RawField(storedId: id, kind: field.kind.rawValue, payload: Array(field.payload)))
        }
        return fields
    }

    /// The stored record of the `Everything` with `id`, byte for byte.
    static func storedRecord(_ store: Store, id: Id) throws -> [UInt8] {
        try store.performRead { transaction in
            let binding = try #require(try store.binding(for: Everything.self, in: transaction))
            return Array(try #require(try transaction.record(id, table: binding.table, entity: "Everything")))
        }
    }

    /// The fields of the stored record of the `Everything` with `id`, in record order.
    static func storedFields(_ store: Store, id: Id) throws -> [RawField] {
        try storedRecord(store, id: id).withUnsafeBytes { try fields(of: $0) }
    }

    static func randomEverything(_ generator: inout SplitMix64) -> Everything {
        func maybe<T>(_ value: T) -> T? { Bool.random(using: &generator) ? value : nil }
        var object = Everything()
        object.bool = .random(using: &generator)
        object.int = .random(in: -1_000_000...1_000_000, using: &generator)
        object.int8 = .random(in: .min ... .max, using: &generator)
        object.int32 = .random(in: .min ... .max, using: &generator)
        object.uint64 = .random(in: .min ... .max, using: &generator)
        object.double = .random(in: -1e6...1e6, using: &generator)
        object.string = String(repeating: "x", count: Int.random(in: 0...40, using: &generator))
        object.data = Data((0..<Int.random(in: 0...30, using: &generator)).map { UInt8(truncatingIfNeeded: $0) })
        object.strings = (0..<Int.random(in: 0...3, using: &generator)).map { "s\($0)" }
        object.optInt = maybe(.random(in: -5...5, using: &generator))
        object.optString = maybe("optional")
        object.optDouble = maybe(2.5)
        object.optDate = maybe(Date(timeIntervalSinceReferenceDate: 1000))
        object.optUInt16 = maybe(.random(in: .min ... .max, using: &generator))
        object.optMood = maybe(Mood.grumpy)
        return object
    }

    /// `RecordFields.hasSamePrefix`, which lets an update skip the old record's look-up of an
    /// indexed field: whenever it holds for a field of one record, the other record's walk
    /// finds that very field (same id, kind and bytes). Random records and records that share
    /// a random prefix with them (fields after it changed, added or cut off), in both orders.
    @Test func samePrefixImpliesTheSameField() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 23)
            var records: [[UInt8]] = []
            for _ in 0..<40 {
                var object = Self.randomEverything(&generator)
                try box.put(&object)
                let stored = try Self.storedRecord(store, id: object.id)
                records.append(stored)
                // A record sharing a random prefix: the rest changed, cut or extended.
                var related = Array(stored.prefix(Int.random(in: 1...stored.count, using: &generator)))
                related += (0..<Int.random(in: 0...12, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                records.append(related)
            }
            var agreed = 0
            for first in records.indices {
                for second in [first - 1, first, first + 1] where records.indices.contains(second) {
                    try records[first].withUnsafeBytes { a in
                        try records[second].withUnsafeBytes { b in
                            let old = RecordFields(bytes: a, entity: "a", id: 1)
                            let new = RecordFields(bytes: b, entity: "b", id: 2)
                            var walk = try? new.walk()
                            while let (fieldId, field) = try? walk?.next() {
                                guard old.hasSamePrefix(as: new, through: field) else { continue }
                                let found = try #require(try old.field(fieldId))
                                #expect(found.kind == field.kind && Array(found.payload) == Array(field.payload)
                                        && found.payload.baseAddress! - a.baseAddress! == field.payload.baseAddress! - b.baseAddress!)
                                agreed += 1
                            }
                        }
                    }
                }
            }
            #expect(agreed > 100)
        }
    }

    /// One walk for several fields (Smart SQL's aggregate kernel) against the general walk:
    /// the first copy of each wanted field, nil for one the record lacks, and damage exactly
    /// when the general walk meets it before the last wanted field. Records of both formats,
    /// fields reordered and repeated, cut short or with bytes changed.
    @Test func gatheringSeveralFieldsAgreesWithTheWalk() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 91)
            var checked = (found: 0, damaged: 0)
            for _ in 0..<300 {
                var object = Self.randomEverything(&generator)
                try box.put(&object)
                var fields = try Self.storedFields(store, id: object.id)
                fields.shuffle(using: &generator)
                if let repeated = fields.randomElement(using: &generator), Bool.random(using: &generator) {
                    var copy = repeated
                    copy.payload = Array(copy.payload.reversed())
                    fields.insert(copy, at: Int.random(in: 0...fields.count, using: &generator))
                }
                var bytes = RawField.record(fields, compact: Int.random(in: 0..<4, using: &generator) > 0)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
                case 1: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                default: break
                }
                let ids = Set(fields.map(\.storedId))
                var wanted = Set(ids.filter { _ in Bool.random(using: &generator) })
                wanted.insert(UInt16.random(in: 0...40, using: &generator))  // perhaps one the record lacks
                let order = wanted.sorted()
                var slotTable = Array(repeating: Int32(-1), count: Int(order.last!) + 1)
                for (slot, id) in order.enumerated() { slotTable[Int(id)] = Int32(slot) }
                bytes.withUnsafeBytes { raw in
                    let record = RecordFields(bytes: raw, entity: "test", id: 1)
                    // The general walk, to the last wanted field.
                    var expected: [UInt16: RawField] = [:]
                    let walked = Result { () throws in
                        var walk = try record.walk()
                        while expected.count < wanted.count, let (id, field) = try walk.next() {
                            if wanted.contains(id), expected[id] == nil {
                                expected[id] = RawField(storedId: id, kind: field.kind.rawValue, payload: Array(field.payload))
                            }
                        }
                    }
                    let found = UnsafeMutableBufferPointer<RecordFields.Field?>.allocate(capacity: order.count)
                    found.initialize(repeating: nil)
                    defer { found.deallocate() }
                    let gathered = slotTable.withUnsafeBufferPointer { slots in
                        Result { try record.gather(slots, wanted: order.count, into: found) }
                    }
                    switch (walked, gathered) {
                    case (.success, .success):
                        for (slot, id) in order.enumerated() {
                            let field = found[slot].map { RawField(storedId: id, kind: $0.kind.rawValue, payload: Array($0.payload)) }
                            #expect(field?.kind == expected[id]?.kind && field?.payload == expected[id]?.payload, "field \(id) of \(bytes)")
                        }
                        checked.found += 1
                    case (.failure, .failure):
                        checked.damaged += 1
                    default:
                        Issue.record("the gathering and the walk disagree on damage in \(bytes) for \(order)")
                    }
                }
            }
            #expect(checked.found > 100 && checked.damaged > 20)
        }
    }

    /// Format 2 framing at its boundaries: property ids around the escape (2046, 2047, 2048
    /// and the largest) and lengths around the long form (254, 255, 256 and beyond 64 KiB),
    /// written by `RecordWriter` and read back by `RecordFields` exactly, byte for byte the
    /// same as the hand encoding of the tests; every cut of such a record is damage.
    @Test func compactHeadersRoundTripAtTheirBoundaries() throws {
        let ids: [UInt16] = [0, 1, 31, 2046, 2047, 2048, 3000, .max]
        let lengths = [0, 1, 254, 255, 256, 70_000]
        let buffer = RecordBuffer()
        for length in lengths {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let (bytes, expected): ([UInt8], [RawField]) = try ids.withUnsafeBufferPointer { table in
                var writer = RecordWriter(buffer: buffer, storedIds: try #require(table.baseAddress))
                var expected: [RawField] = []
                for position in ids.indices {
                    payload.withUnsafeBytes { writer.writeBytes(position, $0) }
                    expected.append(RawField(storedId: ids[position], kind: FieldKind.bytes.rawValue, payload: payload))
                    writer.writeSigned(position, -5)
                    expected.append(RawField(storedId: ids[position], kind: FieldKind.int8.rawValue, payload: [0xFB]))
                    true.cofferWrite(position, to: &writer)
                    expected.append(RawField(storedId: ids[position], kind: FieldKind.boolTrue.rawValue, payload: []))
                }
                buffer.adopt(writer)
                return (Array(writer.bytes), expected)
            }
            #expect(bytes == RawField.record(expected, compact: true), "length \(length)")
            let read = try bytes.withUnsafeBytes { try Self.fields(of: $0) }
            #expect(read.map(\.storedId) == expected.map(\.storedId), "length \(length)")
            #expect(read.map(\.kind) == expected.map(\.kind), "length \(length)")
            #expect(read.map(\.payload) == expected.map(\.payload), "length \(length)")
            // Cut anywhere inside a field: damage, never a shorter record.
            for cut in Set([1, 2, 3, 4, 5, 6, bytes.count / 2, bytes.count - 1]) where cut > 1 && cut < bytes.count {
                let fieldStarts = try Set(Self.fieldOffsets(bytes))
                guard !fieldStarts.contains(cut) else { continue }
                #expect(throws: CofferError.self, "length \(length), cut \(cut)") {
                    try Array(bytes.prefix(cut)).withUnsafeBytes { try RecordFields(bytes: $0, entity: "Test", id: 1).validate() }
                }
            }
        }
    }

    /// Where each field of a format 2 record starts (hand-parsed, for the cut test).
    static func fieldOffsets(_ bytes: [UInt8]) throws -> [Int] {
        var offsets: [Int] = []
        var offset = 1
        while offset < bytes.count {
            offsets.append(offset)
            let tag = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            offset += tag >> 5 == 2047 ? 4 : 2
            let kind = try #require(FieldKind(rawValue: UInt8(tag & 31)))
            if let size = kind.fixedSize {
                offset += size
            } else if bytes[offset] == 0xFF {
                offset += 5 + (Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]) << 16 | Int(bytes[offset + 4]) << 24)
            } else {
                offset += 1 + Int(bytes[offset])
            }
        }
        return offsets
    }

    /// A record of format 1 (what earlier releases wrote) reads as before, queries and index
    /// look-ups find it, and putting it back rewrites it in format 2 with every field kept,
    /// the fields of properties this build does not declare included.
    @Test func formatOneRecordsAreReadAndRewrittenInFormatTwo() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 5)
            for round in 0..<50 {
                var object = Self.randomEverything(&generator)
                try box.put(&object)
                let expected = try #require(try box.get(object.id))
                let unknown = RawField(storedId: UInt16(2_000 + round * 20), kind: FieldKind.bytes.rawValue,
                                       payload: Array(repeating: UInt8(round), count: round * 7))
                let fields = try Self.storedFields(store, id: object.id) + [unknown]
                try Damage.overwriteRecord(store, Everything.self, id: object.id, with: RawField.record(fields, compact: false))
                var read = try #require(try box.get(object.id))
                #expect(String(describing: read) == String(describing: expected), "round \(round)")
                #expect(try box.query { Everything.string == expected.string }.build().findIds().contains(object.id))
                try box.put(&read)
                let rewritten = try Self.storedRecord(store, id: object.id)
                #expect(rewritten.first == 2, "round \(round)")
                let after = try rewritten.withUnsafeBytes { try Self.fields(of: $0) }
                #expect(after.contains { $0.storedId == unknown.storedId && $0.payload == unknown.payload }, "round \(round)")
                #expect(String(describing: try #require(try box.get(object.id))) == String(describing: expected), "round \(round)")
            }
        }
    }

    /// Stored strings that are not valid UTF-8 (damage, or another writer) read back
    /// repaired exactly as `String(decoding:as:)` repairs them, never trapping; ASCII and
    /// multi-byte text read back unchanged.
    @Test func stringsAreValidatedAndRepaired() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Note.self)
            var note = Note(title: "x")
            try box.put(&note)
            let titleId: UInt16 = try store.performRead { transaction in
                let binding = try #require(try store.binding(for: Note.self, in: transaction))
                return binding.storedIds[Note.title.index]
            }
            let samples: [[UInt8]] = [
                Array("plain ascii".utf8), Array("Ünïcødé ✓ 😀".utf8), [],
                [0xFF], [0x61, 0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0x61, 0x80, 0x62], [0xF4, 0x90, 0x80, 0x80],
                Array(repeating: 0x41, count: 40) + [0xC0, 0xAF],
            ]
            for (bytes, compact) in samples.flatMap({ [($0, true), ($0, false)] }) {
                let field = RawField(storedId: titleId, kind: FieldKind.bytes.rawValue, payload: bytes)
                try Damage.overwriteRecord(store, Note.self, id: note.id, with: RawField.record([field], compact: compact))
                let read = try #require(try box.get(note.id))
                #expect(read.title == String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    /// A record whose fields come in another order, with fields of properties this build
    /// does not know in between, decodes exactly like the record the current schema wrote
    /// (the straight path takes what it can and the general loop reads the rest).
    @Test func straightPathAgreesWithTheGeneralReaderOnReorderedRecords() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 14)
            for round in 0..<300 {
                var object = Self.randomEverything(&generator)
                try box.put(&object)
                let expected = try #require(try box.get(object.id))
                let original = try Self.storedFields(store, id: object.id)
                var changed = original
                switch round % 3 {
                case 0: changed.shuffle(using: &generator)
                case 1:
                    // Unknown fields (a newer build's) at random places.
                    for _ in 0..<3 {
                        let unknown = RawField(storedId: UInt16.random(in: 3000...4000, using: &generator), kind: FieldKind.bytes.rawValue, payload: [1, 2, 3])
                        changed.insert(unknown, at: Int.random(in: 0...changed.count, using: &generator))
                    }
                default:
                    // The last field first: the straight path stops at once.
                    if let last = changed.popLast() { changed.insert(last, at: 0) }
                }
                // Both formats: format 1 records (earlier releases) are read by the general loop alone.
                try Damage.overwriteRecord(store, Everything.self, id: object.id, with: RawField.record(changed, compact: round % 2 == 0))
                let decoded = try #require(try box.get(object.id))
                #expect(String(describing: decoded) == String(describing: expected), "round \(round)")
            }
        }
    }

    /// A field in its schema place but not in the form the current schema writes (another
    /// width or kind, a value out of the type's range, a kind the type cannot read) is left
    /// by `RecordReader.take` to the general reader: converted where the general reader
    /// converts, reported where it reports, and every other field still reads.
    @Test func straightPathLeavesOtherFormsToTheGeneralReader() throws {
        struct Case {
            var property: Int
            var kind: FieldKind
            var payload: [UInt8]
            /// The object the record should decode to, or nil when decoding must report damage.
            var expect: ((inout Everything) -> Void)?
        }
        func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        let cases = [
            Case(property: Everything.int.index, kind: .uint8, payload: [200]) { $0.int = 200 },
            Case(property: Everything.int.index, kind: .uint64, payload: bytes(UInt64.max.littleEndian), expect: nil),
            Case(property: Everything.int8.index, kind: .int16, payload: bytes(Int16(100).littleEndian)) { $0.int8 = 100 },
            Case(property: Everything.int8.index, kind: .int16, payload: bytes(Int16(300).littleEndian), expect: nil),
            Case(property: Everything.int32.index, kind: .int64, payload: bytes(Int64(1 << 40).littleEndian), expect: nil),
            Case(property: Everything.uint16.index, kind: .int8, payload: [5]) { $0.uint16 = 5 },
            Case(property: Everything.uint16.index, kind: .int8, payload: [0xFF], expect: nil),
            Case(property: Everything.uint8.index, kind: .uint32, payload: bytes(UInt32(256).littleEndian), expect: nil),
            Case(property: Everything.double.index, kind: .float32, payload: bytes(Float(1.5).bitPattern.littleEndian)) { $0.double = 1.5 },
            Case(property: Everything.float.index, kind: .float64, payload: bytes(Double(1.5).bitPattern.littleEndian), expect: nil),
            Case(property: Everything.date.index, kind: .float32, payload: bytes(Float(2).bitPattern.littleEndian)) {
                $0.date = Date(timeIntervalSinceReferenceDate: 2)
            },
            Case(property: Everything.string.index, kind: .int8, payload: [1], expect: nil),
            Case(property: Everything.data.index, kind: .uuid, payload: Array(repeating: 7, count: 16), expect: nil),
            Case(property: Everything.uuid.index, kind: .bytes, payload: Array(repeating: 7, count: 16), expect: nil),
            Case(property: Everything.bool.index, kind: .int8, payload: [1], expect: nil),
        ]
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 41)
            for (number, item) in cases.enumerated() {
                var object = Self.randomEverything(&generator)
                try box.put(&object)
                let stored = try #require(try box.get(object.id))
                let fields: [RawField] = try store.performRead { transaction in
                    let binding = try #require(try store.binding(for: Everything.self, in: transaction))
                    let bytes = try #require(try transaction.record(object.id, table: binding.table, entity: "Everything"))
                    let storedId = binding.storedIds[item.property]
                    var fields = try Self.fields(of: bytes)
                    let place = try #require(fields.firstIndex { $0.storedId == storedId })
                    fields[place].kind = item.kind.rawValue
                    fields[place].payload = item.payload
                    return fields
                }
                try Damage.overwriteRecord(store, Everything.self, id: object.id, with: RawField.record(fields, compact: number % 2 == 0))
                if let expect = item.expect {
                    var expected = stored
                    expect(&expected)
                    let decoded = try #require(try box.get(object.id))
                    #expect(String(describing: decoded) == String(describing: expected), "case \(number)")
                } else {
                    #expect("case \(number)") { try box.get(object.id) } throws: { Damage.isCorrupt($0, entity: "Everything", id: object.id) }
                }
            }
        }
    }

    /// String index keys built on the plain-ASCII path equal the general encoding (NFC,
    /// NULs escaped, cut at the limit, terminator and cut flag), for random strings of every
    /// kind and length around the word size and the cut.
    @Test func stringKeysMatchTheGeneralEncoding() {
        func reference(_ bytes: [UInt8]) -> [UInt8] {
            let canonical = Array(String(decoding: bytes, as: UTF8.self).precomposedStringWithCanonicalMapping.utf8)
            let text = bytes.allSatisfy { $0 < 0x80 } ? bytes : canonical
            var key: [UInt8] = [IndexKey.valueTag]
            var written = 0
            var cut = false
            for byte in text {
                let size = byte == 0 ? 2 : 1
                if written + size > IndexKey.maxStringBytes { cut = true; break }
                key.append(byte)
                if byte == 0 { key.append(0xFF) }
                written += size
            }
            return key + [0, cut ? 1 : 0]
        }
        var generator = SplitMix64(state: 7)
        let lengths = Array(0...20) + [399, 400, 401, 407, 408, 409, 800]
        for round in 0..<2_000 {
            let length = lengths[round % lengths.count]
            let bytes: [UInt8] = (0..<length).map { _ in
                switch Int.random(in: 0..<40, using: &generator) {
                case 0: return 0
                case 1: return UInt8.random(in: 0x80...0xFF, using: &generator)
                default: return UInt8.random(in: 0x20...0x7E, using: &generator)
                }
            }
            var key: [UInt8] = [9]
            bytes.withUnsafeBytes { IndexKey.appendString($0, to: &key) }
            #expect(Array(key.dropFirst()) == reference(bytes), "round \(round): \(bytes)")
            #expect(bytes.withUnsafeBytes { IndexKey.isASCIIWithoutNul($0) } == bytes.allSatisfy { $0 != 0 && $0 < 0x80 })
        }
    }

    /// Damage after fields the straight path took is still reported.
    @Test func damageAfterTheStraightPathIsReported() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Note.self)
            var note = Note(title: "kept", body: "body", rank: 3)
            try box.put(&note)
            let fields: [RawField] = try store.performRead { transaction in
                let binding = try #require(try store.binding(for: Note.self, in: transaction))
                return try Self.fields(of: try #require(try transaction.record(note.id, table: binding.table, entity: "Note")))
            }
            for compact in [true, false] {
                // A whole record, then a header cut off after the last field.
                try Damage.overwriteRecord(store, Note.self, id: note.id, with: RawField.record(fields, compact: compact) + [7])
                #expect { try box.get(note.id) } throws: { Damage.isCorrupt($0, entity: "Note", id: note.id) }
                // A field whose length runs past the end.
                var long = fields
                long[0].payload += [0]
                var bytes = RawField.record(long, compact: compact)
                bytes.removeLast()
                try Damage.overwriteRecord(store, Note.self, id: note.id, with: bytes)
                #expect { try box.get(note.id) } throws: { Damage.isCorrupt($0, entity: "Note", id: note.id) }
            }
        }
    }

    /// Updates go through a cursor (`MDB_CURRENT`): records growing, shrinking and keeping
    /// their size, with indexed values changing or not, match a plain model, and so do the
    /// index look-ups.
    @Test func inPlaceUpdatesMatchAModel() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            var generator = SplitMix64(state: 99)
            var model: [Id: Message] = [:]
            var batch = (0..<200).map { Message(conversation: $0 % 7, position: $0, text: String(repeating: "t", count: $0 % 50)) }
            try box.put(&batch)
            for message in batch { model[message.id] = message }
            for round in 0..<40 {
                try store.write {
                    for _ in 0..<50 {
                        let id = Id.random(in: 1...200, using: &generator)
                        var message = try #require(model[id])
                        switch Int.random(in: 0..<4, using: &generator) {
                        case 0: message.text += String(repeating: "g", count: Int.random(in: 1...3000, using: &generator))
                        case 1: message.text = String(message.text.prefix(Int.random(in: 0...5, using: &generator)))
                        case 2: message.conversation = Int.random(in: 0..<7, using: &generator)
                        default: message.position += 1
                        }
                        try box.put(&message)
                        model[id] = message
                    }
                }
                if round % 10 == 9 {
                    #expect(try box.all() == model.values.sorted { $0.id < $1.id })
                    for conversation in 0..<7 {
                        let indexed = try box.query { Message.conversation == conversation }.build().find()
                        #expect(indexed == model.values.filter { $0.conversation == conversation }.sorted { $0.id < $1.id })
                    }
                }
            }
            #expect(try store.verify().isIntact)
        }
    }

    /// Index entries (`key ‖ id`) are assembled in the transaction's scratch memory, which
    /// grows to the longest key: keys of every length up to past the 400-byte cut, in
    /// random order, put, moved and removed, always find exactly the model's objects, and
    /// the index holds no stale entry (`verify`).
    @Test func entryKeysOfEveryLength() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Contact.self)
            var generator = SplitMix64(state: 41)
            func city() -> String {
                let length = Int.random(in: 0...520, using: &generator)
                return String(repeating: "c", count: length) + (Bool.random(using: &generator) ? "é" : "")
            }
            var contacts = (0..<150).map { _ in Contact(city: city()) }
            try box.put(&contacts)
            var model = Dictionary(uniqueKeysWithValues: contacts.map { ($0.id, $0) })
            for _ in 0..<300 {
                let id = Id.random(in: 1...150, using: &generator)
                if var contact = model[id] {
                    if Int.random(in: 0..<4, using: &generator) == 0 {
                        try box.remove(id)
                        model[id] = nil
                    } else {
                        contact.city = city()
                        try box.put(&contact)
                        model[id] = contact
                    }
                }
            }
            for city in Set(model.values.map(\.city)).union(["", "c", String(repeating: "c", count: 400)]) {
                let found = try box.query { Contact.city == city }.build().findIds()
                #expect(found == model.values.filter { $0.city == city }.map(\.id).sorted())
            }
            #expect(try store.verify().isIntact)
        }
    }

    /// A cursor carries no description of its walk; its failure reaches callers as a storage
    /// error that names the walk and keeps LMDB's code (never as the internal failure type).
    @Test func cursorFailuresNameTheirWalk() throws {
        try withStore { (store: Store) throws in
            _ = try store.box(for: Note.self).put(Note(title: "n"))
            try store.performRead { transaction -> Void in
                let table = try #require(try store.binding(for: Note.self, in: transaction)).table
                #expect {
                    try transaction.withCursor(table, "scanning Note") { _ in throw Cursor.Failure(code: MDB_CORRUPTED) }
                } throws: { error in
                    guard case CofferError.storage(.lmdb(.corrupted), let message) = error else { return false }
                    return message.hasPrefix("scanning Note: ")
                }
            }
            // A bare cursor (the write-back walk's) is described the same way.
            try store.performWrite { transaction -> Void in
                #expect {
                    try transaction.describingFailures("scanning Note") { throw Cursor.Failure(code: MDB_PAGE_NOTFOUND) }
                } throws: { error in
                    guard case CofferError.storage(.lmdb(.pageNotFound), let message) = error else { return false }
                    return message.hasPrefix("scanning Note: ")
                }
            }
        }
    }

    /// An update whose `.replace` conflict removes another object first still lands on the
    /// right record (the cursor is not reused after the removal).
    @Test func replaceConflictDuringAnUpdate() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Account.self)
            var a = Account(handle: "a", balance: 1)
            var b = Account(handle: "b", balance: 2)
            var c = Account(handle: "c", balance: 3)
            try box.put(&a); try box.put(&b); try box.put(&c)
            b.handle = "a"   // takes a's handle: a is removed
            b.balance = 20
            try box.put(&b)
            #expect(try box.get(a.id) == nil)
            #expect(try box.get(b.id)?.balance == 20)
            #expect(try box.get(c.id)?.handle == "c")
            #expect(try box.query { Account.handle == "a" }.build().findIds() == [b.id])
            #expect(try store.verify().isIntact)
        }
    }

    /// A built query whose parameter changes answers as a fresh query and as a scan.
    @Test func parameterLookUpsMatchScans() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            var messages = (0..<300).map { Message(conversation: $0 % 13, position: $0 % 17, text: "m\($0 % 5)") }
            try box.put(&messages)
            var indexed = try box.query { Message.conversation == 0 }.build()
            var scanned = try box.query { Message.position == 0 }.build()
            for value in -1...14 {
                try indexed.setParameter(Message.conversation, to: value)
                try scanned.setParameter(Message.position, to: value)
                #expect(try indexed.find() == messages.filter { $0.conversation == value })
                #expect(try indexed.findFirst() == messages.first { $0.conversation == value })
                #expect(try scanned.find() == messages.filter { $0.position == value })
            }
            // The remembered plan follows writes that move objects between values, and
            // other threads' copies of the query.
            for round in 0..<20 {
                var moved = messages[round * 7]
                moved.conversation = (moved.conversation + 5) % 13
                try box.put(&moved)
                messages[round * 7] = moved
                let value = round % 13
                try indexed.setParameter(Message.conversation, to: value)
                let copy = indexed
                let expected = messages.filter { $0.conversation == value }
                #expect(try indexed.find() == expected)
                let fromAnotherThread = try DispatchQueue.global().sync { try copy.find() }
                #expect(fromAnotherThread == expected)
            }
            // A wrong parameter still names itself.
            #expect { try indexed.setParameter(Message.position, to: 1) } throws: { error in
                "\(error)".contains("Message.position")
            }
        }
    }

    /// `findFirst` on a look-up the index answers alone takes the index's first entry: the
    /// lowest id holding the value (what a scan finds first), nil for a value nobody holds;
    /// an entry whose record is gone is reported as damage, never read as "no match".
    @Test func firstMatchOfALookUp() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            var messages = (0..<60).map { Message(conversation: ($0 * 7) % 5, position: $0, text: "m") }
            try box.put(&messages)
            var indexed = try box.query { Message.conversation == 0 }.build()
            var scanned = try box.query { Message.position >= 0 && Message.conversation == 0 }.build()
            for value in -1...6 {
                try indexed.setParameter(Message.conversation, to: value)
                try scanned.setParameter(Message.conversation, to: value)
                let expected = messages.first { $0.conversation == value }
                #expect(try indexed.findFirst() == expected)
                #expect(try scanned.findFirst() == expected)
            }
            let victim = try #require(messages.first { $0.conversation == 2 })
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Message.self, in: transaction)
                var key = withUnsafeBytes(of: victim.id.bigEndian) { Array($0) }
                try key.withUnsafeMutableBytes { raw in
                    var keyVal = MDB_val(UnsafeRawBufferPointer(raw))
                    try transaction.check(mdb_del(transaction.txn, binding.table, &keyVal, nil), "damaging")
                }
            }
            try indexed.setParameter(Message.conversation, to: 2)
            #expect { try indexed.findFirst() } throws: {
                guard case CofferError.damagedStore(.index("Message", "conversation"), let reason) = $0 else { return false }
                return reason.contains("\(victim.id)")
            }
        }
    }

    /// A remembered look-up plan stays a superset check for strings whose keys are cut:
    /// names longer than the key limit that share their first 400 bytes are told apart by
    /// the record, whichever value the parameter holds, also for case-insensitive queries.
    @Test func rememberedPlansRecheckCutStrings() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Person.self)
            let shared = String(repeating: "p", count: 500)
            var people = [Person(firstName: shared + "a", lastName: "A", age: 1),
                          Person(firstName: shared + "b", lastName: "B", age: 2),
                          Person(firstName: "short", lastName: "C", age: 3),
                          Person(firstName: "Short", lastName: "D", age: 4)]
            try box.put(&people)
            var query = try box.query { Person.firstName == "" }.build()
            for _ in 0..<2 {
                for person in people {
                    try query.setParameter(Person.firstName, to: person.firstName)
                    #expect(try query.find().map(\.lastName) == [person.lastName])
                    #expect(try query.findFirst()?.lastName == person.lastName)
                }
            }
            var folded = try box.query { Person.firstName.isEqual(to: "", caseSensitive: false) }.build()
            try folded.setParameter(Person.firstName, to: "SHORT")
            #expect(try folded.find().map(\.lastName) == ["C", "D"])
            #expect(try folded.findFirst()?.lastName == "C")  // a remembered look-up that needs its check
        }
    }

    /// A look-up query keeps its value apart from its condition (`Query.lookUpPosition`):
    /// whichever way the value is set (the property, the alias) and whichever run reads it
    /// (`find`, `findFirst`, `findIds`, `count`, `findUnique`, `describe`, a live query,
    /// copies of the query), each sees the current value, against a plain Swift filter, on
    /// an indexed property (the remembered look-up) and on one without an index.
    @Test func lookUpValuesReachEveryRun() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Person.self)
            var generator = SplitMix64(state: 99)
            let names = ["Ada", "Grace", "Alan", "Edsger", "Barbara"]
            var people = (0..<60).map { i in
                Person(firstName: names[i % names.count], lastName: "L\(i)", age: Int.random(in: 0..<6, using: &generator))
            }
            try box.put(&people)
            var byName = try box.query { "name" .= Person.firstName == "nobody" }.build()
            var byAge = try box.query { Person.age == -1 }.build()
            for round in 0..<40 {
                let name = (names + ["nobody"]).randomElement(using: &generator)!
                let age = Int.random(in: -1..<7, using: &generator)
                let before = byName, beforeName = try byName.findFirst()?.firstName ?? "nobody"
                if round % 2 == 0 { try byName.setParameter(Person.firstName, to: name) } else { try byName.setParameter("name", to: name) }
                try byAge.setParameter(Person.age, to: age)
                let named = people.filter { $0.firstName == name }.map(\.id)
                let aged = people.filter { $0.age == age }.map(\.id)
                #expect(try byName.findIds() == named)
                #expect(try byName.find().map(\.id) == named)
                #expect(try byName.findFirst()?.id == named.first)
                #expect(try byName.count() == named.count)
                #expect(try byAge.findIds() == aged)
                #expect(try byAge.findFirst()?.id == aged.first)
                #expect(try byAge.count() == aged.count)
                #expect(byName.describe().contains(name))
                // The copy taken before the change keeps its own value.
                #expect(try before.findIds() == people.filter { $0.firstName == beforeName }.map(\.id))
                #expect(try QueryController(byName, window: nil).objects.map(\.id) == named)
                if name != "nobody" {
                    #expect(throws: CofferError.self) { try byName.findUnique() }
                }
            }
            // A refused value (another type through the alias) leaves the condition as it was.
            #expect(throws: CofferError.self) { try byName.setParameter("name", to: 5) }
            let last = try byName.findFirst()?.firstName ?? "nobody"
            #expect(try byName.findIds() == people.filter { $0.firstName == last }.map(\.id))
        }
    }

    /// The remembered look-up encodes its key into the transaction's reusable bytes: for
    /// every indexed key type (strings, with NULs, non-ASCII and cut ones, integers, doubles
    /// with -0.0, dates, enums, bools, UUIDs), `findFirst` and `find` after `setParameter`
    /// in one read transaction answer as a plain Swift filter, for held and missing values.
    @Test func rememberedLookUpsOfEveryKeyType() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Contact.self)
            var generator = SplitMix64(state: 2718)
            let cities = ["", "Oslo", "Zürich", "a\u{0}b", "a", String(repeating: "x", count: 450) + "1",
                          String(repeating: "x", count: 450) + "2", "e\u{301}", "\u{e9}"]
            let tokens = (0..<4).map { _ in UUID() }
            var contacts = (0..<200).map { _ in
                var contact = Contact()
                contact.city = cities.randomElement(using: &generator)!
                contact.age = Int.random(in: -3...3, using: &generator)
                contact.score = [0.0, -0.0, 1.5, -2.25, .infinity].randomElement(using: &generator)!
                contact.born = Bool.random(using: &generator) ? Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...3, using: &generator))) : nil
                contact.active = .random(using: &generator)
                contact.token = Bool.random(using: &generator) ? tokens.randomElement(using: &generator)! : nil
                return contact
            }
            try box.put(&contacts)
            func check<V: QueryableValue>(_ property: Property<Contact, V>, _ values: [V], _ holds: @escaping (Contact, V) -> Bool) throws {
                var query = try box.query { property == values[0] }.build()
                try store.read {
                    for _ in 0..<3 {
                        for value in values {
                            try query.setParameter(property, to: value)
                            let expected = contacts.filter { holds($0, value) }.map(\.id)
                            #expect(try query.findFirst()?.id == expected.first, "\(property.name) == \(value)")
                            #expect(try query.find().map(\.id) == expected, "\(property.name) == \(value)")
                        }
                    }
                }
            }
            try check(Contact.city, cities + ["missing"]) { $0.city == $1 }
            try check(Contact.age, Array(-4...4)) { $0.age == $1 }
            try check(Contact.score, [0.0, -0.0, 1.5, -2.25, .infinity, 7]) { $0.score == $1 }
            try check(Contact.active, [true, false]) { $0.active == $1 }
            // -0.0 and 0.0 are one value with two neighbouring keys: zero bounds and lists
            // find both (a regression: the index missed one of them).
            for zero in [0.0, -0.0] {
                let cases: [(QueryCondition<Contact>, (Contact) -> Bool)] = [
                    (Contact.score >= zero, { $0.score >= zero }), (Contact.score > zero, { $0.score > zero }),
                    (Contact.score <= zero, { $0.score <= zero }), (Contact.score < zero, { $0.score < zero }),
                    (Contact.score.isBetween(zero, and: 1.5), { $0.score >= zero && $0.score <= 1.5 }),
                    (Contact.score.isBetween(-2.25, and: zero), { $0.score >= -2.25 && $0.score <= zero }),
                    (Contact.score.isIn([zero, 1.5]), { $0.score == zero || $0.score == 1.5 }),
                    (Contact.score == 0, { $0.score == 0 }),
                ]
                for (condition, holds) in cases {
                    let query = try box.query { condition }.build()
                    #expect(try query.findIds() == contacts.filter(holds).map(\.id), "\(query.describe())")
                }
            }
            // The same for an element index.
            let weighedBox = store.box(for: Weighed.self)
            var weighed = (0..<60).map { _ in
                Weighed(weights: (0..<Int.random(in: 0...3, using: &generator)).map { _ in [0.0, -0.0, 1.0, -1.0].randomElement(using: &generator)! })
            }
            try weighedBox.put(&weighed)
            for zero in [0.0, -0.0] {
                let query = try weighedBox.query { Weighed.weights.containsElement(zero) }.build()
                #expect(try query.findIds() == weighed.filter { $0.weights.contains(zero) }.map(\.id), "\(query.describe())")
            }
        }
    }

    /// A unique constraint and upserts treat -0.0 and 0.0 as the one value they are (two
    /// index keys): the second zero is a conflict, and an upsert by either finds the other.
    @Test func uniqueZerosOfBothSigns() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Measured.self)
            var positive = Measured(weight: 0.0, label: "first")
            try box.put(&positive)
            var negative = Measured(weight: -0.0, label: "second")
            #expect(throws: CofferError.self) { try box.put(&negative) }
            #expect(try negative.id == 0 && box.count() == 1)
            var again = Measured(weight: -0.0, label: "upserted")
            #expect(try box.upsert(&again, by: Measured.weight) == positive.id)
            #expect(try box.all() == [Measured(id: positive.id, weight: -0.0, label: "upserted")])
            var other = Measured(weight: 1.0)
            try box.put(&other)
            #expect(try store.verify().isIntact)
        }
    }

    /// `Box.forEach` visits what `all()` returns; inside a write it can change, remove and
    /// insert objects of the same box (random sizes force page splits) and stops at the last
    /// id stored when it began.
    @Test func forEachWalksAndWritesAlongAModel() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            var generator = SplitMix64(state: 7)
            var messages = (0..<2000).map { Message(conversation: $0 % 11, position: $0, text: String(repeating: "a", count: $0 % 40)) }
            try box.put(&messages)
            var visited: [Message] = []
            try box.forEach { visited.append($0) }
            #expect(visited == (try box.all()))

            var model = Dictionary(uniqueKeysWithValues: messages.map { ($0.id, $0) })
            let lastBefore = messages.map(\.id).max() ?? 0
            var seen: [Id] = []
            func case5Target(_ id: Id, _ generator: inout SplitMix64) -> Id {
                let offset = Id.random(in: 1...20, using: &generator)
                return Bool.random(using: &generator) ? id + offset : (id > offset ? id - offset : id + offset)
            }
            try store.write {
                try box.forEach { message in
                    seen.append(message.id)
                    #expect(model[message.id] == message, "the walk shows the transaction's own changes")
                    switch Int.random(in: 0..<7, using: &generator) {
                    case 5, 6:
                        // Change an object ahead of the walk or behind it: ahead, the walk
                        // shows the change when it gets there; the cursor moved either way.
                        let other = case5Target(message.id, &generator)
                        if var changed = model[other] {
                            changed.text = String(repeating: "o", count: Int.random(in: 0...300, using: &generator))
                            try box.put(&changed)
                            model[other] = changed
                        }
                    case 0:
                        _ = try box.remove(message.id)
                        model[message.id] = nil
                    case 1:
                        // Remove an object ahead of the walk: it is not visited.
                        let ahead = message.id + Id.random(in: 1...5, using: &generator)
                        if model[ahead] != nil {
                            _ = try box.remove(ahead)
                            model[ahead] = nil
                        }
                    case 2:
                        var inserted = Message(conversation: 99, position: -1, text: "new")
                        try box.put(&inserted)
                        model[inserted.id] = inserted
                    default:
                        var changed = message
                        changed.text = String(repeating: "z", count: Int.random(in: 0...600, using: &generator))
                        changed.conversation = Int.random(in: 0..<11, using: &generator)
                        try box.put(&changed)
                        model[changed.id] = changed
                    }
                }
            }
            #expect(seen == seen.sorted() && Set(seen).count == seen.count)
            #expect(seen.allSatisfy { $0 <= lastBefore })
            #expect(try box.all() == model.values.sorted { $0.id < $1.id })
            for conversation in [0, 5, 99] {
                #expect(try box.query { Message.conversation == conversation }.build().find()
                        == model.values.filter { $0.conversation == conversation }.sorted { $0.id < $1.id })
            }
            #expect(try store.verify().isIntact)
        }
    }

    /// A put of the object a write walk visits skips the walk for fields to carry only when
    /// the decode read the very record stored and met nothing this build does not declare
    /// (`WalkVisit`). Records of a newer build (an indexed property the older build lacks)
    /// keep their values through random walks of the older build that put the visited object
    /// once or twice, write it through the newer build first, put or remove others first,
    /// insert, or walk the table again inside the walk.
    @Test func walkPutsKeepFieldsOfOtherBuilds() throws {
        try withStore { (store: Store) throws in
            let older = store.box(for: Poem.self)
            let newer = store.box(for: V2.Poem.self)
            var generator = SplitMix64(state: 41)
            var titles: [Id: String] = [:]
            var ratings: [Id: Int] = [:]
            func insert(_ n: Int) throws {
                if Bool.random(using: &generator) {
                    let id = try newer.put(V2.Poem(title: "n\(n)", rating: n % 17))
                    (titles[id], ratings[id]) = ("n\(n)", n % 17)
                } else {
                    let id = try older.put(Poem(title: "o\(n)"))
                    (titles[id], ratings[id]) = ("o\(n)", 0)
                }
            }
            for n in 0..<300 { try insert(n) }
            for round in 0..<6 {
                try store.write {
                    try older.forEach { poem in
                        #expect(titles[poem.id] == poem.title)
                        var changed = poem
                        switch Int.random(in: 0..<9, using: &generator) {
                        case 0:
                            changed.title += "a"
                            try older.put(&changed)
                            changed.title += "b"
                            try older.put(&changed)
                        case 1:
                            // Another object first, ahead of the walk or behind it.
                            let other = poem.id + Id.random(in: 1...4, using: &generator) - 2
                            if other != poem.id, let title = titles[other] {
                                var moved = try #require(try older.get(other))
                                moved.title = title + "x"
                                try older.put(&moved)
                                titles[other] = moved.title
                            }
                            changed.title += "c"
                            try older.put(&changed)
                        case 2:
                            _ = try older.remove(poem.id)
                            (titles[poem.id], ratings[poem.id]) = (nil, nil)
                            return
                        case 3:
                            // The same table walked inside the walk: it moves the shared cursor.
                            if Int.random(in: 0..<4, using: &generator) == 0 {
                                var count = 0
                                try newer.forEach { _ in count += 1 }
                                #expect(count == titles.count)
                            }
                            changed.title += "e"
                            try older.put(&changed)
                        case 4:
                            // The newer build rewrites the record in place first: the older
                            // build's put must carry the new rating, not the one it decoded.
                            var rewritten = try #require(try newer.get(poem.id))
                            rewritten.rating += 100
                            try newer.put(&rewritten)
                            ratings[poem.id] = rewritten.rating
                            try older.put(&changed)
                        case 5:
                            try insert(1000 + round)
                        case 6:
                            return
                        default:
                            changed.title += "d"
                            try older.put(&changed)
                        }
                        titles[poem.id] = changed.title
                    }
                }
                let stored = try newer.all()
                #expect(stored.count == titles.count)
                for poem in stored {
                    #expect(titles[poem.id] == poem.title && ratings[poem.id] == poem.rating, "object \(poem.id) in round \(round)")
                }
                #expect(try IndexProbe.isConsistent(store, V2.Poem.self))
                #expect(try store.verify().isIntact)
            }
            // `modifyEach` writes through the same visit.
            #expect(try older.modifyEach { $0.title += "m" } == titles.count)
            for poem in try newer.all() {
                #expect(titles[poem.id].map { $0 + "m" } == poem.title && ratings[poem.id] == poem.rating)
            }
            #expect(try IndexProbe.isConsistent(store, V2.Poem.self))
        }
    }

    /// `Query.forEach` visits the matches; inside a write, a match removed or changed by an
    /// earlier visit is skipped or shown changed; a throw rolls the write back.
    @Test func queryForEachInAWrite() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            var messages = (0..<300).map { Message(conversation: $0 % 3, position: $0) }
            try box.put(&messages)
            let query = try box.query { Message.conversation == 1 }.ordered(by: Message.position, flags: .descending).build()
            var visited: [Message] = []
            try query.forEach { visited.append($0) }
            #expect(visited == (try query.find()))

            var seen: [Int] = []
            try store.write {
                try query.forEach { message in
                    seen.append(message.position)
                    // Remove the next match down and grow this one.
                    _ = try box.remove(message.id - 3)
                    var grown = message
                    grown.text = String(repeating: "g", count: 2000)
                    try box.put(&grown)
                }
            }
            #expect(seen == stride(from: 298, through: 1, by: -6).map { $0 })
            #expect(try box.query { Message.conversation == 1 }.build().count() == seen.count)

            #expect(throws: Boom.self) {
                try store.write {
                    try box.forEach { _ = try box.remove($0.id) }
                    throw Boom()
                }
            }
            #expect(try box.count() == 300 - seen.count)
        }
    }

    /// The inline integer ranges of scan conditions against a plain Swift filter: random
    /// values (narrow and wide encodings, extremes, nils) and random bounds, every
    /// comparison, closed and half-open ranges, both bound orders.
    @Test func integerScanRangesMatchAModel() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Everything.self)
            var generator = SplitMix64(state: 314)
            let specials: [Int64] = [.min, .min + 1, -129, -128, -1, 0, 1, 127, 128, 32_767, 32_768, .max - 1, .max]
            func pick() -> Int64 {
                Bool.random(using: &generator) ? specials.randomElement(using: &generator)!
                    : Int64.random(in: -70_000...70_000, using: &generator)
            }
            var objects: [Everything] = (0..<400).map { _ in
                var object = Everything()
                object.int64 = pick()
                object.int8 = Int8.random(in: .min ... .max, using: &generator)
                object.optInt64 = Bool.random(using: &generator) ? pick() : nil
                return object
            }
            try box.put(&objects)
            for _ in 0..<60 {
                let a = pick(), b = pick()
                let small = Int8.random(in: .min ... .max, using: &generator)
                let cases: [(QueryCondition<Everything>, (Everything) -> Bool)] = [
                    (Everything.int64 < a, { $0.int64 < a }),
                    (Everything.int64 <= a, { $0.int64 <= a }),
                    (Everything.int64 > a, { $0.int64 > a }),
                    (Everything.int64 >= a, { $0.int64 >= a }),
                    (Everything.int64 == a, { $0.int64 == a }),
                    (Everything.int64 != a, { $0.int64 != a }),
                    (Everything.int64.isBetween(a, and: b), { $0.int64 >= min(a, b) && $0.int64 <= max(a, b) }),
                    (Everything.int64 ∈ (min(a, b)..<max(a, b)), { $0.int64 >= min(a, b) && $0.int64 < max(a, b) }),
                    (Everything.int8 < small, { $0.int8 < small }),
                    (Everything.int8 >= small, { $0.int8 >= small }),
                    (Everything.optInt64 > a, { ($0.optInt64.map { $0 > a }) ?? false }),
                    (Everything.optInt64 ∈ (min(a, b)...max(a, b)), { ($0.optInt64.map { $0 >= min(a, b) && $0 <= max(a, b) }) ?? false }),
                ]
                for (condition, expected) in cases {
                    let query = try box.query { condition }.build()
                    #expect(try query.findIds() == objects.filter(expected).map(\.id), "\(query.describe())")
                }
            }
        }
    }

    /// A scan's `RecordFields.Shortcut` against the plain walk (`field(_:)`) over one long
    /// run of records, as a scan meets them: a few layouts that repeat (so the shortcut is
    /// learned and used), the field first, last, in the middle or missing, escaped property
    /// ids, long lengths, headers near the record's end, format 1 records, and damage (flipped
    /// bytes, cuts, extra bytes). Each record must give the same field (kind, bytes, offset)
    /// or the same damage either way.
    @Test func scanShortcutAgreesWithTheWalk() throws {
        var generator = SplitMix64(state: 1414)
        let wantedIds: [UInt16] = [3, 0, 2047, 40]
        let fixedKinds: [(UInt8, Int)] = [(1, 0), (2, 0), (3, 1), (4, 2), (5, 4), (6, 8), (12, 8), (14, 16)]
        func randomField(_ storedId: UInt16) -> RawField {
            if Bool.random(using: &generator) {
                let (kind, size) = fixedKinds.randomElement(using: &generator)!
                return RawField(storedId: storedId, kind: kind, payload: (0..<size).map { _ in .random(in: 0...255, using: &generator) })
            }
            let length = [0, 3, 12, 254, 255, 300].randomElement(using: &generator)!
            return RawField(storedId: storedId, kind: FieldKind.bytes.rawValue, payload: (0..<length).map { _ in .random(in: 0...255, using: &generator) })
        }
        var compared = 0, throwing = 0
        for wanted in wantedIds {
            // A handful of layouts: property ids in an order, the wanted one among them or not.
            let layouts: [[UInt16]] = (0..<4).map { _ in
                var ids = Array(Set((0..<Int.random(in: 0...6, using: &generator)).map { _ in
                    [0, 1, 2, 3, 5, 40, 2046, 2047, 3000].randomElement(using: &generator)! as UInt16
                }))
                ids.shuffle(using: &generator)
                return ids
            }
            let shortcut = RecordFields.Shortcut()
            for _ in 0..<3000 {
                let layout = layouts.randomElement(using: &generator)!
                // Same ids, usually the same kinds and lengths as the layout's previous records.
                var fields = layout.map { randomField($0) }
                if Int.random(in: 0..<4, using: &generator) > 0 {
                    fields = fields.map { field in
                        var same = field
                        same.payload = same.payload.map { _ in .random(in: 0...1, using: &generator) }
                        return same
                    }
                }
                var record = RawField.record(fields, compact: Int.random(in: 0..<20, using: &generator) > 0)
                switch Int.random(in: 0..<12, using: &generator) {
                case 0 where record.count > 1:
                    record[Int.random(in: 0..<record.count, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
                case 1 where record.count > 1:
                    record.removeLast(Int.random(in: 1..<record.count, using: &generator))
                case 2:
                    record += (0..<Int.random(in: 1...3, using: &generator)).map { _ in .random(in: 0...255, using: &generator) }
                default:
                    break
                }
                record.withUnsafeBytes { bytes in
                    let view = RecordFields(bytes: bytes, entity: "Test", id: 7)
                    let plain = Result { try view.field(wanted) }
                    let quick = Result { try view.inlinedField(wanted, shortcut: shortcut) }
                    switch (plain, quick) {
                    case (.success(let a), .success(let b)):
                        #expect(a?.kind == b?.kind && a.map { Array($0.payload) } == b.map { Array($0.payload) }
                                && a?.payload.baseAddress == b?.payload.baseAddress, "record \(record)")
                    case (.failure(let a), .failure(let b)):
                        #expect("\(a)" == "\(b)", "record \(record)")
                        throwing += 1
                    default:
                        Issue.record("the shortcut and the walk disagree on \(record): \(plain) against \(quick)")
                    }
                    compared += 1
                }
            }
        }
        #expect(compared == 12_000 && throwing > 100)
    }

    /// Scans of one numeric condition (the path with `RecordFields.Shortcut`) over records
    /// whose layouts change from record to record and repeat in runs: an optional title
    /// before the tested field (absent or not), a body whose length needs the short or the
    /// long length form, a year written in the narrowest of four integer kinds; against a
    /// Swift filter.
    @Test func numericScansOverChangingLayoutsMatchAModel() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Unindexed.Article.self)
            var generator = SplitMix64(state: 1618)
            var articles: [Unindexed.Article] = []
            var layout = (title: true, long: false, wide: 0)
            for _ in 0..<600 {
                if Int.random(in: 0..<8, using: &generator) == 0 {
                    layout = (.random(using: &generator), .random(using: &generator), Int.random(in: 0..<4, using: &generator))
                }
                let year = [Int.random(in: -100...100, using: &generator), Int.random(in: 200...30_000, using: &generator),
                            Int.random(in: 70_000...2_000_000, using: &generator), Int.random(in: 5_000_000_000...6_000_000_000, using: &generator)][layout.wide]
                articles.append(Unindexed.Article(title: layout.title ? "t\(Int.random(in: 0..<100, using: &generator))" : nil,
                                                  body: String(repeating: "b", count: layout.long ? 300 : Int.random(in: 0..<40, using: &generator)),
                                                  year: year))
            }
            try box.put(&articles)
            for _ in 0..<30 {
                let bound = articles.randomElement(using: &generator)!.year + Int.random(in: -1...1, using: &generator)
                let cases: [(QueryCondition<Unindexed.Article>, (Unindexed.Article) -> Bool)] = [
                    (Unindexed.Article.year < bound, { $0.year < bound }),
                    (Unindexed.Article.year >= bound, { $0.year >= bound }),
                    (Unindexed.Article.year == bound, { $0.year == bound }),
                    (Unindexed.Article.year.isBetween(bound - 500, and: bound), { $0.year >= bound - 500 && $0.year <= bound }),
                ]
                for (condition, holds) in cases {
                    let query = try box.query { condition }.build()
                    #expect(try query.findIds() == articles.filter(holds).map(\.id), "\(query.describe())")
                }
            }
        }
    }

    /// The bit-cast kind decoding agrees with `init(rawValue:)` for every byte.
    @Test func fieldKindDecodingMatchesRawValues() {
        for raw in UInt8.min...UInt8.max {
            #expect(FieldKind.decoded(raw) == FieldKind(rawValue: raw), "byte \(raw)")
        }
    }
}
