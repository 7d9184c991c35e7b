@testable import Coffer
import Foundation
import Testing

@Suite struct BacklinkTests {
    @Test func backlinkListsTheLinkingObjectsLazily() throws {
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joe = try customers.put(Customer(name: "Joe"))
            let ann = try customers.put(Customer(name: "Ann"))
            try orders.put([Order(date: Date(), total: 50, customer: ToOne(id: joe)),
                            Order(date: Date(), total: 150, customer: ToOne(id: ann)),
                            Order(date: Date(), total: 250, customer: ToOne(id: joe))])
            let loaded = try #require(try customers.get(joe))
            #expect(loaded.orders.description == "ToMany<Order>(not loaded)")
            #expect(loaded.orders.map(\.total) == [50, 250])
            #expect(try loaded.orders.load().count == 2)
            #expect(loaded.orders.description == "ToMany<Order>(2 elements)")
            // The list is read when first used: a later change shows in a newly read owner.
            try orders.remove(3)
            #expect(try customers.get(joe)?.orders.count == 1)
            #expect(Customer.orders.schema.backlinkProperty == "customer")
        }
    }

    @Test func linkAcrossABacklink() throws {
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joe = try customers.put(Customer(name: "Joe"))
            let ann = try customers.put(Customer(name: "Ann"))
            _ = try customers.put(Customer(name: "Zed"))
            try orders.put([Order(date: Date(), total: 50, customer: ToOne(id: joe)),
                            Order(date: Date(), total: 150, customer: ToOne(id: ann)),
                            Order(date: Date(), total: 250, customer: ToOne(id: joe))])
            let big = try customers.query().link(Customer.orders) { Order.total > 100 }.ordered(by: Customer.name).build()
            #expect(try big.find().map(\.name) == ["Ann", "Joe"])
            #expect(big.describe().contains("link orders <- Order.customer where total > 100.0"))
            let joeOnly = try customers.query { Customer.name == "Joe" }.link(Customer.orders) { Order.total > 100 }.build()
            #expect(try joeOnly.findIds() == [joe])
            #expect(try customers.query().link(Customer.orders) { Order.total > 1000 }.build().count() == 0)
        }
    }

    @Test func backlinkLinksAgreeWithASwiftJoin() throws {
        var rng = SplitMix64(state: 5)
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let ids = try customers.put((0..<15).map { Customer(name: "c\($0 % 4)") })
            let stored = (0..<150).map { _ in
                Order(date: Date(), total: Double(Int.random(in: 0...100, using: &rng)),
                      customer: Bool.random(using: &rng) ? ToOne(id: ids.randomElement(using: &rng)!) : nil)
            }
            try orders.put(stored)
            let all = try customers.all()
            for _ in 0..<50 {
                let minTotal = Double(Int.random(in: 0...100, using: &rng))
                let name = "c\(Int.random(in: 0...3, using: &rng))"
                let owners = Set(stored.filter { $0.total >= minTotal }.compactMap(\.customer.targetId))
                let expected = all.filter { $0.name == name && owners.contains($0.id) }.map(\.id)
                let query = try customers.query { Customer.name == name }.link(Customer.orders) { Order.total >= minTotal }.build()
                #expect(try query.findIds() == expected)
            }
        }
    }
}
