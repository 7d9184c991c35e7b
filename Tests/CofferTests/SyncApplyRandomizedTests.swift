@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Random local writes, pushes (taken, acknowledged or not) and pulled pages against a
/// model that applies the rules by hand: per-field last-writer-wins by (clock, replica)
/// against unacknowledged local changes, deletes winning both ways, missing fields kept.
@Suite struct SyncApplyRandomizedTests {
    struct Fields: Equatable {
        var title: String
        var done = false
        var priority = 0
        var note: String?
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func applyFollowsTheModel(seed: Int) throws {
        var random = SplitMix64(state: UInt64(seed))
        try withStore { store in
            try register(Synced.Task.self, in: store)
            let clock = ManualClock(5_000_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            let fieldIds = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            let names = Dictionary(uniqueKeysWithValues: fieldIds.map { ($1, $0) })
            let client = try store.syncClientId()
            let origins: [UUID?] = [nil, UUID(), UUID(), UUID(uuidString: "ffffffff-ffff-ffff-ffff-ffffffffffff")]
            var model: [UUID: Fields] = [:]
            var known: [UUID] = (0..<4).map { _ in UUID() }   // objects the "server" has
            var cursor = 0

            func value(_ name: String, _ fields: Fields) -> String {
                switch name {
                case "title": return PageBuilder.string(fields.title)
                case "done": return fields.done ? "true" : "false"
                case "priority": return String(fields.priority)
                default: return fields.note.map(PageBuilder.string) ?? "null"
                }
            }
            func set(_ name: String, from source: Fields, into target: inout Fields) {
                switch name {
                case "title": target.title = source.title
                case "done": target.done = source.done
                case "priority": target.priority = source.priority
                default: target.note = source.note
                }
            }
            func randomFields() -> Fields {
                Fields(title: "t\(Int.random(in: 0..<5, using: &random))", done: Bool.random(using: &random),
                       priority: Int.random(in: -3...3, using: &random), note: Bool.random(using: &random) ? nil : "n\(Int.random(in: 0..<3, using: &random))")
            }

            for step in 0..<250 {
                clock.now += UInt64.random(in: 0...3, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1:
                    // A local write: a change of a stored object, or a new one.
                    let stored = try tasks.all()
                    if let task = stored.randomElement(using: &random), Bool.random(using: &random) {
                        var changed = task
                        let fields = randomFields()
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0: changed.title = fields.title
                        case 1: changed.done = fields.done
                        case 2: changed.priority = fields.priority
                        default: changed.note = fields.note
                        }
                        try tasks.put(&changed)
                        let syncId = try #require(try tasks.syncId(of: changed.id))
                        model[syncId] = Fields(title: changed.title, done: changed.done, priority: changed.priority, note: changed.note)
                    } else {
                        let fields = randomFields()
                        var task = Synced.Task(title: fields.title, done: fields.done, priority: fields.priority, note: fields.note)
                        try tasks.put(&task)
                        let syncId = try #require(try tasks.syncId(of: task.id))
                        model[syncId] = fields
                        known.append(syncId)
                    }
                case 2:
                    if let task = try tasks.all().randomElement(using: &random) {
                        let syncId = try #require(try tasks.syncId(of: task.id))
                        try tasks.remove(task.id)
                        model[syncId] = nil
                    }
                case 3:
                    // A push: taken, and acknowledged or not (a failed push).
                    let batch = try store.takeSyncChanges(limit: Int.random(in: 1...20, using: &random))
                    if let last = batch.last?.mid, Bool.random(using: &random) { try store.acknowledgeSyncChanges(through: last) }
                default:
                    // A pulled page, checked against the rules given the outbox now.
                    let snapshot = try SyncProbe.snapshot(store)
                    let outbox = snapshot.outbox
                    var builder = PageBuilder()
                    var expected = model
                    for _ in 0..<Int.random(in: 0...4, using: &random) {
                        guard let syncId = known.randomElement(using: &random) else { continue }
                        let entries = outbox.map(\.entry).filter { $0.syncId == syncId }
                        // A whole creation a pusher took protects nothing: the object's row
                        // on the server shows the creation was applied.
                        let untakenWhole = outbox.filter { $0.entry.syncId == syncId && $0.entry.isWhole && $0.mid > snapshot.state.sendFloor }
                            .map(\.entry.clock)
                        let remoteMilliseconds = clock.now + UInt64.random(in: 0...4, using: &random) - 2
                        let stamp = HybridClock.value(milliseconds: remoteMilliseconds) + UInt64.random(in: 0...2, using: &random)
                        let origin = origins.randomElement(using: &random) ?? nil
                        if Int.random(in: 0..<6, using: &random) == 0 {
                            builder.delete(syncId, clock: stamp, origin: origin)
                            expected[syncId] = nil
                            continue
                        }
                        let remote = randomFields()
                        var sent = ["title", "done", "priority", "note"].filter { _ in Bool.random(using: &random) }
                        if expected[syncId] == nil, !sent.contains("title") { sent.append("title") }
                        builder.upsert(syncId, clock: stamp, origin: origin, fields: sent.map { ($0, value($0, remote)) })
                        if entries.contains(where: { $0.operation == .delete }) { continue }   // deletes win
                        var fields = expected[syncId] ?? Fields(title: remote.title)
                        let isNew = expected[syncId] == nil
                        // An untaken whole creation stands for every field the object holds,
                        // at its clock: one it leaves empty (a nil note) is not sent, so the
                        // server holds no clock for it.
                        let holdsNote = fields.note != nil
                        for name in sent {
                            let whole = name != "note" || holdsNote ? untakenWhole : []
                            let local = (entries.flatMap(\.fields).filter { names[$0.id] == name }.map(\.clock) + whole).max()
                            if !isNew, let local, (local, client.uuidString) >= (stamp, (origin ?? PulledPage.nilOrigin).uuidString) { continue }
                            set(name, from: remote, into: &fields)
                        }
                        expected[syncId] = fields
                    }
                    cursor += 1
                    _ = try store.applyPulledPage(builder.page(cursor: String(cursor)), entity: "Task", stream: PageBuilder.stream)
                    model = expected
                }
                var actual: [UUID: Fields] = [:]
                for task in try tasks.all() {
                    let syncId = try #require(try tasks.syncId(of: task.id))
                    actual[syncId] = Fields(title: task.title, done: task.done, priority: task.priority, note: task.note)
                }
                #expect(actual == model, "seed \(seed), step \(step)")
                if actual != model { return }
            }
            #expect(try store.verify().problems.isEmpty)
        }
    }
}
