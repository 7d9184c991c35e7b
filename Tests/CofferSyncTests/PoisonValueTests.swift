@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// No value a user can store in a synced entity may wedge the push or the pull. Objects with
/// values at every type's edges (integer extremes, NaN, infinities, -0.0, subnormals, date
/// extremes, empty and very long strings, combining and unusual characters, U+0000 anywhere,
/// large data, empty arrays, nested documents, keys that look like the wire format's tags)
/// go from one replica through the server to another: each change either arrives exactly
/// (bit for bit, scalar for scalar) or is a recorded rejection, and every queue drains in
/// one pass. Seeded: COFFER_POISON_SEED replays a failing run (the seed is in every message).
@Suite(.timeLimit(.minutes(3))) struct PoisonValueTests {
    @Test func edgeValuesRoundTripOrAreRejectedAndNothingWedges() async throws {
        let seed = ProcessInfo.processInfo.environment["COFFER_POISON_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(state: seed)
        let schema = try SyncSchema([SyncedSample.self, SyncedOwner.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let entities: [any Entity.Type] = [SyncedSample.self, SyncedOwner.self]
            let replica = (a: try SyncReplica(store: a.store, entities: entities, transport: try await testTransport(schema: s, timeout: .seconds(20))),
                           b: try SyncReplica(store: b.store, entities: entities, transport: try await testTransport(schema: s, timeout: .seconds(20))))
            let samples = (a: a.store.box(for: SyncedSample.self), b: b.store.box(for: SyncedSample.self))
            var sent: [UUID: Fingerprint] = [:]   // what A put last, by sync id

            for round in 0..<3 {
                // Round 0 creates; the later ones change a few fields of some objects and create more.
                var objects: [SyncedSample] = []
                if round > 0 {
                    for var sample in try samples.a.all() where Bool.random(using: &random) {
                        for _ in 0..<Int.random(in: 1...3, using: &random) { Edge.change(&sample, using: &random) }
                        objects.append(sample)
                    }
                }
                for _ in 0..<(round == 0 ? 24 : 8) { objects.append(Edge.sample(using: &random)) }
                for index in objects.indices {
                    try samples.a.put(&objects[index])
                    let syncId = try #require(try samples.a.syncId(of: objects[index].id))
                    sent[syncId] = Fingerprint(objects[index])
                }
                let rejectedBefore = Set(try a.store.syncRejections().map(\.mid))

                // One pass drains the outbox: nothing is left to retry.
                do {
                    try await replica.a.syncNow()
                } catch {
                    Issue.record("seed \(seed), round \(round): the push wedged: \(error)")
                    return
                }
                #expect(try a.store.pendingSyncCount() == 0, "seed \(seed), round \(round): the outbox did not drain in one pass")
                #expect(replica.a.currentStatus.pullFailures.isEmpty, "seed \(seed): \(replica.a.currentStatus.pullFailures.map { "\($0.error)" })")

                // The refused changes are recorded; their objects are as the server has them.
                let refused = try a.store.syncRejections().filter { !rejectedBefore.contains($0.mid) }
                for rejection in refused {
                    #expect(rejection.reason.contains("U+0000"), "seed \(seed), round \(round): an edge value was refused: \(rejection.reason) \(rejection.values.prefix(300))")
                    sent[rejection.syncId] = nil
                }
                let serverIds = Set(try await connection.rows("SELECT sync_id::text FROM \(s).\"SyncedSample\"").compactMap { $0.first ?? nil }.compactMap(UUID.init(uuidString:)))

                // B gets exactly what A sent and the server took.
                let arrived = try await eventually(attempts: 100, seconds: 60) {
                    do {
                        try await replica.b.syncNow()
                    } catch {
                        Issue.record("seed \(seed), round \(round): the pull wedged: \(error)")
                        return true
                    }
                    // Every object and its latest values: another test's open transaction can
                    // hold the server's horizon back, so B may see the objects before their updates.
                    guard try samples.b.count() == serverIds.count else { return false }
                    for object in try samples.b.all() {
                        guard let syncId = try samples.b.syncId(of: object.id) else { return false }
                        if let expected = sent[syncId], !expected.differences(from: Fingerprint(object)).isEmpty { return false }
                    }
                    return true
                }
                #expect(arrived, "seed \(seed), round \(round): B did not reach the server's objects")
                for object in try samples.b.all() {
                    let syncId = try #require(try samples.b.syncId(of: object.id))
                    guard let expected = sent[syncId] else {
                        // A refused creation's object is not on the server; a refused update's object is, with the server's values.
                        #expect(serverIds.contains(syncId), "seed \(seed): B holds an object the server does not")
                        continue
                    }
                    let differences = expected.differences(from: Fingerprint(object))
                    #expect(differences.isEmpty, "seed \(seed), round \(round): \(syncId) changed on its way: \(differences)")
                }
                for syncId in sent.keys where !serverIds.contains(syncId) {
                    Issue.record("seed \(seed), round \(round): \(syncId) was neither stored by the server nor refused")
                }
                // A holds the server's state too: what it sent, or the server's state of a refused object.
                for syncId in serverIds {
                    let local = try #require(try samples.a.id(forSyncId: syncId).flatMap { try samples.a.get($0) }, "seed \(seed): A lost \(syncId)")
                    let pulled = try #require(try samples.b.id(forSyncId: syncId).flatMap { try samples.b.get($0) })
                    #expect(Fingerprint(local).differences(from: Fingerprint(pulled)).isEmpty, "seed \(seed), round \(round): A and B differ on \(syncId)")
                }
                // Refused objects that were never on the server are gone from A.
                #expect(try samples.a.count() == serverIds.count, "seed \(seed), round \(round): A holds objects the server does not")
            }
            await replica.a.transport.close()
            await replica.b.transport.close()
        }
    }
}

/// Values the pusher once sent in the export format (`coffer dump`'s) instead of the wire
/// format, which the server refused or changed: each arrives exactly now.
@Suite(.timeLimit(.minutes(2))) struct WireValueTests {
    /// Puts `sample` on one replica, syncs it through the server to another, and returns what
    /// was refused and which fields arrived different.
    static func roundTrip(_ sample: SyncedSample) async throws -> (refused: [String], differences: [String]) {
        let schema = try SyncSchema([SyncedSample.self, SyncedOwner.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        return try await withInstalled(schema) { _ in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let entities: [any Entity.Type] = [SyncedSample.self, SyncedOwner.self]
            let replica = (a: try SyncReplica(store: a.store, entities: entities, transport: try await testTransport(schema: s)),
                           b: try SyncReplica(store: b.store, entities: entities, transport: try await testTransport(schema: s)))
            var sample = sample
            try a.store.box(for: SyncedSample.self).put(&sample)
            try await replica.a.syncNow()
            let refused = try a.store.syncRejections().map(\.reason)
            var differences: [String] = []
            if refused.isEmpty {
                let pulled = try await eventually {
                    try await replica.b.syncNow()
                    return try b.store.box(for: SyncedSample.self).count() == 1
                }
                let arrived = try #require(try b.store.box(for: SyncedSample.self).all().first, "pulled: \(pulled)")
                differences = Fingerprint(sample).differences(from: Fingerprint(arrived))
            }
            await replica.a.transport.close()
            await replica.b.transport.close()
            return (refused, differences)
        }
    }

    @Test func doublesFloatsAndDatesAtTheirEdgesArriveExactly() async throws {
        for (double, float, seconds) in [(Double.nan, Float.nan, 786_000_000.123456789), (.infinity, -.infinity, .nan),
                                         (-0.0, -0.0, -0.0), (.leastNonzeroMagnitude, .greatestFiniteMagnitude, Date.distantPast.timeIntervalSinceReferenceDate)] {
            var sample = SyncedSample()
            sample.double = double
            sample.float = float
            sample.date = Date(timeIntervalSinceReferenceDate: seconds)
            sample.doubles = [double, 0.1, -.infinity]
            sample.floats = [float, -0.0]
            sample.dates = [Date(timeIntervalSinceReferenceDate: seconds), .distantFuture]
            let (refused, differences) = try await Self.roundTrip(sample)
            #expect(refused.isEmpty && differences.isEmpty, "\(double), \(float), \(seconds): refused \(refused), changed \(differences)")
        }
    }

    @Test func byteArraysArriveExactly() async throws {
        var sample = SyncedSample()
        sample.bytes = [0, 1, 127, 128, 255]
        let (refused, differences) = try await Self.roundTrip(sample)
        #expect(refused.isEmpty && differences.isEmpty, "refused \(refused), changed \(differences)")
    }

    @Test func negativeZeroInADocumentArrivesAsNegativeZero() async throws {
        var sample = SyncedSample()
        sample.document = ["zero": .number(-0.0), "list": [.number(-0.0), .number(.nan), "-0"]]
        let (refused, differences) = try await Self.roundTrip(sample)
        #expect(refused.isEmpty && differences.isEmpty, "refused \(refused), changed \(differences)")
    }
}

/// Values at the edges of each stored type.
enum Edge {
    static let doubles: [Double] = [
        .nan, -.nan, .infinity, -.infinity, -0.0, 0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1, 1e-300, 9_007_199_254_740_992, Double(Int64.max), .ulpOfOne, .pi,
    ]
    static let floats: [Float] = [
        .nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, 0.1, .ulpOfOne,
    ]
    static let seconds: [Double] = [
        Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate, 0, -0.0, -978_307_200,
        .leastNonzeroMagnitude, 1e15, -1e15, 786_000_000.123456789, .nan, .infinity, -.infinity,
    ]
    static let strings: [String] = [
        "", " ", "plain", "\u{0}", "a\u{0}b", "\u{0}start", "end\u{0}", "\\u0000 is not NUL", "\\\\u0000", "e\u{301}\u{302}\u{303}",
        "\u{1F469}\u{200D}\u{1F4BB}", "\u{FEFF}bom", "\u{FFFE}\u{FFFF}", "\u{10FFFF}", "\u{202E}rtl", "\u{2028}\u{2029}",
        "\u{1}\u{1F}\u{7F}\u{85}", "tab\tnew\nline\r", "\"quoted\" \\ /", "{\"nul\": \"AA==\"}", "NaN", "Infinity", "-0",
        String(repeating: "long ✓ ", count: 20_000),
    ]
    static let uuids: [UUID] = [
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
        UUID(),
    ]

    static func pick<T>(_ values: [T], using random: inout SplitMix64) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

    static func array<T>(_ values: [T], using random: inout SplitMix64) -> [T] {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return []
        case 1: return values
        case 2: return (0..<Int.random(in: 1...400, using: &random)).map { _ in pick(values, using: &random) }
        default: return [pick(values, using: &random)]
        }
    }

    static func document(depth: Int, using random: inout SplitMix64) -> JSONValue {
        let keys = ["", "k", "\u{0}", "a\u{0}", "$number", "$object", "nul", "é", "e\u{301}", "\u{1F469}"]
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &random) {
        case 0: return .number(pick(doubles, using: &random))
        case 1: return .string(pick(strings.filter { $0.count < 1000 }, using: &random))
        case 2: return Bool.random(using: &random) ? .bool(true) : .null
        case 3: return .number(Double(Int.random(in: -1000...1000, using: &random)))
        case 4:
            return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in document(depth: depth + 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members[pick(keys, using: &random)] = document(depth: depth + 1, using: &random)
            }
            return .object(members)
        }
    }

    static func sample(using random: inout SplitMix64) -> SyncedSample {
        var sample = SyncedSample()
        for field in 0..<fieldCount where field == 0 || Int.random(in: 0..<3, using: &random) > 0 {
            set(field, of: &sample, using: &random)
        }
        return sample
    }

    static func change(_ sample: inout SyncedSample, using random: inout SplitMix64) {
        set(Int.random(in: 0..<fieldCount, using: &random), of: &sample, using: &random)
    }

    static let fieldCount = 29

    static func set(_ field: Int, of sample: inout SyncedSample, using random: inout SplitMix64) {
        switch field {
        case 0: sample.flag.toggle()
        case 1: sample.int = pick([.min, .max, 0, -1], using: &random)
        case 2: sample.int8 = pick([.min, .max, 0], using: &random)
        case 3: sample.int16 = pick([.min, .max, 0], using: &random)
        case 4: sample.int32 = pick([.min, .max, 0], using: &random)
        case 5: sample.int64 = pick([.min, .max, 0], using: &random)
        case 6: sample.uint8 = pick([.max, 0], using: &random)
        case 7: sample.uint16 = pick([.max, 0], using: &random)
        case 8: sample.uint32 = pick([.max, 0], using: &random)
        case 9: sample.uint64 = pick([.max, 0, 1 << 63, 9_007_199_254_740_993], using: &random)
        case 10: sample.uint = pick([.max, 0], using: &random)
        case 11: sample.float = pick(floats, using: &random)
        case 12: sample.double = pick(doubles, using: &random)
        case 13: sample.string = pick(strings, using: &random)
        case 14: sample.date = Date(timeIntervalSinceReferenceDate: pick(seconds, using: &random))
        case 15:
            let size = pick([0, 1, 3, 1 << 16, 0, 1, 1 << 20], using: &random)
            sample.data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        case 16: sample.bytes = array([0, 1, 127, 128, 255], using: &random)
        case 17: sample.uuid = pick(uuids, using: &random)
        case 18: sample.strings = array(strings.filter { $0.count < 1000 }, using: &random)
        case 19: sample.ints = array([.min, .max, 0], using: &random)
        case 20: sample.int8s = array([.min, .max, 0], using: &random)
        case 21: sample.uint64s = array([.max, 0, 1 << 63], using: &random)
        case 22: sample.doubles = array(doubles, using: &random)
        case 23: sample.floats = array(floats, using: &random)
        case 24: sample.dates = array(seconds.map { Date(timeIntervalSinceReferenceDate: $0) }, using: &random)
        case 25: sample.bools = array([true, false], using: &random)
        case 26: sample.uuids = array(uuids, using: &random)
        case 27: sample.document = document(depth: 0, using: &random)
        default:
            switch Int.random(in: 0..<4, using: &random) {
            case 0: sample.counts = [:]
            case 1: sample.counts = ["": 0, "k": .max, "m": .min]
            case 2: sample.counts = ["a\u{0}": 1]
            default: sample.counts = ["$number": 1, "e\u{301}": 2]
            }
            sample.optionalText = Bool.random(using: &random) ? nil : pick(strings.filter { $0.count < 1000 }, using: &random)
            sample.home = Bool.random(using: &random) ? nil
                : SyncedPlace(pick(strings.filter { $0.count < 1000 }, using: &random), zip: Bool.random(using: &random) ? nil : pick(["", "\u{0}", "75001"], using: &random))
        }
    }
}

/// A sample's values where equal means the same bits: doubles by bit pattern (every NaN
/// alike, as the type map makes NaNs one), strings by their Unicode scalars (Swift's `==`
/// would take "é" and "e\u{301}" for one), documents recursively so.
struct Fingerprint: Equatable {
    var values: [String: String]

    init(_ sample: SyncedSample) {
        func bits(_ value: Double) -> String { value.isNaN ? "nan" : String(value.bitPattern, radix: 16) }
        func bits(_ value: Float) -> String { value.isNaN ? "nan" : String(value.bitPattern, radix: 16) }
        func scalars(_ text: String) -> String { text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ") }
        func document(_ value: JSONValue) -> String {
            switch value {
            case .null: return "null"
            case .bool(let flag): return "\(flag)"
            case .number(let number): return "n" + bits(number)
            case .string(let text): return "s(" + scalars(text) + ")"
            case .array(let elements): return "[" + elements.map(document).joined(separator: ",") + "]"
            case .object(let members):
                return "{" + members.map { (scalars($0.key), document($0.value)) }.sorted { $0.0 < $1.0 }
                    .map { "\($0.0):\($0.1)" }.joined(separator: ",") + "}"
            }
        }
        values = [
            "flag": "\(sample.flag)", "int": "\(sample.int)", "int8": "\(sample.int8)", "int16": "\(sample.int16)", "int32": "\(sample.int32)",
            "int64": "\(sample.int64)", "uint8": "\(sample.uint8)", "uint16": "\(sample.uint16)", "uint32": "\(sample.uint32)",
            "uint64": "\(sample.uint64)", "uint": "\(sample.uint)", "float": bits(sample.float), "double": bits(sample.double),
            "string": scalars(sample.string), "date": bits(sample.date.timeIntervalSinceReferenceDate),
            "data": sample.data.base64EncodedString(), "bytes": "\(sample.bytes)", "uuid": sample.uuid.uuidString,
            "strings": sample.strings.map(scalars).joined(separator: "|"), "ints": "\(sample.ints)", "int8s": "\(sample.int8s)",
            "uint64s": "\(sample.uint64s)", "doubles": sample.doubles.map(bits).joined(separator: ","),
            "floats": sample.floats.map(bits).joined(separator: ","),
            "dates": sample.dates.map { bits($0.timeIntervalSinceReferenceDate) }.joined(separator: ","),
            "bools": "\(sample.bools)", "uuids": "\(sample.uuids)", "document": document(sample.document),
            "counts": sample.counts.map { "\(scalars($0.key))=\($0.value)" }.sorted().joined(separator: ","),
            "optionalText": sample.optionalText.map(scalars) ?? "nil",
            "home": sample.home.map { scalars($0.city) + "/" + ($0.zip.map(scalars) ?? "nil") } ?? "nil",
        ]
    }

    /// The fields whose values differ, with both values (cut short).
    func differences(from other: Fingerprint) -> [String] {
        values.keys.sorted().compactMap { key in
            let (mine, theirs) = (values[key] ?? "-", other.values[key] ?? "-")
            return mine == theirs ? nil : "\(key): \(mine.prefix(120)) became \(theirs.prefix(120))"
        }
    }
}
