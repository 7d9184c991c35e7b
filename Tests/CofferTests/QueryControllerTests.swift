@testable import Coffer
import Foundation
import Testing

@Suite struct QueryControllerTests {
    /// Layer's scenarios: the latest messages of a conversation in a window of -25, with
    /// `isUnread` and `position` updatable.
    @Test func layerScenarios() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            for position in 0..<30 { try messages.put(Message(conversation: 1, position: position, text: "m\(position)")) }
            try messages.put(Message(conversation: 2, position: 0))
            let conversation = try messages.query { Message.conversation == 1 }.ordered(by: Message.position).build()

            // The latest 20 messages, as a plain query and as live results.
            let latest = try messages.query { Message.conversation == 1 }
                .ordered(by: Message.position, flags: .descending).build()
            #expect(try latest.find(offset: 0, limit: 20).map(\.position) == Array((10..<30).reversed()))
            var live = latest.results(limit: 20).makeAsyncIterator()
            #expect(try await live.next()?.first?.position == 29)

            let controller = try QueryController(conversation, window: -25, updatable: [Message.isUnread, Message.position])
            #expect(controller.count == 25 && controller.totalCount == 30)
            #expect(controller.object(at: 0)?.position == 5 && controller.object(at: 25) == nil && controller.object(at: -1) == nil)

            // A new message: appended at the end, the oldest leaves the window.
            let new = try messages.put(Message(conversation: 1, position: 30, text: "new"))
            var change = try await nextChange(controller)
            #expect(change.inserted == [24] && change.deleted == [0] && change.moved.isEmpty && change.updated.isEmpty)
            #expect(change.objects.last?.id == new && change.totalCount == 31)
            #expect(try await live.next()?.first?.id == new, "query.results() re-emits after the commit")

            // A message moved to the end by its position: one move.
            var moved = try #require(controller.object(at: 3))
            moved.position = 99
            try messages.put(&moved)
            change = try await nextChange(controller)
            #expect(change.moved == [QueryChange<Message>.Move(from: 3, to: 24, isUpdated: true)])
            #expect(change.inserted.isEmpty && change.deleted.isEmpty && change.updated.isEmpty)

            // Marked read: an update in place.
            var read = try #require(controller.object(at: 10))
            read.isUnread = false
            try messages.put(&read)
            change = try await nextChange(controller)
            #expect(change.updated == [10] && change.moved.isEmpty)

            // A property outside `updatable` changes: no event. The next event is the next
            // real change, and the objects it carries hold the new text.
            var edited = try #require(controller.object(at: 11))
            edited.text = "edited"
            try messages.put(&edited)
            var gone = try #require(controller.object(at: 12))
            try messages.remove(gone.id)
            change = try await nextChange(controller)
            #expect(change.deleted == [12] && change.updated.isEmpty && change.inserted == [0])
            #expect(change.objects.contains { $0.id == edited.id && $0.text == "edited" })
            gone = try #require(controller.object(at: 0))
            #expect(controller.objects == change.objects)

