@testable import Coffer
import Foundation
import Testing

@Suite struct ToOneTests {
    @Test func unsavedTargetIsStoredFirstAndLoadedLazily() throws {
        try withStore { (store: Store) throws in
            let orders = store.box(for: Order.self)
            var order = Order(date: Date(), total: 9.5)
            order.customer.target = Customer(name: "Joe")
            #expect(order.customer.targetId == nil)
            try orders.put(&order)
            #expect(order.customer.targetId == 1)
            #expect(try store.box(for: Customer.self).get(1)?.name == "Joe")
            let loaded = try #require(try orders.get(order.id))
            #expect(loaded.customer.targetId == 1)
            #expect(loaded.customer.target?.name == "Joe")
            #expect(try loaded.customer.loadTarget()?.name == "Joe")
            // A failed put leaves nothing: the target's insert rolls back with it.
            #expect(throws: Boom.self) {
                try store.write {
                    var other = Order(date: Date(), total: 1, customer: ToOne(Customer(name: "Ann")))
                    try orders.put(&other)
                    throw Boom()
                }
            }
            #expect(try store.box(for: Customer.self).count() == 1)
        }
    }

    @Test func linkConditionsAndRemovalClearsLinks() throws {
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joe = try customers.put(Customer(name: "Joe"))
            let ann = try customers.put(Customer(name: "Ann"))
            try orders.put([Order(date: Date(), total: 1, customer: ToOne(id: joe)),
                            Order(date: Date(), total: 2, customer: ToOne(id: ann)),
                            Order(date: Date(), total: 3, customer: ToOne(id: joe)),
                            Order(date: Date(), total: 4)])
            #expect(try orders.query { Order.customer == joe }.build().findIds() == [1, 3])
            #expect(try orders.query { Order.customer.isNil() }.build().findIds() == [4])
            #expect(try orders.query { Order.customer != joe }.build().findIds() == [2, 4])
            #expect(try orders.query { Order.customer == joe }.build().describe().hasPrefix("Order: index on customer"))
            try customers.remove(joe)
            #expect(try orders.query { Order.customer.isNil() }.build().findIds() == [1, 3, 4])
            #expect(try orders.get(1)?.customer.targetId == nil)
            #expect(try orders.get(1)?.total == 1)
            #expect(try IndexProbe.isConsistent(store, Order.self))
            try customers.removeAll()
            #expect(try orders.query { Order.customer.isNil() }.build().count() == 4)
            #expect(try IndexProbe.isConsistent(store, Order.self))
        }
    }

    @Test func selfRelationsAndCycles() throws {
        try withStore { (store: Store) throws in
            let nodes = store.box(for: Node.self)
            var a = Node(label: "a")
            a.next.target = Node(label: "b", next: ToOne(Node(label: "c")))
            try nodes.put(&a)
            #expect(try nodes.count() == 3)
            let b = try #require(a.next.target)
            #expect(b.label == "b" && b.next.target?.label == "c")
            // Close the cycle a -> b -> c -> a, and a self-loop.
            var c = try #require(try nodes.query { Node.label == "c" }.build().findFirst())
            c.next = ToOne(id: a.id)
            try nodes.put(&c)
            let loadedA = try #require(try nodes.get(a.id))
            #expect(loadedA.next.target?.next.target?.next.target?.label == "a")
            var loop = Node(label: "self")
            try nodes.put(&loop)
            loop.next = ToOne(id: loop.id)
            try nodes.put(&loop)
            #expect(try nodes.get(loop.id)?.next.targetId == loop.id)
            // Removing b clears a's link; removing the self-loop node removes it cleanly.
            try nodes.remove(b.id)
            #expect(try nodes.get(a.id)?.next.targetId == nil)
            try nodes.remove(loop.id)
            #expect(try nodes.count() == 2)
            #expect(try IndexProbe.isConsistent(store, Node.self))
        }
    }
}

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
