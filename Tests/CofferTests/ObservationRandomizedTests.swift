@testable import Coffer
import Foundation
import Testing

@Suite struct ObservationRandomizedTests {
    /// Change sets of consecutive commits, coalesced with `append`, equal the change set of
    /// all their operations in one transaction (what a slow observer relies on).
    @Test(arguments: [11, 12, 13] as [UInt64])
    func coalescedChangeSetsEqualOneTransaction(seed: UInt64) {
        var random = SplitMix64(state: seed)
        for _ in 0..<300 {
            var stored = Set<Id>((1...6).filter { _ in Bool.random(using: &random) })
            var whole = ChangeLog()
            var coalesced = ChangeSet()
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                var commit = ChangeLog()
                for _ in 0..<Int.random(in: 0...4, using: &random) {
                    let id = Id.random(in: 1...8, using: &random)
                    if Bool.random(using: &random) {
                        let isInsert = !stored.contains(id)
                        stored.insert(id)
                        commit.recordPut("E", id, isInsert: isInsert)
                        whole.recordPut("E", id, isInsert: isInsert)
                    } else if stored.remove(id) != nil {
                        commit.recordRemove("E", id)
                        whole.recordRemove("E", id)
                    }
                }
                coalesced.append(commit.folded())
            }
            let expected = whole.folded().entities["E"] ?? .init()
            let got = coalesced.entities["E"] ?? .init()
            #expect(got.put == expected.put && got.removed == expected.removed && got.inserted == expected.inserted)
        }
    }

    /// The list diff on random lists: applying it gives the new list, and it moves only the
    /// rows outside a longest increasing run.
    @Test func listDiffRebuildsTheNewListWithMinimalMoves() {
        var random = SplitMix64(state: 5)
        for _ in 0..<2_000 {
            let old = (1...Id(Int.random(in: 1...30, using: &random))).filter { _ in Int.random(in: 0..<4, using: &random) > 0 }.shuffled(using: &random)
            var new = old.filter { _ in Int.random(in: 0..<5, using: &random) > 0 }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                new.insert(Id.random(in: 100...200, using: &random), at: Int.random(in: 0...new.count, using: &random))
            }
            new = Array(NSOrderedSet(array: new).array as! [Id])
            if Bool.random(using: &random), new.count > 1 { new.swapAt(0, new.count - 1) }
            let diff = ListDiff(old: old, new: new)
            var rows = old
            for index in (diff.deleted + diff.moved.map(\.from)).sorted(by: >) { rows.remove(at: index) }
            let insertions = diff.inserted.map { ($0, new[$0]) } + diff.moved.map { ($0.to, old[$0.from]) }
            for (index, id) in insertions.sorted(by: { $0.0 < $1.0 }) { rows.insert(id, at: index) }
            #expect(rows == new)
            let common = new.compactMap { old.firstIndex(of: $0) }
            #expect(diff.moved.count == common.count - ListDiff.longestIncreasingRun(common).count)
            var increasing = 0
            var best: [Int] = []
            for value in common {   // quadratic check of the run's length
                var length = 1
                for (index, earlier) in common.prefix(increasing).enumerated() where earlier < value { length = max(length, best[index] + 1) }
                best.append(length)
                increasing += 1
            }
            #expect(ListDiff.longestIncreasingRun(common).count == (best.max() ?? 0))
        }
    }

    /// Several tasks write concurrently (async writes) while a controller follows: every
    /// change set applies to the previous window, and once the writers are done the window
    /// is the query's.
    @Test func concurrentWritersAndOneController() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let query = try messages.query { Message.conversation == 1 }.ordered(by: Message.position).build()
            let controller = try QueryController(query, window: 20, updatable: [Message.position, Message.isUnread])
            let writers = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            var random = SplitMix64(state: UInt64(writer))
                            for step in 0..<150 {
                                let conversation = Int.random(in: 1...2, using: &random)
                                let position = Int.random(in: 1...1_000, using: &random)
                                let victim = Id.random(in: 1...600, using: &random)
                                try await store.write {
                                    try messages.put(Message(conversation: conversation, position: position, text: "\(writer)-\(step)"))
                                    if step % 3 == 0 { try messages.remove(victim) }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // A sentinel at the top of the window marks the end of the writes.
                try await store.write { try messages.put(Message(conversation: 1, position: 0, text: "last")) }
            }
            var shown = controller.objects
            var applied = 0
            while shown.first?.text != "last" {
                let change = try await nextChange(controller)
                applied += 1
                #expect(apply(change, to: shown).map(\.id) == change.objects.map(\.id))
                shown = change.objects
            }
            try await writers.value
            #expect(shown == (try query.find(offset: 0, limit: 20)))
            #expect(applied > 1)
        }
    }

    /// A write transaction that began before the controller existed and commits after its
    /// first snapshot is not lost (its change set names no ids: the controller runs again).
    @Test func writeBegunBeforeTheControllerIsSeen() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            try messages.put(Message(conversation: 1, position: 5))
            let inside = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            let writer = Thread {
                do {
                    try store.write {
                        try messages.put(Message(conversation: 1, position: 1))
                        inside.signal()
                        proceed.wait()
                    }
                } catch {
                    Issue.record(error)
                }
            }
            writer.start()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { inside.wait(); continuation.resume() }
            }
            let controller = try QueryController(messages.query().ordered(by: Message.position).build())
            #expect(controller.count == 1)
            proceed.signal()
            let change = try await nextChange(controller)
            #expect(change.inserted == [0] && change.objects.map(\.position) == [1, 5])
        }
    }
}