            // An unread-messages controller: marking a message read deletes its row.
            let unread = try QueryController(messages.query { Message.conversation == 1 && Message.isUnread == true }
                .ordered(by: Message.position).build(), window: -25, updatable: [Message.isUnread, Message.position])
            var first = try #require(unread.objects.last)
            first.isUnread = false
            try messages.put(&first)
            change = try await nextChange(unread)
            #expect(change.deleted == [24] && change.inserted == [0])
        }
    }

    @Test func growingTheWindowReportsTheRowsItAdds() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            for position in 0..<20 { try messages.put(Message(conversation: 1, position: position)) }
            let query = try messages.query().ordered(by: Message.position).build()
            let controller = try QueryController(query, window: -5)
            #expect(controller.objects.map(\.position) == Array(15..<20))
            controller.window = -10          // load earlier messages
            var change = try await nextChange(controller)
            #expect(change.inserted == Array(0..<5) && change.deleted.isEmpty && change.moved.isEmpty)
            #expect(change.objects.map(\.position) == Array(10..<20))
            controller.window = 3
            change = try await nextChange(controller)
            #expect(change.objects.map(\.position) == [0, 1, 2] && change.deleted == Array(0..<10) && change.inserted == [0, 1, 2])
            controller.window = nil
            change = try await nextChange(controller)
            #expect(change.objects.count == 20 && change.inserted == Array(3..<20))
            controller.window = Int.min       // no trap: "the last Int.max"
            controller.window = 0
            change = try await nextChange(controller)
            #expect(change.objects.isEmpty && change.deleted.count == 20)
        }
    }

    @Test func oneChangeAmongManyResultsDoesNotRunTheQueryAgain() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            try messages.put((0..<5_000).map { Message(conversation: 1, position: $0) })
            let controller = try QueryController(messages.query { Message.conversation == 1 }.ordered(by: Message.position).build(), window: -25)
            #expect(controller.reloads == 1)
            for position in 0..<20 {
                try messages.put(Message(conversation: 1, position: 10_000 + position))
                let change = try await nextChange(controller)
                #expect(change.inserted == [24] && change.deleted == [0])
            }
            #expect(controller.reloads == 1)
        }
    }

    @Test func linkedQueriesRunAgainWhenTheLinkedEntityChanges() async throws {
        try await withStore { (store: Store) async throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joe = try customers.put(Customer(name: "Joe"))
            let jim = try customers.put(Customer(name: "Jim"))
            var ids: [Id] = []
            for (index, customer) in [joe, jim, joe].enumerated() {
                var order = Order(date: Date(), total: Double(index))
                order.customer.targetId = customer
                ids.append(try orders.put(&order))
            }
            let controller = try QueryController(orders.query { Order.customer.linked { Customer.name == "Joe" } }
                .ordered(by: Order.total).build())
            #expect(controller.objects.map(\.id) == [ids[0], ids[2]])
            _ = try customers.put(Customer(id: jim, name: "Joe"))
            var change = try await nextChange(controller)
            #expect(change.inserted == [1] && change.objects.map(\.id) == ids)
            try customers.remove(joe)   // clears two links: those orders leave
            change = try await nextChange(controller)
            #expect(change.deleted == [0, 2] && change.objects.map(\.id) == [ids[1]])
        }
    }

    @Test func droppedControllerStopsObservingAndClosingEndsTheSequence() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let messages = store.box(for: Message.self)
        let query = try messages.query().build()
        do {
            let controller = try QueryController(query, window: 10)
            #expect(store.changeHandlerCount == 1)
            _ = controller.count
        }
        #expect(store.changeHandlerCount == 0, "no reference cycle keeps a dropped controller observing")

        let controller = try QueryController(query)
        let task = Task { () throws -> Int in
            var count = 0
            for try await _ in controller.changes() { count += 1 }
            return count
        }
        try messages.put(Message(conversation: 1, position: 1))
        try store.close()
        let delivered = try await task.value
        #expect(delivered <= 1)
        #expect(store.changeHandlerCount == 0)

        // Cancelling the iterating task ends the loop and unsubscribes.
        let other = TemporaryDirectory()
        defer { other.cleanUp() }
        let second = try Store(directory: other.path, options: StoreOptions(durability: .noSync))
        let watched = try QueryController(second.box(for: Message.self).query().build())
        let loop = Task { () throws -> Int in
            var count = 0
            for try await _ in watched.changes() { count += 1 }
            return count
        }
        loop.cancel()
        #expect(try await loop.value == 0)
        #expect(second.changeHandlerCount == 0)
        try second.close()
    }

    @Test func slowConsumerGetsOneChangeFromTheLastDeliveredWindow() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let controller = try QueryController(messages.query().ordered(by: Message.position).build(), window: 50)
            var model: [Message] = []
            var random = SplitMix64(state: 7)
            for step in 0..<2_000 {
                if !model.isEmpty, Int.random(in: 0..<3, using: &random) == 0 {
                    let victim = model.remove(at: Int.random(in: 0..<model.count, using: &random))
                    try messages.remove(victim.id)
                } else {
                    var message = Message(conversation: 1, position: Int.random(in: 0..<500, using: &random), text: "\(step)")
                    try messages.put(&message)
                    model.append(message)
                }
            }
            let before = controller.objects
            let change = try await nextChange(controller)
            let expected = model.sorted { ($0.position, $0.id) < ($1.position, $1.id) }.prefix(50)
            #expect(change.objects.map(\.id) == expected.map(\.id))
            #expect(apply(change, to: before).map(\.id) == expected.map(\.id))
        }
    }

    /// The differential test: random puts, updates (sort key, updatable and other
    /// properties, moves in and out of the result), removes and batch transactions; every
    /// change set applied to the previous window must give the new window, which must be
    /// the plain Swift model's window.
    @Test(arguments: [(nil, false), (10, false), (-25, false), (-25, true), (7, true)] as [(Int?, Bool)])
    func changeSetsRebuildTheWindow(window: Int?, descending: Bool) async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            var random = SplitMix64(state: UInt64(bitPattern: Int64(window ?? 1_000)) &+ (descending ? 99 : 0))
            var model: [Id: Message] = [:]
            let query = try messages.query { Message.conversation == 1 }
                .ordered(by: Message.position, flags: descending ? .descending : []).build()
            func expectedWindow() -> [Message] {
                let all = model.values.filter { $0.conversation == 1 }.sorted {
                    if $0.position != $1.position { return descending ? $0.position > $1.position : $0.position < $1.position }
                    return $0.id < $1.id
                }
                return Array(QueryController<Message>.windowed(all, window))
            }
            let controller = try QueryController(query, window: window, updatable: [Message.isUnread, Message.position])
            var shown = controller.objects
            #expect(shown == expectedWindow())
            var stats = (operations: 0, transactions: 0, changes: 0, inserted: 0, deleted: 0, moved: 0, updated: 0)
            // One random transaction; a synchronous function, so the synchronous `write`.
            func randomTransaction() throws {
                try store.write {
                    let count = Int.random(in: 0..<5, using: &random) == 0 ? Int.random(in: 2...12, using: &random) : 1
                    for _ in 0..<count {
                        stats.operations += 1
                        let existing = model.isEmpty ? nil : model.values.randomElement(using: &random)
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0, 1, 2:
                            var message = Message(conversation: Int.random(in: 1...2, using: &random),
                                                  position: Int.random(in: 0..<60, using: &random),
                                                  isUnread: Bool.random(using: &random))
                            try messages.put(&message)
                            model[message.id] = message
                        case 3, 4:
                            guard var message = existing else { continue }
                            message.position = Int.random(in: 0..<60, using: &random)
                            try messages.put(&message)
                            model[message.id] = message
                        case 5:
                            guard var message = existing else { continue }
                            message.isUnread.toggle()
                            try messages.put(&message)
                            model[message.id] = message
                        case 6:
                            guard var message = existing else { continue }
                            message.text = "t\(Int.random(in: 0..<1_000, using: &random))"
                            try messages.put(&message)
                            model[message.id] = message
                        case 7:
                            guard var message = existing else { continue }
                            message.conversation = 3 - message.conversation
                            try messages.put(&message)
                            model[message.id] = message
                        default:
                            guard let message = existing else { continue }
                            try messages.remove(message.id)
                            model[message.id] = nil
                        }
                    }
                }
            }
            for _ in 0..<1_000 {
                try randomTransaction()
                stats.transactions += 1
                let expected = expectedWindow()
                func visible(_ rows: [Message]) -> [[Int]] { rows.map { [Int($0.id), $0.position, $0.isUnread ? 1 : 0] } }
                guard visible(expected) != visible(shown) else { continue }
                let change = try await nextChange(controller)
                stats.changes += 1
                stats.inserted += change.inserted.count
                stats.deleted += change.deleted.count
                stats.moved += change.moved.count
                stats.updated += change.updated.count
                #expect(change.objects == expected, "the window is the model's")
                #expect(change.totalCount == model.values.filter { $0.conversation == 1 }.count)
                #expect(try query.find().count == change.totalCount, "index and model agree")
                let applied = apply(change, to: shown)
                #expect(visible(applied) == visible(change.objects), "applying the change set gives the new window")
                for index in change.updated {
                    let now = try #require(change.objects.first { $0.id == shown[index].id })
                    #expect(visible([now]) != visible([shown[index]]), "an update only when an updatable property changed")
                }
                #expect(Set(change.deleted).isDisjoint(with: change.moved.map(\.from)))
                #expect(Set(change.updated).isDisjoint(with: change.deleted + change.moved.map(\.from)))
                shown = change.objects
            }
            print("QueryController differential, window \(window.map(String.init) ?? "nil")\(descending ? " descending" : ""): \(stats.operations) operations in \(stats.transactions) transactions, \(stats.changes) change sets (\(stats.inserted) inserted, \(stats.deleted) deleted, \(stats.moved) moved, \(stats.updated) updated)")
            #expect(stats.changes > 100 && stats.moved > 0 && stats.updated > 0)
        }
    }
}
