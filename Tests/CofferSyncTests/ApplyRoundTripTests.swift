@_spi(CofferSync) import Coffer
import CofferSync
import Foundation
import PostgresNIO
import Testing

/// One replica pushes through the real server (`coffer_push`), a second applies the pages
/// `coffer_pull` returns (`applyPulledPage`), and the two stores end up holding the same
/// objects, value for value, links resolved to the second store's own ids.
@Suite struct ApplyRoundTripTests {
    /// The wire value of every stored field of `sample`, by stored name.
    static func wireFields(_ sample: SyncedSample, ownerSyncId: UUID?) -> [String: String] {
        var fields = Dictionary(uniqueKeysWithValues: sample.wireFields(document: #"{"b": [1, 2.5, null, "x"], "a": {"nested": true}}"#))
        fields["owner"] = ownerSyncId.map { "\"\($0.uuidString)\"" } ?? "null"
        return fields
    }

    static func sample(_ index: Int) -> SyncedSample {
        var sample = SyncedSample()
        sample.flag = index % 2 == 0
        sample.int = index == 1 ? .min : index * 1_000_003
        sample.int8 = index == 1 ? .min : Int8(index)
        sample.int16 = .max
        sample.int32 = index == 2 ? .min : -Int32(index)
        sample.int64 = index == 1 ? .max : Int64(index) << 40
        sample.uint8 = .max
        sample.uint16 = UInt16(index)
        sample.uint32 = .max
        sample.uint64 = index == 1 ? .max : UInt64(index) << 60
        sample.uint = index == 2 ? .max : UInt(index)
        sample.float = index == 1 ? Float(0.1) : -0.0
        sample.double = [0.1, .nan, -0.0, .infinity, .leastNonzeroMagnitude][index % 5]
        sample.string = "héllo ☃ \"quoted\" \\ \n𝄞 \(index)"
        sample.date = Date(timeIntervalSinceReferenceDate: 786_000_000.123456789 + Double(index))
        sample.data = Data([0, 1, 127, 128, 255, UInt8(index)])
        sample.bytes = [9, 8, 0, 255, UInt8(index)]
        sample.strings = ["a", "", "ü\(index)"]
        sample.ints = [Int.min, 0, Int.max]
        sample.int8s = [-128, 127]
        sample.uint64s = [.max, 0, 42]
        sample.doubles = [0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, .nan, .infinity, -.infinity]
        sample.floats = [Float(1.1), 0.5]
        sample.dates = [Date(timeIntervalSinceReferenceDate: -1e9 + Double(index))]
        sample.bools = [true, false]
        sample.uuids = [UUID(), UUID()]
        sample.document = ["a": ["nested": true], "b": [1, 2.5, nil, "x"]]
        sample.counts = ["x": index, "y": -2]
        sample.optionalText = index % 3 == 0 ? nil : "text \(index)"
        sample.home = index % 2 == 0 ? SyncedPlace("Paris \(index)", zip: index % 4 == 0 ? "75001" : nil) : nil
        return sample
    }

    /// Pushes every outbox entry of `store` in one batch; returns the server's reply.
    static func push(_ store: Store, schema: String, connection: PostgresConnection) async throws -> [String: Any] {
        let changes = try store.takeSyncChanges(limit: 10_000)
        let owners = store.box(for: SyncedOwner.self)
        let samples = store.box(for: SyncedSample.self)
        var batch: [String] = []
        for change in changes {
            var fields: [String] = []
            var clocks: [String] = []
            if change.operation == .upsert, change.objectExists {
                let wire: [String: String]
                if change.entity == "SyncedOwner" {
                    let owner = try #require(try owners.id(forSyncId: change.syncId).flatMap { try owners.get($0) })
                    wire = ["name": SyncWire.string(owner.name)]
                } else {
                    let sample = try #require(try samples.id(forSyncId: change.syncId).flatMap { try samples.get($0) })
                    let ownerSyncId = try sample.owner.targetId.flatMap { try owners.syncId(of: $0) }
                    wire = wireFields(sample, ownerSyncId: ownerSyncId)
                }
                for field in change.fields {
                    fields.append("\(SyncWire.literal(field.name)): \(try #require(wire[field.name], "no wire value for \(field.name)"))")
                    clocks.append("\(SyncWire.literal(field.name)): \"\(field.clock)\"")
                }
            }
            batch.append("""
                {"mid": \(change.mid), "entity": "\(change.entity)", "id": "\(change.syncId.uuidString)", "op": "\(change.operation.rawValue)", \
                "create": \(change.isCreation), "hlc": "\(change.clock)", "fields": {\(fields.joined(separator: ", "))}, "clocks": {\(clocks.joined(separator: ", "))}}
                """)
        }
        let reply = try await connection.push(schema, client: try store.syncClientId(), json: "[" + batch.joined(separator: ",\n") + "]")
        if let last = changes.last?.mid { try store.acknowledgeSyncChanges(through: last) }
        return reply
    }

    /// Applies every page of `entity` to `store`, `limit` changes a page, until the cursor
    /// passes the transactions committed before the call.
    static func pull(_ entity: String, into store: Store, schema: String, stream: String, limit: Int,
                     connection: PostgresConnection) async throws -> [SyncPullSummary] {
        let target = try #require(UInt64(try await connection.value("SELECT pg_snapshot_xmax(pg_current_snapshot())::text") ?? ""))
        let deadline = Date().addingTimeInterval(30)
        var summaries: [SyncPullSummary] = []
        while Date() < deadline {
            let cursor = try store.syncCursor(entity: entity, stream: stream)
            let page = try #require(try await connection.value("SELECT \(schema).coffer_pull(\(literal(entity)), \(literal(cursor)), \(limit))::text"))
            let summary = try store.applyPulledPage(Data(page.utf8), entity: entity, stream: stream)
            summaries.append(summary)
            if !summary.more, let reached = UInt64(summary.cursor), reached >= target { return summaries }
            if !summary.more { try await Task.sleep(for: .milliseconds(5)) }
        }
        Issue.record("the pull of \(entity) did not reach the horizon in time")
        return summaries
    }

    @Test func aSecondReplicaPullsWhatTheFirstPushedValueForValue() async throws {
        let schema = try SyncSchema([SyncedSample.self, SyncedOwner.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let (first, second) = (NSTemporaryDirectory() + "coffer-apply-" + UUID().uuidString, NSTemporaryDirectory() + "coffer-apply-" + UUID().uuidString)
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let source = try Store(directory: first, options: StoreOptions(durability: .noSync))
        let replica = try Store(directory: second, options: StoreOptions(durability: .noSync))
        defer {
            try? source.close()
            try? replica.close()
        }
        let stream = "test#\(s)"
        try await withInstalled(schema) { connection in
            let owners = source.box(for: SyncedOwner.self)
            let samples = source.box(for: SyncedSample.self)
            var ownerList = (0..<3).map { SyncedOwner(name: "owner \($0)") }
            try owners.put(&ownerList)
            var sampleList = (0..<7).map { Self.sample($0) }
            for index in sampleList.indices { sampleList[index].owner = ToOne(id: ownerList[index % 3].id) }
            sampleList[6].owner = nil
            try samples.put(&sampleList)
            var reply = try await Self.push(source, schema: s, connection: connection)
            #expect((reply["rejected"] as? [Any])?.isEmpty == true, "\(reply)")

            // Changes after the first push: an update, a removal, a new object.
            sampleList[0].string = "changed"
            sampleList[0].uint64 = 7
            try samples.put(&sampleList[0])
            try samples.remove(sampleList[1].id)
            var late = Self.sample(9)
            late.owner = ToOne(id: ownerList[2].id)
            try samples.put(&late)
            reply = try await Self.push(source, schema: s, connection: connection)
            #expect((reply["rejected"] as? [Any])?.isEmpty == true, "\(reply)")

            // The replica pulls the links' owners last: every link waits, then resolves.
            try Self.register(replica)
            let pulledSamples = try await Self.pull("SyncedSample", into: replica, schema: s, stream: stream, limit: 3, connection: connection)
            #expect(pulledSamples.reduce(0) { $0 + $1.upserted } == 7)
            let pulledOwners = try await Self.pull("SyncedOwner", into: replica, schema: s, stream: stream, limit: 2, connection: connection)
            #expect(pulledOwners.reduce(0) { $0 + $1.upserted } == 3)
            #expect(pulledSamples.allSatisfy { $0.conflicts == 0 && $0.fieldsKeptLocal == 0 })

            try Self.expectEqual(source, replica)
            #expect(try replica.pendingSyncCount() == 0, "pulled changes are not pushed back")
            #expect(try replica.verify().problems.isEmpty)

            // Pulling again changes nothing.
            let again = try await Self.pull("SyncedSample", into: replica, schema: s, stream: stream, limit: 100, connection: connection)
            #expect(again.reduce(0) { $0 + $1.upserted + $1.deleted } == 0)
        }
    }

    /// Registers both entities in `store` (a write that leaves nothing behind).
    static func register(_ store: Store) throws {
        try store.write {
            var probe = SyncedOwner(name: "registers the entity")
            try store.box(for: SyncedOwner.self).put(&probe)
            try store.box(for: SyncedOwner.self).remove(probe.id)
            var sampleProbe = SyncedSample()
            try store.box(for: SyncedSample.self).put(&sampleProbe)
            try store.box(for: SyncedSample.self).remove(sampleProbe.id)
        }
    }

    /// Both stores hold the same objects by sync id, every field the same; links point at
    /// the objects of the same sync ids.
    static func expectEqual(_ a: Store, _ b: Store) throws {
        for (store, other) in [(a, b), (b, a)] {
            let samples = store.box(for: SyncedSample.self)
            let otherSamples = other.box(for: SyncedSample.self)
            #expect(try samples.count() == otherSamples.count())
            for sample in try samples.all() {
                let syncId = try #require(try samples.syncId(of: sample.id))
                let match = try #require(try otherSamples.id(forSyncId: syncId).flatMap { try otherSamples.get($0) }, "\(syncId) is missing")
                let ownerSyncId = try sample.owner.targetId.flatMap { try store.box(for: SyncedOwner.self).syncId(of: $0) }
                let matchOwnerSyncId = try match.owner.targetId.flatMap { try other.box(for: SyncedOwner.self).syncId(of: $0) }
                #expect(ownerSyncId == matchOwnerSyncId)
                #expect(wireFields(sample, ownerSyncId: ownerSyncId) == wireFields(match, ownerSyncId: matchOwnerSyncId))
                #expect(sample.document == match.document)
            }
            let owners = store.box(for: SyncedOwner.self)
            for owner in try owners.all() {
                let syncId = try #require(try owners.syncId(of: owner.id))
                #expect(try other.box(for: SyncedOwner.self).id(forSyncId: syncId).flatMap { try other.box(for: SyncedOwner.self).get($0) }?.name == owner.name)
            }
        }
    }
}
