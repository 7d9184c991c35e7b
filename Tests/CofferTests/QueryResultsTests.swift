@testable import Coffer
import Foundation
import Testing

@Suite struct QueryResultsTests {
    @Test func yieldsTheCurrentResultThenEveryChangedResult() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let unread = try messages.query { Message.isUnread == true }.ordered(by: Message.position).build()
            var results = unread.results().makeAsyncIterator()
            #expect(try await results.next()?.isEmpty == true)
            let a = try messages.put(Message(conversation: 1, position: 2))
            #expect(try await results.next()?.map(\.id) == [a])
            let read = try messages.put(Message(conversation: 1, position: 0, isUnread: false))   // outside the result
            let b = try messages.put(Message(conversation: 1, position: 1))                       // before a
            #expect(try await results.next()?.map(\.id) == [b, a], "the commit outside the result yielded nothing")
            _ = try messages.put(Message(id: read, conversation: 1, position: 9, isUnread: false))
            _ = try messages.put(Message(id: a, conversation: 1, position: 2, text: "edited"))
            #expect(try await results.next()?.map(\.text) == ["", "edited"])
            _ = try messages.put(Message(id: b, conversation: 1, position: 1))   // same values again
            _ = try messages.put(Message(id: b, conversation: 1, position: 1, isUnread: false))
            #expect(try await results.next()?.map(\.id) == [a])
        }
    }

    @Test func pagesAndLinksAndProjections() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let page = try messages.query().ordered(by: Message.position, flags: .descending).build()
            var latest = page.results(offset: 0, limit: 2).makeAsyncIterator()
            #expect(try await latest.next()?.isEmpty == true)
            for position in 0..<3 { try messages.put(Message(conversation: 1, position: position)) }
            #expect(try await latest.next()?.map(\.position) == [2, 1])
            try messages.put(Message(conversation: 1, position: -5))   // outside the page
            try messages.put(Message(conversation: 1, position: 7))
            #expect(try await latest.next()?.map(\.position) == [7, 2])

            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joes = try orders.query { Order.customer.linked { Customer.name == "Joe" } }.build()
            var linked = joes.results().makeAsyncIterator()
            var order = Order(date: Date(), total: 3)
            order.customer.targetId = try customers.put(Customer(name: "Jim"))
            try orders.put(&order)
            #expect(try await linked.next()?.isEmpty == true)
            _ = try customers.put(Customer(id: try #require(order.customer.targetId), name: "Joe"))   // only the linked entity changes
            #expect(try await linked.next()?.map(\.id) == [order.id])

            let totals = try orders.query().build().select(Order.total)
            var rows = totals.results().makeAsyncIterator()
            #expect(try await rows.next()?.map { $0 } == [3])
            order.date = Date(timeIntervalSince1970: 0)   // not selected: no new rows
            try orders.put(&order)
            order.total = 4
            try orders.put(&order)
            #expect(try await rows.next()?.map { $0 } == [4])
        }
    }
}
