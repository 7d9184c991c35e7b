@testable import Coffer
import Foundation
import Testing

/// A random condition, turned into a Coffer condition for either entity and into a plain
/// Swift predicate with the documented semantics.
indirect enum RandomCondition {
    case ageCompare(String, Int)
    case ageBetween(Int, Int)
    case ageIn([Int])
    case ageNotInRange(Int, Int)
    case ageModulo(Int, Int)
    case nameEqual(String, Bool)
    case nameStarts(String, Bool)
    case nameEnds(String, Bool)
    case nameContains(String, Bool)
    case nameLike(String, Bool)
    case nameIn([String])
    case nameLess(String)
    case scoreGreater(Double)
    /// A comparison with a score; zeros of both signs (one value, two index keys).
    case scoreCompare(String, Double)
    case scoreTolerance(Double, Double)
    case nickNil, nickNotNil
    case nickEqual(String)
    case nickNotEqual(String)
    case tagsContain(String)
    case tagsCount(Int)
    case bornBefore(Date)
    case levelEqual(Level?)
    case idBetween(Id, Id)
    case and(RandomCondition, RandomCondition)
    case or(RandomCondition, RandomCondition)
    case not(RandomCondition)


    static let names = ["", "a", "Ab", "abc", "ABD", "Émile", "émile", "Zoë", "zoe", "b%c", "a_b", "Straße", String(repeating: "long", count: 120) + "x", String(repeating: "long", count: 120) + "y"]
    static let fragments = ["", "a", "A", "b", "É", "é", "zo", "%", "_", "ß", "longlong"]
    static let patterns = ["a%", "%b%", "_b%", "%", "a_c", "%É%", "z_e", "b\\%c", "long%x", "%y"]

    static func random(depth: Int, using rng: inout some RandomNumberGenerator) -> RandomCondition {
        if depth > 0 && Int.random(in: 0..<3, using: &rng) == 0 {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return .and(random(depth: depth - 1, using: &rng), random(depth: depth - 1, using: &rng))
            case 1: return .or(random(depth: depth - 1, using: &rng), random(depth: depth - 1, using: &rng))
            default: return .not(random(depth: depth - 1, using: &rng))
            }
        }
        let age = Int.random(in: -5...25, using: &rng)
        let bool = Bool.random(using: &rng)
        switch Int.random(in: 0..<25, using: &rng) {
        case 0: return .ageCompare(["==", "!=", "<", ">", "<=", ">="].randomElement(using: &rng)!, age)
        case 1: return .ageBetween(age, Int.random(in: -5...25, using: &rng))
        case 2: return .ageIn((0..<Int.random(in: 0...3, using: &rng)).map { _ in Int.random(in: -5...25, using: &rng) })
        case 3: return .ageNotInRange(min(age, age + 3), max(age, age + 3))
        case 4: return .ageModulo(Int.random(in: 1...4, using: &rng), Int.random(in: -2...3, using: &rng))
        case 5: return .nameEqual(names.randomElement(using: &rng)!, bool)
        case 6: return .nameStarts(fragments.randomElement(using: &rng)!, bool)
        case 7: return .nameEnds(fragments.randomElement(using: &rng)!, bool)
        case 8: return .nameContains(fragments.randomElement(using: &rng)!, bool)
        case 9: return .nameLike(patterns.randomElement(using: &rng)!, bool)
        case 10: return .nameIn((0..<Int.random(in: 0...3, using: &rng)).map { _ in names.randomElement(using: &rng)! })
        case 11: return .nameLess(names.randomElement(using: &rng)!)
        case 12: return .scoreGreater([-1.5, 0, 0.5, 2, .infinity].randomElement(using: &rng)!)
        case 13: return .scoreTolerance([0.5, 2].randomElement(using: &rng)!, [0, 0.6].randomElement(using: &rng)!)
        case 14: return .nickNil
        case 15: return .nickNotNil
        case 16: return .nickEqual(fragments.randomElement(using: &rng)!)
        case 17: return .nickNotEqual(fragments.randomElement(using: &rng)!)
        case 18: return .tagsContain(["x", "y", "z"].randomElement(using: &rng)!)
        case 19: return .tagsCount(Int.random(in: 0...3, using: &rng))
        case 20: return .bornBefore(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...30, using: &rng))))
        case 21: return .levelEqual([Level.low, .high, nil].randomElement(using: &rng)!)
        case 22: return .idBetween(Id.random(in: 0...60, using: &rng), Id.random(in: 0...60, using: &rng))
        case 23: return .scoreCompare(["==", "!=", "<", ">", "<=", ">="].randomElement(using: &rng)!,
                                      [-0.0, 0, 0.5, -1.5].randomElement(using: &rng)!)
        default: return .ageCompare(">", age)
        }
    }

    func condition<P: PersonLike>(_ type: P.Type) -> QueryCondition<P> {
        switch self {
        case .ageCompare(let op, let value): return Self.compare(P.age, op, value)
        case .ageBetween(let a, let b): return P.age.isBetween(a, and: b)
        case .ageIn(let list): return P.age ∈ list
        case .ageNotInRange(let a, let b): return P.age ∉ (a..<b)
        case .ageModulo(let n, let r): return P.age.modulo(n) == r
        case .nameEqual(let value, let sensitive): return P.name.isEqual(to: value, caseSensitive: sensitive)
        case .nameStarts(let value, let sensitive): return P.name.startsWith(value, caseSensitive: sensitive)
        case .nameEnds(let value, let sensitive): return P.name.endsWith(value, caseSensitive: sensitive)
        case .nameContains(let value, let sensitive): return P.name.contains(value, caseSensitive: sensitive)
        case .nameLike(let pattern, let sensitive): return P.name.like(pattern, caseSensitive: sensitive)
        case .nameIn(let list): return P.name.isIn(list)
        case .nameLess(let value): return P.name < value
        case .scoreGreater(let value): return P.score > value
        case .scoreCompare(let op, let value): return Self.compare(P.score, op, value)
        case .scoreTolerance(let value, let tolerance): return P.score.isEqual(to: value, tolerance: tolerance)
        case .nickNil: return P.nick.isNil()
        case .nickNotNil: return P.nick.isNotNil()
        case .nickEqual(let value): return P.nick == value
        case .nickNotEqual(let value): return P.nick != value
        case .tagsContain(let value): return P.tags.containsElement(value)
        case .tagsCount(let count): return P.tags.count == count
        case .bornBefore(let date): return P.born.isBefore(date)
        case .levelEqual(let level): return level.map { P.level == $0 } ?? P.level.isNil()
        case .idBetween(let a, let b): return P.id.isBetween(a, and: b)
        case .and(let a, let b): return a.condition(type) && b.condition(type)
        case .or(let a, let b): return a.condition(type) || b.condition(type)
        case .not(let a): return !a.condition(type)
        }
    }

    /// The comparison `op` ("==", "!=", "<", ">", "<=", else ">=") of `property` with `value`.
    static func compare<P: PersonLike, V: QueryableValue>(_ property: Property<P, V>, _ op: String, _ value: V) -> QueryCondition<P> {
        switch op {
        case "==": return property == value
        case "!=": return property != value
        case "<": return property < value
        case ">": return property > value
        case "<=": return property <= value
        default: return property >= value
        }
    }

    /// What `compare` means, in Swift's own comparisons.
    static func holds<V: Comparable>(_ stored: V, _ op: String, _ value: V) -> Bool {
        switch op {
        case "==": return stored == value
        case "!=": return stored != value
        case "<": return stored < value
        case ">": return stored > value
        case "<=": return stored <= value
        default: return stored >= value
        }
    }

    /// The documented semantics, written independently of the engine.
    func holds<P: PersonLike>(_ p: P) -> Bool {
        func fold(_ s: String) -> String { s.folding(options: .caseInsensitive, locale: nil) }
        func bytes(_ s: String, _ sensitive: Bool) -> [UInt8] { Array((sensitive ? s : fold(s)).utf8) }
        switch self {
        case .ageCompare(let op, let value): return Self.holds(p.age, op, value)
        case .ageBetween(let a, let b): return (min(a, b)...max(a, b)).contains(p.age)
        case .ageIn(let list): return list.contains(p.age)
        case .ageNotInRange(let a, let b): return !(a..<b).contains(p.age)
        case .ageModulo(let n, let r): return p.age % n == r
        case .nameEqual(let value, let sensitive): return bytes(p.name, sensitive) == bytes(value, sensitive)
        case .nameStarts(let value, let sensitive):
            return sensitive ? p.name.utf8.starts(with: value.utf8) : fold(p.name).unicodeScalars.starts(with: fold(value).unicodeScalars)
        case .nameEnds(let value, let sensitive):
            return sensitive ? Array(p.name.utf8).reversed().starts(with: Array(value.utf8).reversed())
                : Array(fold(p.name).unicodeScalars).reversed().starts(with: Array(fold(value).unicodeScalars).reversed())
        case .nameContains(let value, let sensitive):
            if value.isEmpty { return true }
            let hay = bytes(p.name, sensitive), needle = bytes(value, sensitive)
            return hay.count >= needle.count && (0...(hay.count - needle.count)).contains { Array(hay[$0..<$0 + needle.count]) == needle }
        case .nameLike(let pattern, let sensitive):
            return likeOracle(Array((sensitive ? pattern : fold(pattern)).unicodeScalars), Array((sensitive ? p.name : fold(p.name)).unicodeScalars))
        case .nameIn(let list): return list.contains { Array($0.utf8) == Array(p.name.utf8) }
        case .nameLess(let value): return Array(p.name.utf8).lexicographicallyPrecedes(Array(value.utf8))
        case .scoreGreater(let value): return p.score > value
        case .scoreCompare(let op, let value): return Self.holds(p.score, op, value)
        case .scoreTolerance(let value, let tolerance): return abs(p.score - value) <= tolerance
        case .nickNil: return p.nick == nil
        case .nickNotNil: return p.nick != nil
        case .nickEqual(let value): return p.nick.map { Array($0.utf8) == Array(value.utf8) } ?? false
        case .nickNotEqual(let value): return p.nick.map { Array($0.utf8) != Array(value.utf8) } ?? true
        case .tagsContain(let value): return p.tags.contains(value)
        case .tagsCount(let count): return p.tags.count == count
        case .bornBefore(let date): return p.born < date
        case .levelEqual(let level): return p.level == level
        case .idBetween(let a, let b): return (min(a, b)...max(a, b)).contains(p.id)
        case .and(let a, let b): return a.holds(p) && b.holds(p)
        case .or(let a, let b): return a.holds(p) || b.holds(p)
        case .not(let a): return !a.holds(p)
        }
    }
}

