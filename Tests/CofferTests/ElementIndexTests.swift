@testable import Coffer
import Foundation
import Testing

/// `@Index` on arrays: one entry per distinct element, used by `containsElement` (typed and
/// selectors), kept through updates and removals, built for objects stored before the
/// annotation, and checked by `verify()`.
@Suite struct ElementIndexTests {
    static let words = ["red", "green", "blue", "Grün", "gru\u{308}n", ""]

    static func random(using rng: inout SplitMix64) -> Tagged {
        Tagged(name: "t",
               tags: (0..<Int.random(in: 0...4, using: &rng)).map { _ in words.randomElement(using: &rng)! },
               codes: Bool.random(using: &rng) ? (0..<Int.random(in: 0...3, using: &rng)).map { _ in Int32.random(in: -2...2, using: &rng) } : nil,
               flags: (0..<Int.random(in: 0...2, using: &rng)).map { _ in Bool.random(using: &rng) },
               moods: (0..<Int.random(in: 0...2, using: &rng)).map { _ in Bool.random(using: &rng) ? .happy : .grumpy })
    }

    func agree(_ box: Box<Tagged>, _ model: [Id: Tagged]) throws {
        let ids = model.keys.sorted()
        func check(_ condition: QueryCondition<Tagged>, _ holds: (Tagged) -> Bool, _ label: String) throws {
            let query = try box.query { condition }.build()
            #expect(try query.findIds() == ids.filter { holds(model[$0]!) }, "\(label)")
            let plan = query.describe()
            #expect(plan.contains("index on"), "\(label): \(plan)")
        }
        for word in Self.words {
            try check(Tagged.tags.containsElement(word), { $0.tags.contains(word) }, "tags \(word)")
        }
        for code in Int32(-2)...2 { try check(Tagged.codes.containsElement(code), { $0.codes?.contains(code) == true }, "codes \(code)") }
        try check(Tagged.flags.containsElement(true), { $0.flags.contains(true) }, "flags")
        try check(Tagged.moods.containsElement(.grumpy), { $0.moods.contains(.grumpy) }, "moods")
        let selected = try box.query(selector: #"{"tags": {"$in": ["red", "blue"]}}"#).build().findIds()
        #expect(selected == ids.filter { model[$0]!.tags.contains("red") || model[$0]!.tags.contains("blue") })
    }

    @Test func elementIndexesAgreeWithAPlainModelThroughWrites() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Tagged.self)
            var rng = SplitMix64(state: 0xE1E)
            var model: [Id: Tagged] = [:]
            for round in 0..<6 {
                for _ in 0..<40 {
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0 where !model.isEmpty:
                        let id = model.keys.randomElement(using: &rng)!
                        try box.remove(id)
                        model[id] = nil
                    case 1 where !model.isEmpty:
                        var changed = Self.random(using: &rng)
                        changed.id = model.keys.randomElement(using: &rng)!
                        if Bool.random(using: &rng) { changed.tags = model[changed.id]!.tags + ["red", "red"] }
                        try box.put(&changed)
                        model[changed.id] = changed
                    default:
                        var fresh = Self.random(using: &rng)
                        try box.put(&fresh)
                        model[fresh.id] = fresh
                    }
                }
                try agree(box, model)
                let report = try store.verify()
                #expect(report.isIntact, "round \(round): \(report.problems)")
            }
        }
    }

    @Test func anIndexAddedLaterIsBuiltForStoredObjects() throws {
        try withStore { (store: Store) throws in
            var rng = SplitMix64(state: 0xB17)
            var model: [Id: Tagged] = [:]
            let old = store.box(for: TaggedV1.Tagged.self)
            for _ in 0..<80 {
                let value = Self.random(using: &rng)
                let id = try old.put(TaggedV1.Tagged(name: value.name, tags: value.tags, codes: value.codes, flags: value.flags, moods: value.moods))
                var stored = value
                stored.id = id
                model[id] = stored
            }
            let box = store.box(for: Tagged.self)
            _ = try box.put(Tagged())   // registers the new build: the indexes are built
            model[model.keys.max()! + 1] = Tagged(id: model.keys.max()! + 1)
            try agree(box, model)
            #expect(try store.verify().isIntact)
        }
    }

    @Test func aStrayOrMissingElementEntryIsReported() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Tagged.self)
            let id = try box.put(Tagged(tags: ["red", "blue"]))
            var stray = IndexKey.encode(.string("green"), type: .string)!
            stray += withUnsafeBytes(of: id.bigEndian) { Array($0) }
            try Damage.putIndexKey(store, Tagged.tags, key: stray)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("Tagged.tags") && $0.contains("matches no record") }, "\(report.problems)")
            var keyed = Tagged(tags: ["x"])
            #expect(throws: CofferError.self) { try box.upsert(&keyed, by: Tagged.tags) }
        }
    }
}
