@_spi(CofferSync) import Coffer
import CofferSync
import Foundation
import Testing

/// A synced many-to-many relation, for relation changes travelling through the server.
enum Crewed {
    @Sync
    struct Crew: Entity {
        var id: Id = 0
        var name = ""
        var hands: ToMany<Crewed.Hand> = []
    }

    @Sync
    struct Hand: Entity {
        var id: Id = 0
        var name = ""
    }
}

/// Links and unlinks of a to-many relation made on one replica reach another through
/// `coffer_push` and `coffer_pull`, with no change of the owner's record.
@Suite struct RelationRoundTripTests {
    /// Each crew's hands by sync id, by the crew's sync id.
    static func relations(_ store: Store) throws -> [UUID: Set<UUID>] {
        let crews = store.box(for: Crewed.Crew.self)
        let hands = store.box(for: Crewed.Hand.self)
        var result: [UUID: Set<UUID>] = [:]
        for crew in try crews.all() {
            result[try #require(try crews.syncId(of: crew.id))] = Set(try crew.hands.load().map { try #require(try hands.syncId(of: $0.id)) })
        }
        return result
    }

    @Test func linksAndUnlinksTravelBothWays() async throws {
        let schema = try SyncSchema([Crewed.Crew.self, Crewed.Hand.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { _ in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let (transportA, transportB) = (try await testTransport(schema: s), try await testTransport(schema: s))
            let entities: [any Entity.Type] = [Crewed.Crew.self, Crewed.Hand.self]
            let replicaA = try SyncReplica(store: a.store, entities: entities, transport: transportA)
            let replicaB = try SyncReplica(store: b.store, entities: entities, transport: transportB)
            // Rounds of both replicas until they agree (a pull reaches only the horizon that
            // other tests' open transactions hold back).
            func converge() async throws {
                let agreed = try await eventually {
                    for replica in [replicaA, replicaB, replicaA] {
                        let status = try await replica.syncNow()
                        #expect(status.lastError == nil && status.rejections.isEmpty, "\(String(describing: status.lastError)) \(status.rejections)")
                    }
                    return try a.store.pendingSyncCount() == 0 && b.store.pendingSyncCount() == 0
                        && Self.relations(a.store) == Self.relations(b.store)
                }
                #expect(agreed)
            }
            let crewsA = a.store.box(for: Crewed.Crew.self), handsA = a.store.box(for: Crewed.Hand.self)
            let crewsB = b.store.box(for: Crewed.Crew.self)
            var hands = (0..<4).map { Crewed.Hand(name: "hand \($0)") }
            try handsA.put(&hands)
            var crew = Crewed.Crew(name: "deck")
            crew.hands.append(hands[0])
            crew.hands.append(hands[1])
            try crewsA.put(&crew)
            try await converge()
            #expect(try Self.relations(a.store) == Self.relations(b.store))
            #expect(try Self.relations(b.store).values.first?.count == 2)

            // A link alone, on a.
            crew.hands.append(hands[2])
            try crewsA.put(&crew)
            #expect(try a.store.pendingSyncCount() == 1)
            try await converge()
            #expect(try Self.relations(b.store).values.first?.count == 3)
            #expect(try Self.relations(a.store) == Self.relations(b.store))

            // An unlink alone, on b.
            var crewB = try #require(try crewsB.all().first)
            _ = try crewB.hands.remove(at: 0)
            try crewsB.put(&crewB)
            try await converge()
            #expect(try Self.relations(a.store).values.first?.count == 2)
            #expect(try Self.relations(a.store) == Self.relations(b.store))

            // A removed target, on a: gone from the relation everywhere.
            let linked = try #require(try crewsA.get(crew.id)?.hands.load().first)
            try handsA.remove(linked.id)
            try await converge()
            #expect(try Self.relations(a.store).values.first?.count == 1)
            #expect(try Self.relations(a.store) == Self.relations(b.store))
            #expect(try a.store.pendingSyncCount() == 0 && b.store.pendingSyncCount() == 0)

            // Random links and unlinks on both replicas, synced now and then.
            var random = SplitMix64(state: 31)
            let stores = [a.store, b.store]
            for step in 0..<40 {
                let store = stores[Int.random(in: 0..<2, using: &random)]
                let crews = store.box(for: Crewed.Crew.self), boxHands = store.box(for: Crewed.Hand.self)
                if step % 9 == 0 {
                    var added = Crewed.Hand(name: "hand \(step)")
                    try boxHands.put(&added)
                }
                guard var target = try crews.all().randomElement(using: &random) else { continue }
                let current = try target.hands.load()
                if Bool.random(using: &random), let hand = try boxHands.all().randomElement(using: &random) {
                    target.hands.append(hand)
                } else if !current.isEmpty {
                    _ = try target.hands.remove(at: Int.random(in: 0..<current.count, using: &random))
                }
                try crews.put(&target)
                if step % 4 == 3 { _ = try await (store === a.store ? replicaA : replicaB).syncNow() }
            }
            try await converge()
            #expect(try Self.relations(a.store) == Self.relations(b.store))
            #expect(try a.store.verify().problems.isEmpty && b.store.verify().problems.isEmpty)
            await transportA.close()
            await transportB.close()
        }
    }
}