/// `%` any run, `_` one scalar; a straightforward recursive matcher.
func likeOracle(_ pattern: [Unicode.Scalar], _ text: [Unicode.Scalar]) -> Bool {
    var memo: [Int: Bool] = [:]
    func match(_ p: Int, _ t: Int) -> Bool {
        let key = p * 10_000 + t
        if let known = memo[key] { return known }
        let result: Bool
        if p == pattern.count { result = t == text.count }
        else if pattern[p] == "%" { result = match(p + 1, t) || (t < text.count && match(p, t + 1)) }
        else if t < text.count && (pattern[p] == "_" || pattern[p] == text[t]) { result = match(p + 1, t + 1) }
        else { result = false }
        memo[key] = result
        return result
    }
    return match(0, 0)
}

func randomPeople(count: Int, using rng: inout some RandomNumberGenerator) -> [(String, Int, Double, String?, [String], Date, Level?)] {
    (0..<count).map { _ in
        (RandomCondition.names.randomElement(using: &rng)!,
         Int.random(in: -5...25, using: &rng),
         [-1.5, 0, -0.0, 0.5, 1, 2.25, .infinity, -.infinity, .nan].randomElement(using: &rng)!,
         Bool.random(using: &rng) ? nil : RandomCondition.fragments.randomElement(using: &rng)!,
         (0..<Int.random(in: 0...3, using: &rng)).map { _ in ["x", "y", "z"].randomElement(using: &rng)! },
         Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...30, using: &rng))),
         [Level.low, .high, nil].randomElement(using: &rng)!)
    }
}

