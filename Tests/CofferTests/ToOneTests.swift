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
