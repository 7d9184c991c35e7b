@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// A synced entity with unique properties of both policies, required and optional.
enum SyncedUniques {
    @Sync
    struct Label: Entity {
        var id: Id = 0
        @Unique(onConflict: .replace) var slug: String
        @Unique var code: String
        @Unique(onConflict: .replace) var alias: Int?
        @Unique var serial: Int?
        var note = ""
    }
}

/// Pulled changes against local holders of their unique values: every constraint is checked
/// before any holder gives way, only holders the server never saw give way, and applying a
/// pulled change never sends a delete.
@Suite struct SyncUniqueApplyTests {
    let stream = PageBuilder.stream

    func upsert(_ syncId: UUID, slug: String, code: String, alias: Int? = nil, serial: Int? = nil, note: String = "remote",
                clock: UInt64 = 10, into builder: inout PageBuilder) {
        builder.upsert(syncId, clock: clock, origin: nil,
                       fields: [("slug", PageBuilder.string(slug)), ("code", PageBuilder.string(code)),
                                ("alias", alias.map(String.init) ?? "null"), ("serial", serial.map(String.init) ?? "null"),
                                ("note", PageBuilder.string(note))])
    }

    @Test func aReplaceHolderIsKeptWhenALaterFailIndexParksTheChange() throws {
        try withStore { store in
            try register(SyncedUniques.Label.self, in: store)
            let labels = store.box(for: SyncedUniques.Label.self)
            var pushed = SyncedUniques.Label(slug: "s", code: "k")
            var unsent = SyncedUniques.Label(slug: "u", code: "v")
            var codeHolder = SyncedUniques.Label(slug: "x", code: "c")
            try labels.put(&pushed)
            try labels.put(&codeHolder)
            let batch = try store.takeSyncChanges(limit: 10)
            try store.acknowledgeSyncChanges(through: batch.last?.mid ?? 0)
            try labels.put(&unsent)
            let before = try SyncProbe.snapshot(store).outbox.map(\.entry)

            // Each pulled object would take a `.replace` slug and then a `.fail` code: parked
            // (on the slug its holder the server knows, on the code), no slug holder touched.
            let (first, second) = (UUID(), UUID())
            var builder = PageBuilder()
            upsert(first, slug: "s", code: "c", into: &builder)
            upsert(second, slug: "u", code: "c", into: &builder)
            let summary = try store.applyPulledPage(builder.page(), entity: "Label", stream: stream)
            #expect(summary.conflicts == 2 && summary.upserted == 0)
            #expect(try labels.get(pushed.id)?.slug == "s")
            #expect(try labels.get(unsent.id)?.slug == "u")
            #expect(try store.syncConflicts().sorted { $0.syncId == first && $1.syncId != first }.map(\.property) == ["slug", "code"])
            #expect(try SyncProbe.snapshot(store).outbox.map(\.entry) == before)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func aHolderTheServerKnowsIsNeverRemovedByAPull() throws {
        try withStore { store in
            try register(SyncedUniques.Label.self, in: store)
            let labels = store.box(for: SyncedUniques.Label.self)
            var acknowledged = SyncedUniques.Label(slug: "a", code: "1")
            try labels.put(&acknowledged)
            try store.acknowledgeSyncChanges(through: try store.takeSyncChanges(limit: 10).last?.mid ?? 0)
            var taken = SyncedUniques.Label(slug: "b", code: "2", alias: 7)
            try labels.put(&taken)
            _ = try store.takeSyncChanges(limit: 10)  // on its way, not acknowledged
            var unsent = SyncedUniques.Label(slug: "c", code: "3", alias: 8)
            try labels.put(&unsent)
            let unsentSyncId = try #require(try labels.syncId(of: unsent.id))
            let before = try SyncProbe.snapshot(store).outbox.map(\.entry)
            #expect(before.contains { $0.syncId == unsentSyncId })

            let (one, two, three) = (UUID(), UUID(), UUID())
            var builder = PageBuilder()
            upsert(one, slug: "a", code: "r1", into: &builder)
            upsert(two, slug: "r2", code: "r2", alias: 7, into: &builder)
            upsert(three, slug: "c", code: "r3", alias: 8, into: &builder)
            let summary = try store.applyPulledPage(builder.page(), entity: "Label", stream: stream)
            #expect(summary.conflicts == 2 && summary.upserted == 1)
            // Known to the server (acknowledged or taken): kept, the pulled object parked.
            #expect(try labels.get(acknowledged.id)?.slug == "a" && labels.get(taken.id)?.alias == 7)
            #expect(Set(try store.syncConflicts().map(\.syncId)) == [one, two])
            // Never seen by the server: it gives way, and its creation leaves the outbox unsent.
            #expect(try labels.get(unsent.id) == nil)
            #expect(try labels.id(forSyncId: three).flatMap { try labels.get($0) }?.alias == 8)
            let after = try SyncProbe.snapshot(store).outbox.map(\.entry)
            #expect(after == before.filter { $0.syncId != unsentSyncId })
            #expect(!after.contains { $0.operation == .delete })
            #expect(try store.verify().problems.isEmpty)
        }
    }

    /// Random local objects (unsent, taken, acknowledged) and pulled objects taking random
    /// values of four unique properties (two `.replace`, two `.fail`), against a model of the
    /// rule: a pulled object is stored only when every value is free or held by objects the
    /// server never saw under a `.replace` property (they give way), else it is parked.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func pulledUniqueValuesFollowTheModel(seed: Int) throws {
        var random = SplitMix64(state: UInt64(seed) &* 7919)
        try withStore { store in
            try register(SyncedUniques.Label.self, in: store)
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            let labels = store.box(for: SyncedUniques.Label.self)

            struct Values: Equatable {
                var slug: String
                var code: String
                var alias: Int?
                var serial: Int?
                var note: String
            }
            struct Object {
                var values: Values
                /// The server has never seen it (its creation is untaken).
                var isLocalOnly: Bool
            }
            var model: [UUID: Object] = [:]
            var parked: Set<UUID> = []
            var remote: [UUID] = []  // objects the server holds
            var cursor = 0

            func randomValues() -> Values {
                Values(slug: "s\(Int.random(in: 0..<4, using: &random))", code: "c\(Int.random(in: 0..<4, using: &random))",
                       alias: Bool.random(using: &random) ? nil : Int.random(in: 0..<3, using: &random),
                       serial: Bool.random(using: &random) ? nil : Int.random(in: 0..<3, using: &random),
                       note: "n\(Int.random(in: 0..<100, using: &random))")
            }
            func holders(of values: Values, except syncId: UUID?) -> (replace: [UUID], fail: [UUID]) {
                var replace: [UUID] = [], fail: [UUID] = []
                for (other, object) in model where other != syncId {
                    if object.values.slug == values.slug || (values.alias != nil && object.values.alias == values.alias) { replace.append(other) }
                    if object.values.code == values.code || (values.serial != nil && object.values.serial == values.serial) { fail.append(other) }
                }
                return (replace, fail)
            }

            for step in 0..<200 {
                clock.now += 1 + UInt64.random(in: 0...3, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1, 2:
                    // A local object whose values are free here.
                    let values = randomValues()
                    let taken = holders(of: values, except: nil)
                    guard taken.replace.isEmpty, taken.fail.isEmpty else { continue }
                    var label = SyncedUniques.Label(slug: values.slug, code: values.code, alias: values.alias, serial: values.serial, note: values.note)
                    try labels.put(&label)
                    model[try #require(try labels.syncId(of: label.id))] = Object(values: values, isLocalOnly: true)
                case 3:
                    // A local edit of a field no index holds.
                    guard let (syncId, _) = model.randomElement(using: &random), let id = try labels.id(forSyncId: syncId),
                          var label = try labels.get(id) else { continue }
                    label.note = "local \(step)"
                    try labels.put(&label)
                    model[syncId]?.values.note = label.note
                case 4:
                    // A push: taken, and acknowledged or not.
                    let batch = try store.takeSyncChanges(limit: 1000)
                    if Bool.random(using: &random), let last = batch.last { try store.acknowledgeSyncChanges(through: last.mid) }
                    for syncId in model.keys where model[syncId]?.isLocalOnly == true {
                        model[syncId]?.isLocalOnly = false
                        remote.append(syncId)
                    }
                default:
                    // A pulled object, new or known to the server, newer than every local change.
                    let syncId = remote.isEmpty || Bool.random(using: &random) ? UUID() : remote.randomElement(using: &random)!
                    let values = randomValues()
                    var builder = PageBuilder()
                    upsert(syncId, slug: values.slug, code: values.code, alias: values.alias, serial: values.serial, note: values.note,
                           clock: (clock.now + 60_000) << 16, into: &builder)
                    cursor += 1
                    _ = try store.applyPulledPage(builder.page(cursor: String(cursor)), entity: "Label", stream: stream)
                    parked.remove(syncId)
                    let taken = holders(of: values, except: syncId)
                    if !taken.fail.isEmpty || taken.replace.contains(where: { model[$0]?.isLocalOnly != true }) {
                        parked.insert(syncId)
                    } else {
                        for holder in taken.replace { model[holder] = nil }
                        model[syncId] = Object(values: values, isLocalOnly: false)
                        if !remote.contains(syncId) { remote.append(syncId) }
                    }
                }
                // The store matches the model, and applying never queued a delete.
                var stored: [UUID: Values] = [:]
                for label in try labels.all() {
                    stored[try #require(try labels.syncId(of: label.id))] =
                        Values(slug: label.slug, code: label.code, alias: label.alias, serial: label.serial, note: label.note)
                }
                #expect(stored == model.mapValues(\.values), "seed \(seed), step \(step)")
                #expect(Set(try store.syncConflicts().map(\.syncId)) == parked, "seed \(seed), step \(step)")
                let outbox = try SyncProbe.snapshot(store).outbox.map(\.entry)
                #expect(!outbox.contains { $0.operation == .delete }, "seed \(seed), step \(step)")
                #expect(outbox.allSatisfy { model[$0.syncId] != nil }, "seed \(seed), step \(step)")
                if stored != model.mapValues(\.values) { return }
            }
            #expect(try store.verify().problems.isEmpty)
        }
    }
}
