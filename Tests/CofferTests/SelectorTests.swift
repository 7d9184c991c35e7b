@_spi(CofferGenerated) @testable import Coffer
import Foundation
import Testing

/// Cloudant Query selectors: the guide's scenarios, every operator and its errors, a
/// differential test against typed queries and plain filters, and fuzzing.
@Suite struct SelectorTests {
    static let pals = [
        Pal(name: "mike", age: 12, pets: ["cat", "dog"], town: "Bristol", comment: "Mike is a doctor and likes books"),
        Pal(name: "mike", age: 34, pets: [], town: nil, comment: "The other Mike reads doctor books"),
        Pal(name: "fred", age: 43, pets: ["cat"], town: "Bath", comment: "Fred is a docent"),
        Pal(name: "john", age: 8, pets: ["dog", "fish", "snake"], town: "Bristol", comment: "John collects stamps"),
        Pal(name: "anna", age: 13, pets: ["fish"], town: "Leeds", comment: "Anna reads", born: Date(timeIntervalSince1970: 1_000_000_000)),
    ]

    func withPals<T>(_ body: (Box<Pal>, [Id]) throws -> T) throws -> T {
        try withStore { (store: Store) throws in
            let box = store.box(for: Pal.self)
            var pals = Self.pals
            try box.put(&pals)
            return try body(box, pals.map(\.id))
        }
    }

    /// The names of the matches, in the query's order.
    func names(_ box: Box<Pal>, _ selector: String, sort: [(String, SortDirection)] = [], skip: Int = 0, limit: Int? = nil) throws -> [String] {
        try box.query(selector: selector, sort: sort, skip: skip, limit: limit).build().find().map { "\($0.name)\($0.age)" }
    }