/// Thrown by a test's `forEach` body to stop a walk midway.
struct StopWalk: Error {}

@Suite struct QueryDifferentialTests {
    /// The same 60 random people stored as indexed and as plain objects; the plain ones (with
    /// their ids) are the model.
    func storeRandomPeople(in store: Store, using rng: inout SplitMix64) throws -> (Box<IndexedPerson>, Box<PlainPerson>, [PlainPerson]) {
        let indexed = store.box(for: IndexedPerson.self)
        let plain = store.box(for: PlainPerson.self)
        let data = randomPeople(count: 60, using: &rng)
        var indexedObjects = data.map { IndexedPerson(id: 0, name: $0.0, age: $0.1, score: $0.2, nick: $0.3, tags: $0.4, born: $0.5, level: $0.6) }
        var plainObjects = data.map { PlainPerson(id: 0, name: $0.0, age: $0.1, score: $0.2, nick: $0.3, tags: $0.4, born: $0.5, level: $0.6) }
        try indexed.put(&indexedObjects)
        try plain.put(&plainObjects)
        return (indexed, plain, plainObjects)
    }

    @Test(arguments: [1, 2, 3, 4])
    func indexScanAndSwiftFilterAgree(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        try withStore { (store: Store) throws in
            let (indexed, plain, plainObjects) = try storeRandomPeople(in: store, using: &rng)
            var usedIndex = 0
            for _ in 0..<500 {
                let condition = RandomCondition.random(depth: 2, using: &rng)
                let expected = plainObjects.filter { condition.holds($0) }.map(\.id)
                let indexQuery = try indexed.query { condition.condition(IndexedPerson.self) }.build()
                let scanQuery = try plain.query { condition.condition(PlainPerson.self) }.build()
                let viaIndex = try indexQuery.findIds()
                let viaScan = try scanQuery.findIds()
                #expect(viaIndex == expected, "index path: \(condition) — \(indexQuery.describe())")
                #expect(viaScan == expected, "scan path: \(condition)")
                #expect(try indexQuery.count() == expected.count)
                if indexQuery.describe().contains("index on") || indexQuery.describe().contains("ids") { usedIndex += 1 }
            }
            #expect(usedIndex > 50)
        }
    }

