@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct LinkConditionTests {
    @Test(arguments: [3, 4])
    func linkStepsCombineUnderOrAndNot(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let names = ["Joe", "Ann", "Bo"]
            let customerIds = try customers.put((0..<12).map { Customer(name: names[$0 % 3] + "\($0 % 4)") })
            var all: [Order] = []
            for _ in 0..<200 {
                var order = Order(date: Date(timeIntervalSinceReferenceDate: 0), total: Double(Int.random(in: 0..<200, using: &random)))
                if Int.random(in: 0..<5, using: &random) > 0 { order.customer.targetId = customerIds.randomElement(using: &random) }
                try orders.put(&order)
                all.append(order)
            }
            let nameOf = Dictionary(uniqueKeysWithValues: try customers.all().map { ($0.id, $0.name) })
            func isJoe(_ order: Order) -> Bool { order.customer.targetId.flatMap { nameOf[$0] }?.hasPrefix("Joe") ?? false }

            let either = try orders.query { Order.total > 150 || Order.customer.linked { Customer.name.startsWith("Joe") } }.build()
            #expect(try either.findIds() == all.filter { $0.total > 150 || isJoe($0) }.map(\.id))
            let neither = try orders.query { !Order.customer.linked { Customer.name.startsWith("Joe") } && Order.total < 50 }.build()
            #expect(try neither.findIds() == all.filter { !isJoe($0) && $0.total < 50 }.map(\.id))
            #expect(neither.describe().contains("link customer -> Customer"))

            // The reverse side, as a condition of customers.
            let big = try customers.query { Customer.orders.linked { Order.total > 190 } || Customer.name == "Ann1" }.build()
            let expected = Set(all.filter { $0.total > 190 }.compactMap(\.customer.targetId))
                .union(nameOf.filter { $0.value == "Ann1" }.map(\.key))
            #expect(try Set(big.findIds()) == expected)
        }
    }
}