    @Test func cloudantGuideScenarios() throws {
        try withPals { box, _ in
            #expect(try names(box, #"{"name": "mike"}"#) == ["mike12", "mike34"])
            #expect(try names(box, #"{"name": {"$eq": "mike"}, "age": 12}"#) == ["mike12"])
            #expect(try names(box, #"{"age": {"$gt": 12}}"#) == ["mike34", "fred43", "anna13"])
            #expect(try names(box, #"{"age": {"$gt": 7, "$lt": 14}}"#) == ["mike12", "john8", "anna13"])
            #expect(try names(box, #"{"$or": [{"name": "fred"}, {"age": {"$lte": 8}}]}"#) == ["fred43", "john8"])
            #expect(try names(box, #"{"$and": [{"name": "mike"}, {"$or": [{"age": 34}, {"town": "Bath"}]}]}"#) == ["mike34"])
            #expect(try names(box, #"{"age": {"$not": {"$gt": 12}}}"#) == ["mike12", "john8"])
            #expect(try names(box, #"{"$nor": [{"name": "mike"}, {"age": {"$gt": 40}}]}"#) == ["john8", "anna13"])
            // $mod truncates its operands: 4.9 -> 4, 0.2 -> 0.
            #expect(try names(box, #"{"age": {"$mod": [4.9, 0.2]}}"#) == ["mike12", "john8"])
            #expect(try names(box, #"{"age": {"$mod": [-5, -2]}}"#) == [])
            #expect(try names(box, #"{"name": {"$in": ["fred", "john"]}}"#) == ["fred43", "john8"])
            #expect(try names(box, #"{"name": {"$nin": ["fred", "john", "mike"]}}"#) == ["anna13"])
            // Arrays: a value matches when an element does; $not is the complement.
            #expect(try names(box, #"{"pets": "cat"}"#) == ["mike12", "fred43"])
            #expect(try names(box, #"{"pets": {"$not": {"$eq": "cat"}}}"#) == ["mike34", "john8", "anna13"])
            #expect(try names(box, #"{"pets": {"$in": ["snake", "fish"]}}"#) == ["john8", "anna13"])
            #expect(try names(box, #"{"pets": {"$all": ["dog", "cat"]}}"#) == ["mike12"])
            #expect(try names(box, #"{"pets": {"$size": 0}}"#) == ["mike34"])
            #expect(try names(box, #"{"pets": {"$size": 3}}"#) == ["john8"])
            #expect(try names(box, #"{"town": {"$exists": false}}"#) == ["mike34"])
            #expect(try names(box, #"{"town": {"$exists": true}, "town": {"$ne": "Bristol"}}"#) == ["fred43", "anna13"])
            #expect(try names(box, #"{"town": {"$ne": "Bristol"}}"#) == ["mike34", "fred43", "anna13"], "$ne holds for nil")
            #expect(try names(box, #"{"town": null}"#) == ["mike34"])
            // $regex anywhere in the string; $elemMatch: one element satisfies every comparison.
            #expect(try names(box, #"{"name": {"$regex": "^m.k"}}"#) == ["mike12", "mike34"])
            #expect(try names(box, #"{"comment": {"$regex": "doc(tor|ent)"}}"#) == ["mike12", "mike34", "fred43"])
            #expect(try names(box, #"{"pets": {"$elemMatch": {"$gte": "d", "$lt": "e"}}}"#) == ["mike12", "john8"])
            #expect(try names(box, #"{"pets": {"$elemMatch": {"$gt": "cat", "$lt": "fish"}}}"#) == ["mike12", "john8"])
            #expect(try names(box, #"{"pets": {"$elemMatch": {"$in": ["snake"]}}}"#) == ["john8"])
            // $text, alone and combined.
            #expect(try names(box, #"{"$text": {"$search": "doctor books"}}"#) == ["mike12", "mike34"])
            #expect(try names(box, #"{"$text": {"$search": "\"is a doctor\""}, "age": {"$lt": 20}}"#) == ["mike12"])
            #expect(try names(box, #"{"$text": {"$search": "doc*"}}"#) == ["mike12", "mike34", "fred43"])
            // FTS4's NEAR (within n terms, 10 by default) and property prefixes, as Cloudant's $text.
            #expect(try names(box, #"{"$text": {"$search": "doctor NEAR/1 books"}}"#) == ["mike34"])
            #expect(try names(box, #"{"$text": {"$search": "doctor NEAR/2 books"}}"#) == ["mike12", "mike34"])
            #expect(try names(box, #"{"$text": {"$search": "doctor NEAR books"}}"#) == ["mike12", "mike34"])
            #expect(try names(box, #"{"$text": {"$search": "comment:docent"}}"#) == ["fred43"])
            #expect(try names(box, #"{"$text": {"$search": "comment:read* -comment:\"doctor books\""}}"#) == ["anna13"])
            // Dates as ISO 8601, ids as _id.
            #expect(try names(box, #"{"born": {"$gt": "2001-09-01T00:00:00Z"}}"#) == ["anna13"])
            #expect(try names(box, #"{"born": {"$lt": "2001-09-09"}}"#) == [])
            // Sort, skip, limit.
            #expect(try names(box, #"{"age": {"$gt": 0}}"#, sort: [("age", .descending)], skip: 1, limit: 2) == ["mike34", "anna13"])
            #expect(try names(box, #"{}"#, sort: [("name", .ascending), ("age", .descending)]) == ["anna13", "fred43", "john8", "mike34", "mike12"])
            let query = try box.query(selector: #"{"name": "mike"}"#, limit: 1).build()
            #expect(try query.findIds().count == 1 && query.count() == 2)
            #expect(try box.query(selector: Data(#"{"_id": {"$in": [1, 3]}}"#.utf8)).build().findIds() == [1, 3])
        }
    }

    @Test(arguments: [
        (#"{"name": "#, "not valid JSON"),
        (#"["name"]"#, "must be a JSON object"),
        (#"{"nmae": "mike"}"#, "has no property nmae"),
        (#"{"$foo": 1}"#, "unknown operator $foo"),
        (#"{"age": {"$foo": 1}}"#, "at age.$foo: unknown field operator $foo"),
        (#"{"age": "twelve"}"#, "age is Int, so it needs an integer"),
        (#"{"age": 12.5}"#, "needs an integer"),
        (#"{"age": 1e300}"#, "needs an integer within Int64"),
        (#"{"age": {"$mod": [0, 1]}}"#, "$mod divides by zero"),
        (#"{"age": {"$mod": [0.5, 1]}}"#, "$mod divides by zero"),
        (#"{"age": {"$mod": [3]}}"#, "$mod needs [divisor, remainder]"),
        (#"{"$or": {"name": "mike"}}"#, "$or needs a non-empty array"),
        (#"{"$or": []}"#, "$or needs a non-empty array"),
        (#"{"$and": [1]}"#, "at $and[0]: $and needs selector objects"),
        (#"{"town": {"$exists": 1}}"#, "$exists needs true or false"),
        (#"{"name": {"$in": "mike"}}"#, "$in needs a non-empty array"),
        (#"{"pets": {"$gt": null}}"#, "cannot compare with null"),
        (#"{"age": 9007199254740993.5}"#, "needs an integer"),
        (#"{"born": {"$gt": "yesterday"}}"#, "needs an ISO 8601 date string"),
        (#"{"age": {"$gt": null}}"#, "cannot compare with null"),
        (#"{"$text": "doctor"}"#, "$text needs {\"$search\""),
        (#"{"$text": {"$search": "\"open"}}"#, "quote"),
        (#"{"$text": {"$search": "name:fred comment:lives"}}"#, "'name:' names no full-text property searched here (Pal: comment)"),
        (#"{"$text": {"$search": "fred NEAR/x lives"}}"#, "NEAR/ needs a distance"),
        (#"{"$text": {"$search": "(fred OR bob) NEAR lives"}}"#, "NEAR joins words, prefixes and phrases"),
        (#"{"pet.species": "cat"}"#, "Pal has no property pet"),
        (#"{"name.first": "x"}"#, "name is not a relation"),
        (#"{"name.": "x"}"#, "a dotted path needs a name on both sides"),
        (#"{"name": {"$regex": "("}}"#, "is not a valid regular expression"),
        (#"{"age": {"$regex": "1"}}"#, "$regex needs a String property"),
        (#"{"pets": {"$elemMatch": {"$size": 1}}}"#, "inside $elemMatch"),
        (#"{"name": {"$elemMatch": {"$eq": "x"}}}"#, "$elemMatch needs an array property"),
        (#"{"age": {"$gt": 1, "name": 2}}"#, "cannot mix operators and field names"),
        (String(repeating: "[", count: 200) + String(repeating: "]", count: 200), "nested more than 136"),
    ] as [(String, String)])
    func invalidSelectorsNameTheirPart(selector: String, fragment: String) throws {
        try withPals { box, _ in
            do {
                _ = try box.query(selector: selector).build()
                Issue.record("\(selector) was accepted")
            } catch let error as CofferError {
                guard case .invalidSelector(let entity, _, _) = error else { throw error }
                #expect(error.description.contains(fragment), "\(error)")
                #expect(entity == "Pal")
            }
            #expect(try box.count() == Self.pals.count, "nothing changed")
        }
    }

    /// The same selectors on stored data, without the Swift type (what `coffer query`
    /// runs): the same objects in the same order, rendered from the catalog.
    @Test func catalogQueriesMatchTypedSelectorQueries() throws {
        try withPals { box, _ in
            let store = box.store
            let selectors = [#"{}"#, #"{"name": "mike"}"#, #"{"age": {"$gt": 7, "$lt": 14}}"#, #"{"pets": {"$all": ["dog", "cat"]}}"#,
                             #"{"$text": {"$search": "doctor"}, "age": {"$gt": 20}}"#, #"{"town": {"$exists": false}}"#,
                             #"{"$nor": [{"name": "mike"}]}"#, #"{"_id": {"$in": [2, 4]}}"#]
            for selector in selectors {
                for (sort, skip, limit) in [([], 0, nil), ([("age", SortDirection.descending)], 1, 2)] as [([(String, SortDirection)], Int, Int?)] {
                    var ids: [Id] = []
                    try store.query(entity: "Pal", selector: selector, sort: sort, skip: skip, limit: limit) { line in
                        guard case .object(let members)? = try? JSONParser.parse(Array(line.utf8)),
                              case .number(let id)? = members.first(where: { $0.key == "id" })?.value, let value = id.uint64 else {
                            Issue.record("not an object with an id: \(line)")
                            return
                        }
                        ids.append(value)
                    }
                    #expect(ids == (try box.query(selector: selector, sort: sort, skip: skip, limit: limit).build().findIds()), "\(selector)")
                }
            }
            var lines: [String] = []
            try store.query(entity: "Pal", selector: #"{"name": "anna"}"#, fields: ["name", "born"]) { lines.append($0) }
            #expect(lines == [#"{"name":"anna","born":"2001-09-09T01:46:40.000Z"}"#])
            #expect(try store.explain(entity: "Pal", selector: #"{"$text": {"$search": "doctor"}}"#).contains("full-text match on comment"))
            #expect(throws: CofferError.self) { try store.query(entity: "Nobody", selector: "{}") { _ in } }
            #expect(throws: CofferError.self) { try store.query(entity: "Pal", selector: "{}", fields: ["nope"]) { _ in } }
            #expect(throws: CofferError.self) { try store.query(entity: "Pal", selector: #"{"age": {"$mod": [0, 1]}}"#) { _ in } }
        }
    }

    /// Dotted paths through `ToOne` links: answered through the target's condition, with
    /// negations as complements at the owner; the same on stored data without types.
    @Test func dottedPathsThroughToOneLinks() throws {
        try withStore { (store: Store) throws in
            let orders = store.box(for: Order.self)
            let customers = store.box(for: Customer.self)
            // No customer stored yet: nothing matches a linked condition, and its negation all.
            try orders.put(Order(date: Date(timeIntervalSinceReferenceDate: 0), total: 5))
            #expect(try orders.query(selector: #"{"customer.name": "Joe"}"#).build().count() == 0)
            #expect(try orders.query(selector: #"{"customer.name": {"$ne": "Joe"}}"#).build().count() == 1)
            let joe = try customers.put(Customer(name: "Joe"))
            let ann = try customers.put(Customer(name: "Ann"))
            let placed = try orders.put([Order(date: Date(), total: 10, customer: ToOne(id: joe)),
                                      Order(date: Date(), total: 20, customer: ToOne(id: ann)),
                                      Order(date: Date(), total: 30, customer: ToOne(id: joe))])
            func found(_ selector: String) throws -> [Id] { try orders.query(selector: selector).build().findIds() }
            #expect(try found(#"{"customer.name": "Joe"}"#) == [placed[0], placed[2]])
            #expect(try found(#"{"customer.name": {"$in": ["Ann"]}, "total": {"$gt": 5}}"#) == [placed[1]])
            #expect(try found(#"{"customer.name": {"$ne": "Joe"}}"#) == [1, placed[1]], "an order without a customer is not Joe's")
            #expect(try found(#"{"customer.name": {"$not": {"$eq": "Ann"}}}"#) == [1, placed[0], placed[2]])
            #expect(try found(#"{"$or": [{"customer.name": "Ann"}, {"total": 30}]}"#) == [placed[1], placed[2]])
            #expect(try found(#"{"customer._id": \#(ann)}"#) == [placed[1]])
            #expect(throws: CofferError.self) { try orders.query(selector: #"{"customer.nmae": "Joe"}"#) }
            // A path longer than the limit is refused before it recurses.
            #expect(throws: CofferError.self) { try orders.query(selector: "{\"customer" + String(repeating: ".orders", count: 5_000) + "\": 1}") }
            // describe() shows the link step.
            #expect(try orders.query(selector: #"{"customer.name": "Joe"}"#).build().describe().contains("link customer -> Customer"))
            var lines: [String] = []
            try store.query(entity: "Order", selector: #"{"customer.name": "Joe"}"#, fields: ["id"]) { lines.append($0) }
            #expect(lines == ["{\"id\":\(placed[0])}", "{\"id\":\(placed[2])}"])
        }
    }

    /// Paths through many-to-many relations and both kinds of backlink: any related object
    /// matches, negations are complements at the owner; the typed selector, the catalog
    /// selector (what `coffer query` runs), the typed `linked` DSL and a plain Swift model agree.
    @Test func dottedPathsThroughToManyAndBacklinks() throws {
        var rng = SplitMix64(state: 0x70_3A7)
        try withStore { (store: Store) throws in
            let customers = store.box(for: Customer.self), orders = store.box(for: Order.self)
            let students = store.box(for: Student.self), teachers = store.box(for: Teacher.self)
            let customerIds = try customers.put((0..<12).map { Customer(name: "C\($0)") })
            var orderModel: [(id: Id, total: Double, customer: Id?)] = []
            for _ in 0..<60 {
                let customer = Int.random(in: 0..<5, using: &rng) == 0 ? nil : customerIds.randomElement(using: &rng)
                let total = Double(Int.random(in: 0..<100, using: &rng))
                let id = try orders.put(Order(date: Date(), total: total, customer: ToOne(id: customer)))
                orderModel.append((id, total, customer))
            }
            let teacherIds = try teachers.put((0..<8).map { Teacher(name: "T\($0)") })
            var relationModel: [Id: Set<Id>] = [:]   // student -> teachers
            var studentNames: [Id: String] = [:]
            for index in 0..<30 {
                var student = Student(name: "S\(index)")
                let chosen = Set((0..<Int.random(in: 0...3, using: &rng)).map { _ in teacherIds.randomElement(using: &rng)! })
                for teacher in try teachers.get(chosen.sorted()) { student.teachers.append(teacher) }
                try students.put(&student)
                relationModel[student.id] = chosen
                studentNames[student.id] = student.name
            }
            let teacherNames = Dictionary(uniqueKeysWithValues: teacherIds.enumerated().map { ($1, "T\($0)") })
            func agree<E: Entity>(_ box: Box<E>, _ selector: String, _ expected: [Id], typed: [Id]? = nil) throws {
                let viaSelector = try box.query(selector: selector).build().findIds()
                #expect(viaSelector == expected, "\(selector)")
                var viaCatalog: [Id] = []
                try store.query(entity: E._cofferSchema.storedName, selector: selector, fields: ["id"]) { line in
                    viaCatalog.append(Id(line.dropFirst(6).dropLast())!)
                }
                #expect(viaCatalog == expected, "catalog: \(selector)")
                if let typed { #expect(typed == expected, "typed DSL: \(selector)") }
            }
            for _ in 0..<25 {
                let limit = Double(Int.random(in: 0..<100, using: &rng))
                let owners = Set(orderModel.filter { $0.total > limit }.compactMap(\.customer))
                try agree(customers, #"{"orders.total": {"$gt": \#(Int(limit))}}"#, customerIds.filter(owners.contains),
                          typed: try customers.query().link(Customer.orders) { Order.total > limit }.build().findIds())
                try agree(customers, #"{"orders.total": {"$not": {"$gt": \#(Int(limit))}}}"#, customerIds.filter { !owners.contains($0) })
                let teacher = teacherIds.randomElement(using: &rng)!
                let taught = relationModel.keys.sorted().filter { relationModel[$0]!.contains(teacher) }
                try agree(students, #"{"teachers.name": "\#(teacherNames[teacher]!)"}"#, taught,
                          typed: try students.query().link(Student.teachers) { Teacher.name == teacherNames[teacher]! }.build().findIds())
                try agree(students, #"{"teachers.name": {"$ne": "\#(teacherNames[teacher]!)"}}"#,
                          relationModel.keys.sorted().filter { !relationModel[$0]!.contains(teacher) })
                let pupils = Set(studentNames.keys.shuffled(using: &rng).prefix(3))
                let teaching = Set(pupils.flatMap { relationModel[$0]! })
                let names = pupils.map { "\"\(studentNames[$0]!)\"" }.joined(separator: ",")
                try agree(teachers, #"{"students.name": {"$in": [\#(names)]}}"#, teacherIds.filter(teaching.contains))
                // Two steps: orders whose customer has some order above the limit.
                try agree(orders, #"{"customer.orders.total": {"$gt": \#(Int(limit))}}"#,
                          orderModel.filter { $0.customer.map(owners.contains) ?? false }.map(\.id))
                // Students who share a teacher with one student.
                let one = pupils.first!
                let mates = relationModel.keys.sorted().filter { !relationModel[$0]!.isDisjoint(with: relationModel[one]!) }
                try agree(students, #"{"teachers.students.name": "\#(studentNames[one]!)"}"#, mates)
            }
            #expect(throws: CofferError.self) { try customers.query(selector: #"{"orders": 1}"#) }
            #expect(throws: CofferError.self) { try customers.query(selector: "{}", sort: [("orders", .ascending)]) }
            #expect(try customers.query(selector: #"{"orders.total": 1}"#).build().describe().contains("link orders -> Order"))
        }
    }

    @Test func invalidSortAndPaging() throws {
        try withPals { box, _ in
            #expect(throws: CofferError.self) { try box.query(selector: "{}", sort: [("nope", .ascending)]) }
            #expect(throws: CofferError.self) { try box.query(selector: "{}", skip: -1) }
            #expect(throws: CofferError.self) { try box.query(selector: "{}", limit: -1) }
            let farPage = try box.query(selector: "{}", skip: Int.max, limit: Int.max).build()
            #expect(try farPage.find().isEmpty)
        }
    }

    @Test func jsonParser() throws {
        func parse(_ text: String) throws -> JSONNode { try JSONParser.parse(Array(text.utf8)) }
        #expect(try parse(#" {"a" : [1, -2.5e3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]} "#)
                == .object([JSONMember(key: "a", value: .array([.number(JSONNumber(text: "1")), .number(JSONNumber(text: "-2.5e3")), .bool(true), .bool(false), .null,
                                                                 .string("x\"\\/\u{08}\u{0C}\n\r\té😀")]))]))
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "1e", "\"\u{01}\"", "\"\\x\"", "\"\\ud83d\"", "\"\\u12\"", "tru", "{} x", "1e400", "\"\\udc00\""] {
            #expect(throws: JSONParser.Failure.self, "\(bad)") { try parse(bad) }
        }
        #expect(try parse("[" + String(repeating: "[", count: 62) + String(repeating: "]", count: 63)) != .null)
        #expect(JSONNumber(text: "7.0").int64 == 7 && JSONNumber(text: "7e2").int64 == 700 && JSONNumber(text: "7.5").int64 == nil)
        #expect(JSONNumber(text: "18446744073709551615").uint64 == .max && JSONNumber(text: "-1").uint64 == nil)
    }

    /// Random selectors: the same ids as the equivalent typed query and as the documented
    /// semantics written as a plain Swift filter, on an indexed and an unindexed entity.
    @Test func selectorsAgreeWithTypedQueriesAndAPlainFilter() throws {
        var rng = SplitMix64(state: 41)
        let rows = randomPeople(count: 150, using: &rng)
        try withStore { (store: Store) throws in
            let indexed = store.box(for: IndexedPerson.self)
            let plain = store.box(for: PlainPerson.self)
            var people = rows.map { IndexedPerson(id: 0, name: $0.0, age: $0.1, score: $0.2, nick: $0.3, tags: $0.4, born: $0.5, level: $0.6) }
            try indexed.put(&people)
            var plainPeople = rows.map { PlainPerson(id: 0, name: $0.0, age: $0.1, score: $0.2, nick: $0.3, tags: $0.4, born: $0.5, level: $0.6) }
            try plain.put(&plainPeople)
            for _ in 0..<400 {
                let (json, condition) = RandomSelector.make(depth: 2, using: &rng)
                let expected = plainPeople.filter { condition.holds($0) }.map(\.id)
                #expect(try plain.query(selector: json).build().findIds() == expected, "\(json)")
                #expect(try indexed.query(selector: json).build().findIds() == expected, "\(json)")
                #expect(try plain.query { condition.condition(PlainPerson.self) }.build().findIds() == expected, "\(json)")
            }
        }
    }

    /// Mutations of valid selectors (bytes changed, cut, doubled) either build or throw
    /// `invalidSelector`; nothing traps.
    @Test func mutatedSelectorsNeverTrap() throws {
        var rng = SplitMix64(state: 43)
        try withPals { box, _ in
            var accepted = 0
            for _ in 0..<3_000 {
                let (json, _) = RandomSelector.make(depth: 3, using: &rng)
                var bytes = Array(json.utf8)
                for _ in 0..<Int.random(in: 1...3, using: &rng) where !bytes.isEmpty {
                    let at = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                    case 1: bytes.removeSubrange(at...)
                    case 2: bytes.insert(contentsOf: Array(#"{"$or":[{"#.utf8), at: at)
                    default: bytes.insert(Array("{}[]\":,-.e$\\".utf8).randomElement(using: &rng)!, at: at)
                    }
                }
                do {
                    _ = try box.query(selector: Data(bytes)).build().findIds()
                    accepted += 1
                } catch CofferError.invalidSelector {
                } catch CofferError.invalidSearch {
                }
            }
            #expect(accepted < 3_000)
        }
    }
}

/// A random selector over `PersonLike` fields with its `RandomCondition` twin.
enum RandomSelector {
    static func make(depth: Int, using rng: inout SplitMix64) -> (String, RandomCondition) {
        if depth > 0, Int.random(in: 0..<3, using: &rng) == 0 {
            let (a, ca) = make(depth: depth - 1, using: &rng)
            let (b, cb) = make(depth: depth - 1, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return (#"{"$and": [\#(a), \#(b)]}"#, .and(ca, cb))
            case 1: return (#"{"$or": [\#(a), \#(b)]}"#, .or(ca, cb))
            case 2: return (#"{"$nor": [\#(a)]}"#, .not(ca))
            default: return (#"{"$not": \#(a)}"#, .not(ca))
            }
        }
        let age = Int.random(in: -6...26, using: &rng)
        let name = RandomCondition.names.randomElement(using: &rng)!
        let fragment = RandomCondition.fragments.randomElement(using: &rng)!
        func quoted(_ s: String) -> String { FieldDescription.quoted(s) }
        switch Int.random(in: 0..<16, using: &rng) {
        case 0: return (#"{"age": \#(age)}"#, .ageCompare("==", age))
        case 1: return (#"{"age": {"$ne": \#(age)}}"#, .ageCompare("!=", age))
        case 2: return (#"{"age": {"$lt": \#(age)}}"#, .ageCompare("<", age))
        case 3: return (#"{"age": {"$gte": \#(age)}}"#, .ageCompare(">=", age))
        case 4:
            let list = (0..<Int.random(in: 1...3, using: &rng)).map { _ in Int.random(in: -6...26, using: &rng) }
            return (#"{"age": {"$in": \#(list)}}"#, .ageIn(list))
        case 5:
            let n = [1, 2, 3, -4].randomElement(using: &rng)!
            let r = Int.random(in: -2...2, using: &rng)
            return (#"{"age": {"$mod": [\#(n), \#(r)]}}"#, .ageModulo(n, r))
        case 6: return (#"{"name": \#(quoted(name))}"#, .nameEqual(name, true))
        case 7: return (#"{"name": {"$lt": \#(quoted(name))}}"#, .nameLess(name))
        case 8:
            let list = (1...2).map { _ in RandomCondition.names.randomElement(using: &rng)! }
            return (#"{"name": {"$in": [\#(list.map(quoted).joined(separator: ","))]}}"#, .nameIn(list))
        case 9: return (#"{"nick": {"$exists": false}}"#, .nickNil)
        case 10: return (#"{"nick": {"$exists": true}}"#, .nickNotNil)
        case 11: return (#"{"nick": \#(quoted(fragment))}"#, .nickEqual(fragment))
        case 12: return (#"{"nick": {"$ne": \#(quoted(fragment))}}"#, .nickNotEqual(fragment))
        case 13:
            let tag = ["x", "y", "z"].randomElement(using: &rng)!
            return (#"{"tags": "\#(tag)"}"#, .tagsContain(tag))
        case 14:
            let count = Int.random(in: 0...3, using: &rng)
            return (#"{"tags": {"$size": \#(count)}}"#, .tagsCount(count))
        default:
            let level = [Level.low, .high, nil].randomElement(using: &rng)!
            return (#"{"level": \#(level.map { String($0.rawValue) } ?? "null")}"#, .levelEqual(level))
        }
    }
}