    /// Without a sort, matches stream from the walk over the candidates (the offset skipped
    /// and the limit counted as they are found); `forEach` inside a write collects them first
    /// and reads each again. Pages, `forEach` and `findFirst` agree with the model on random
    /// conditions over every plan source (index, scan, id range, id list).
    @Test(arguments: [5, 6])
    func streamedPagesAgreeWithTheModel(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        try withStore { (store: Store) throws in
            let (indexed, plain, plainObjects) = try storeRandomPeople(in: store, using: &rng)
            func check<E: Entity>(_ query: Query<E>, _ expected: [Id], offset: Int, limit: Int, _ label: String) throws {
                let page = Array(expected.dropFirst(offset).prefix(limit))
                #expect(try query.find(offset: offset, limit: limit).map(\.id) == page, "\(label) page \(offset)+\(limit)")
                var read: [Id] = []
                try query.forEach { read.append($0.id) }
                #expect(read == expected, "\(label) forEach")
                var written: [Id] = []
                try store.write { try query.forEach { written.append($0.id) } }
                #expect(written == expected, "\(label) forEach in a write")
                #expect(try query.findFirst()?.id == expected.first, "\(label) findFirst")
                // A body that throws midway stops the streamed walk with its error; the next
                // run of the same query starts afresh.
                if expected.count > 1 {
                    var seen = 0
                    #expect(throws: StopWalk.self) { try query.forEach { _ in seen += 1; if seen == 2 { throw StopWalk() } } }
                    #expect(seen == 2, "\(label) stopped")
                    #expect(try query.findIds() == expected, "\(label) after a throwing forEach")
                }
            }
            for _ in 0..<250 {
                let condition = RandomCondition.random(depth: 2, using: &rng)
                let expected = plainObjects.filter { condition.holds($0) }.map(\.id)
                let offset = Int.random(in: 0...8, using: &rng)
                let limit = [0, 1, 3, 50].randomElement(using: &rng)!
                try check(try indexed.query { condition.condition(IndexedPerson.self) }.build(), expected, offset: offset, limit: limit,
                          "index path: \(condition)")
                try check(try plain.query { condition.condition(PlainPerson.self) }.build(), expected, offset: offset, limit: limit,
                          "scan path: \(condition)")
            }
        }
    }

