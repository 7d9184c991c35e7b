@testable import Coffer
import Foundation
import Testing

@Suite struct LinkQueryTests {
    @Test func todaysOrdersOfJoe() throws {
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joe = try customers.put(Customer(name: "Joe"))
            let ann = try customers.put(Customer(name: "Ann"))
            let startOfToday = Calendar(identifier: .gregorian).startOfDay(for: Date())
            let yesterday = startOfToday.addingTimeInterval(-3600)
            try orders.put([Order(date: Date(), total: 10, customer: ToOne(id: joe)),
                            Order(date: yesterday, total: 20, customer: ToOne(id: joe)),
                            Order(date: Date(), total: 30, customer: ToOne(id: ann)),
                            Order(date: Date(), total: 40, customer: ToOne(id: joe))])
            let query = try orders.query { Order.date > startOfToday }
                .link(Order.customer) { Customer.name == "Joe" }
                .ordered(by: Order.total, flags: .descending)
                .build()
            #expect(try query.find().map(\.total) == [40, 10])
            #expect(try query.count() == 2)
            #expect(try query.find(offset: 1, limit: 1).map(\.total) == [10])
            #expect(try query.property(Order.total).sum() == 50)
            #expect(try query.select(Order.total).find() == [40, 10])
            #expect(query.describe().contains("link customer -> Customer where name == \"Joe\""))
            #expect(try orders.query().link(Order.customer) { Customer.name == "Nobody" }.build().count() == 0)
        }
    }

    @Test func linkQueriesAgreeWithASwiftJoin() throws {
        var rng = SplitMix64(state: 11)
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let names = ["Ann", "Bob", "Cy", "Dee"]
            let customerIds = try customers.put((0..<12).map { _ in Customer(name: names.randomElement(using: &rng)!) })
            var stored = (0..<200).map { _ in
                Order(date: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...9, using: &rng))),
                      total: Double(Int.random(in: 0...100, using: &rng)),
                      customer: Bool.random(using: &rng) ? ToOne(id: customerIds.randomElement(using: &rng)!) : nil)
            }
            try orders.put(&stored)
            let byId = Dictionary(uniqueKeysWithValues: try customers.all().map { ($0.id, $0) })
            for _ in 0..<100 {
                let name = names.randomElement(using: &rng)!
                let minTotal = Double(Int.random(in: 0...100, using: &rng))
                let expected = stored.filter { order in
                    order.total >= minTotal && order.customer.targetId.flatMap { byId[$0] }?.name == name
                }.map(\.id)
                let query = try orders.query { Order.total >= minTotal }.link(Order.customer) { Customer.name == name }.build()
                #expect(try query.findIds() == expected)
            }
        }
    }
}
