@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// Random writes, rolled-back transactions and pusher batches against a plain model of the
/// outbox's rules; after every step the stored outbox, pending map and counters must be
/// exactly the model's.
@Suite struct SyncRandomizedTests {
    /// The model of one outbox entry.
    struct Entry: Equatable {
        var operation: OutboxEntry.Operation
        var isCreation: Bool
        /// A whole creation: no fields listed, all of the object's at `clock`.
        var isWhole = false
        var syncId: UUID
        var clock: UInt64
        var fields: [UInt16: UInt64]
    }

    /// The model: the rules of `Transaction+SyncOutbox`, written plainly.
    struct Model {
        var outbox: [UInt64: Entry] = [:]
        var pending: [UUID: UInt64] = [:]
        var clock: UInt64 = 0
        var lastMid: UInt64 = 0
        var sendFloor: UInt64 = 0
        /// The current objects: id -> (sync id, field values by stored id).
        var objects: [Id: (syncId: UUID, fields: [UInt16: String])] = [:]
        /// The transaction's tick, once taken.
        var tick: UInt64?

        mutating func beginTransaction() { tick = nil }

        mutating func takeTick(now: UInt64) -> UInt64 {
            if let tick { return tick }
            clock = max(HybridClock.value(milliseconds: now), clock + 1)
            tick = clock
            return clock
        }

        mutating func enqueue(_ operation: OutboxEntry.Operation, isCreation: Bool, syncId: UUID, fields: Set<UInt16>, now: UInt64) {
            // A change joining an untaken whole creation records nothing, not even a tick.
            if operation == .upsert, let mid = pending[syncId], mid > sendFloor, outbox[mid]?.isWhole == true { return }
            let clock = takeTick(now: now)
            if let mid = pending[syncId], mid > sendFloor, var entry = outbox[mid] {
                switch operation {
                case .delete where entry.isCreation:
                    outbox[mid] = nil
                    pending[syncId] = nil
                case .delete:
                    outbox[mid] = Entry(operation: .delete, isCreation: false, syncId: syncId, clock: clock, fields: [:])
                    pending[syncId] = nil
                case .upsert:
                    for field in fields { entry.fields[field] = clock }
                    entry.clock = clock
                    outbox[mid] = entry
                }
                return
            }
            lastMid += 1
            // A new object (its id is fresh, so derived) gets a whole creation.
            outbox[lastMid] = isCreation
                ? Entry(operation: operation, isCreation: true, isWhole: true, syncId: syncId, clock: clock, fields: [:])
                : Entry(operation: operation, isCreation: false, syncId: syncId, clock: clock,
                        fields: Dictionary(uniqueKeysWithValues: fields.map { ($0, clock) }))
            pending[syncId] = operation == .upsert ? lastMid : nil
        }

        mutating func take(limit: Int) -> [UInt64] {
            let taken = Array(outbox.keys.sorted().prefix(limit))
            if let last = taken.last { sendFloor = max(sendFloor, last) }
            for mid in taken {
                if let entry = outbox[mid], pending[entry.syncId] == mid { pending[entry.syncId] = nil }
            }
            return taken
        }
    }

    static let titles = ["a", "b", "c"]
    static let notes: [String?] = [nil, "x", "y"]

    @Test func outboxFollowsTheModelThroughRandomWritesAndPushes() throws {
        let steps = Int(ProcessInfo.processInfo.environment["COFFER_SYNC_STEPS"] ?? "") ?? 400
        var random = SplitMix64(state: 7)
        try withStore { store in
            let clock = ManualClock(1_000)
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            let ids = try SyncProbe.fieldIds(Synced.Task.self, in: store)
            var model = Model()
            /// The stored fields of a task as the record holds them (nil optionals absent).
            func fields(_ task: Synced.Task) -> [UInt16: String] {
                var result: [UInt16: String] = [ids["title"]!: task.title, ids["done"]!: "\(task.done)", ids["priority"]!: "\(task.priority)"]
                if let note = task.note { result[ids["note"]!] = note }
                return result
            }
            func randomTask(id: Id = 0) -> Synced.Task {
                Synced.Task(id: id, title: Self.titles.randomElement(using: &random)!, done: Bool.random(using: &random),
                            priority: Int.random(in: 0...2, using: &random), note: Self.notes.randomElement(using: &random)!)
            }
            /// One random write, in the store and in `model`.
            func write(_ model: inout Model) throws {
                let existing = model.objects.keys.sorted()
                switch existing.isEmpty ? 0 : Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    var task = randomTask()
                    try tasks.put(&task)
                    let syncId = try #require(try tasks.syncId(of: task.id))
                    model.objects[task.id] = (syncId, fields(task))
                    model.enqueue(.upsert, isCreation: true, syncId: syncId, fields: Set(fields(task).keys), now: clock.now)
                case 4..<8:
                    let id = existing.randomElement(using: &random)!
                    var task = try #require(try tasks.get(id))
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: task.title = Self.titles.randomElement(using: &random)!
                    case 1: task.done.toggle()
                    case 2: task.priority = Int.random(in: 0...2, using: &random)
                    default: task.note = Self.notes.randomElement(using: &random)!
                    }
                    try tasks.put(&task)
                    let (syncId, before) = model.objects[id]!
                    let after = fields(task)
                    let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
                    model.objects[id] = (syncId, after)
                    if !changed.isEmpty { model.enqueue(.upsert, isCreation: false, syncId: syncId, fields: changed, now: clock.now) }
                default:
                    let id = existing.randomElement(using: &random)!
                    try tasks.remove(id)
                    let syncId = model.objects.removeValue(forKey: id)!.syncId
                    model.enqueue(.delete, isCreation: false, syncId: syncId, fields: [], now: clock.now)
                }
            }

