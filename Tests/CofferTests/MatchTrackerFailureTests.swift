@testable import Coffer
import Foundation
import Testing

/// A failed update of a query's matches leaves them as they were.
@Suite struct MatchTrackerFailureTests {
    /// Regression: `MatchTracker.apply` removed the changed ids' entries before reading their
    /// records; a damaged record partway left the matches without rows that were still
    /// stored, and the next change set was applied on top of the gap.
    @Test func aDamagedRecordPartwayLeavesTheMatchesAndTheNextApplyReloads() throws {
        try withStore { (store: Store) throws in
            let messages = store.box(for: Message.self)
            try messages.put((0..<6).map { Message(conversation: 1, position: $0, text: "m\($0)") })
            let query = try messages.query { Message.conversation == 1 }.ordered(by: Message.position).build()
            var tracker = MatchTracker(condition: query.condition, orders: query.orders, entity: "Message")
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            try store.read {
                try store.performRead { transaction in
                    try tracker.reload(in: transaction, binding: try store.binding(for: Message.self, in: transaction), store: store)
                }
            }
            let before = tracker.entries.map(\.id)
            #expect(before == [1, 2, 3, 4, 5, 6])
            // One commit changes objects 2 and 5 and leaves 5's record damaged.
            try store.write {
                for id: Id in [2, 5] {
                    var message = try #require(try messages.get(id))
                    message.text = "changed"
                    try messages.put(&message)
                }
                try store.performWrite { transaction in
                    let binding = try store.writableBinding(for: Message.self, in: transaction)
                    try Damage.put(transaction, binding.table, key: withUnsafeBytes(of: Id(5).bigEndian) { Array($0) }, value: DamageTests.garbage)
                }
            }
            let damaging = recorded.last
            try store.read {
                try store.performRead { transaction in
                    let binding = try store.binding(for: Message.self, in: transaction)
                    #expect(throws: CofferError.self) { try tracker.apply(damaging, in: transaction, binding: binding, store: store) }
                }
            }
            #expect(tracker.entries.map(\.id) == before, "no row lost to the failed apply")
            // Repaired by a put; the next change set finds every row.
            try messages.put(Message(id: 5, conversation: 1, position: 5, text: "repaired"))
            let repairing = recorded.last
            try store.read {
                try store.performRead { transaction in
                    let binding = try store.binding(for: Message.self, in: transaction)
                    _ = try tracker.apply(repairing, in: transaction, binding: binding, store: store)
                }
            }
            #expect(tracker.entries.map(\.id) == before)
            #expect(tracker.reloads == 2, "the apply after a failed one reloads")
        }
    }
}