    @Test func orderingAndPagingAgreeWithSwiftSorting() throws {
        var rng = SplitMix64(state: 99)
        try withStore { (store: Store) throws in
            let indexed = store.box(for: IndexedPerson.self)
            let data = randomPeople(count: 80, using: &rng)
            var objects = data.map { IndexedPerson(id: 0, name: $0.0, age: $0.1, score: $0.2, nick: $0.3, tags: $0.4, born: $0.5, level: $0.6) }
            try indexed.put(&objects)
            func fold(_ s: String) -> [UInt8] { Array(s.folding(options: .caseInsensitive, locale: nil).utf8) }
            // age descending, then name case-insensitively, then id.
            let expected = objects.sorted { a, b in
                if a.age != b.age { return a.age > b.age }
                let (x, y) = (fold(a.name), fold(b.name))
                if x != y { return x.lexicographicallyPrecedes(y) }
                return a.id < b.id
            }.map(\.id)
            let query = try indexed.query().ordered(by: IndexedPerson.age, flags: [.descending]).ordered(by: IndexedPerson.name).build()
            #expect(try query.findIds() == expected)
            for (offset, limit) in [(0, 0), (0, 1), (5, 10), (79, 5), (80, 1), (200, 3)] {
                let page = try query.find(offset: offset, limit: limit).map(\.id)
                #expect(page == Array(expected.dropFirst(offset).prefix(limit)))
            }
            #expect(try query.findFirst()?.id == expected.first)
            // Ascending on an indexed Int walks the index and agrees with a sort.
            let byAge = try indexed.query { IndexedPerson.age > 3 }.build()
            let walked = try indexed.query().ordered(by: IndexedPerson.age).build()
            #expect(walked.describe().contains("walked in order"))
            let ageSorted = objects.sorted { ($0.age, $0.id) < ($1.age, $1.id) }.map(\.id)
            #expect(try walked.findIds() == ageSorted)
            #expect(try walked.find(offset: 10, limit: 7).map(\.id) == Array(ageSorted[10..<17]))
            #expect(try byAge.findIds() == objects.filter { $0.age > 3 }.map(\.id))
            // nick: nil first by default, last with .nullsLast, as "" with .nullsZero.
            let nicks = try indexed.query().ordered(by: IndexedPerson.nick, flags: [.caseSensitive]).build().find().map(\.nick)
            let firstValue = nicks.firstIndex { $0 != nil } ?? nicks.count
            #expect(nicks[..<firstValue].allSatisfy { $0 == nil } && nicks[firstValue...].allSatisfy { $0 != nil })
            let last = try indexed.query().ordered(by: IndexedPerson.nick, flags: [.nullsLast]).build().find().map(\.nick)
            let firstNil = last.firstIndex { $0 == nil } ?? last.count
            #expect(last[firstNil...].allSatisfy { $0 == nil })
            let zero = try indexed.query().ordered(by: IndexedPerson.nick, flags: [.nullsZero, .caseSensitive]).build().find().map { $0.nick ?? "" }
            #expect(zero == zero.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
    }
}