            for step in 0..<steps {
                if Int.random(in: 0..<5, using: &random) == 0 {
                    // The physical clock jumps, sometimes backwards.
                    clock.now = UInt64(Int.random(in: 500...3_000, using: &random))
                }
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    model.beginTransaction()
                    try write(&model)
                case 5..<7:
                    // A transaction of several writes: one tick.
                    var next = model
                    next.beginTransaction()
                    try store.write { for _ in 0..<Int.random(in: 2...5, using: &random) { try write(&next) } }
                    model = next
                case 7:
                    // Rolled back: the model stays as it was.
                    var discarded = model
                    discarded.beginTransaction()
                    do {
                        try store.write {
                            for _ in 0..<Int.random(in: 1...4, using: &random) { try write(&discarded) }
                            throw Boom()
                        }
                    } catch is Boom {}
                default:
                    let limit = Int.random(in: 1...6, using: &random)
                    let batch = try store.takeSyncChanges(limit: limit)
                    let expected = model.take(limit: limit)
                    #expect(batch.map(\.mid) == expected, "step \(step)")
                    for change in batch {
                        let entry = model.outbox[change.mid]!
                        #expect(change.syncId == entry.syncId && change.clock == entry.clock)
                        // A whole creation sends every field the object holds now.
                        let sent = entry.isWhole
                            ? (model.objects.values.first { $0.syncId == entry.syncId }?.fields.keys.sorted() ?? [])
                            : entry.fields.keys.sorted()
                        #expect(change.fields.map(\.storedId) == sent, "step \(step)")
                        #expect(change.fields.allSatisfy { !entry.isWhole || $0.clock == entry.clock })
                        #expect(change.operation.rawValue == (entry.operation == .delete ? "delete" : "upsert"))
                    }
                    if let mid = expected.randomElement(using: &random), Bool.random(using: &random) {
                        try store.acknowledgeSyncChanges(through: mid)
                        for acknowledged in model.outbox.keys where acknowledged <= mid { model.outbox[acknowledged] = nil }
                    }
                }
                let stored = try SyncProbe.snapshot(store)
                #expect(stored.outbox.map(\.mid) == model.outbox.keys.sorted(), "step \(step)")
                for (mid, entry) in stored.outbox {
                    let fields = Dictionary(uniqueKeysWithValues: entry.fields.map { ($0.id, $0.clock) })
                    #expect(Entry(operation: entry.operation, isCreation: entry.isCreation, isWhole: entry.isWhole, syncId: entry.syncId,
                                  clock: entry.clock, fields: fields)
                            == model.outbox[mid], "step \(step), mid \(mid)")
                }
                #expect(stored.pending == model.pending, "step \(step)")
                #expect(stored.state == SyncState(clock: model.clock, lastMid: model.lastMid, sendFloor: model.sendFloor), "step \(step)")
                #expect(try store.pendingSyncCount() == model.outbox.count)
                if stored.outbox.map(\.mid) != model.outbox.keys.sorted() { return }
            }
        }
    }
}

extension SyncState {
    init(clock: UInt64, lastMid: UInt64, sendFloor: UInt64) {
        self.init()
        self.clock = clock
        self.lastMid = lastMid
        self.sendFloor = sendFloor
    }
}
