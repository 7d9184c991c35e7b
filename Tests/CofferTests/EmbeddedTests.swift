@testable import Coffer
import Foundation
import Testing

/// Embedded structs: round trips of every shape, typed paths against a plain Swift filter
/// (index and scan), ordering, selectors and catalog queries, index upkeep, schema evolution
/// inside embedded types, and export/import.
@Suite struct EmbeddedTests {
    static let cities = ["Oslo", "Rome", "Lima", "Kyiv"]

    static func randomResident(_ index: Int, using rng: inout SplitMix64) -> Resident {
        func address() -> Address {
            Address(city: cities.randomElement(using: &rng)!,
                    zip: Bool.random(using: &rng) ? "Z\(Int.random(in: 0..<5, using: &rng))" : nil,
                    location: Bool.random(using: &rng)
                        ? GeoPoint(latitude: Double(Int.random(in: -90...90, using: &rng)), longitude: Double(Int.random(in: 0..<10, using: &rng)))
                        : nil,
                    level: Bool.random(using: &rng) ? .low : .high)
        }
        return Resident(name: "R\(index)", home: address(), work: Int.random(in: 0..<3, using: &rng) == 0 ? nil : address(),
                        origin: GeoPoint(latitude: Double(index % 7), longitude: -1))
    }

    @Test func everyShapeRoundTrips() throws {
        try withStore { (store: Store) throws in
            let residents = store.box(for: Resident.self)
            var rng = SplitMix64(state: 0xE3B)
            var all = (0..<50).map { Self.randomResident($0, using: &rng) }
            all.append(Resident(name: "bare", home: Address(city: "")))
            all.append(Resident(name: "full", home: Address(city: "A", zip: "", location: GeoPoint(latitude: -0.5, longitude: .infinity), level: .high),
                                work: Address(city: "B", zip: "9", location: GeoPoint(latitude: .greatestFiniteMagnitude)),
                                origin: GeoPoint(latitude: 1, longitude: 2)))
            try residents.put(&all)
            #expect(try residents.all() == all)
            #expect(try residents.get(all[51].id)?.work?.location?.latitude == .greatestFiniteMagnitude)
        }
    }

    @Test func typedPathsAgreeWithAPlainFilterOnIndexAndScan() throws {
        try withStore { (store: Store) throws in
            let residents = store.box(for: Resident.self)
            var rng = SplitMix64(state: 0xA11)
            var all = (0..<300).map { Self.randomResident($0, using: &rng) }
            try residents.put(&all)
            func check(_ condition: QueryCondition<Resident>, _ expected: (Resident) -> Bool, _ label: String) throws {
                let found = try residents.query { condition }.build().find()
                #expect(found.map(\.id) == all.filter(expected).map(\.id), "\(label)")
            }
            for city in Self.cities {
                try check(Resident.home.city == city, { $0.home.city == city }, "home.city == \(city)")
                try check(Resident.work.city == city, { $0.work?.city == city }, "work.city == \(city)")
                try check(Resident.home.city == city && Resident.work.isNil(), { $0.home.city == city && $0.work == nil }, "and work nil")
            }
            try check(Resident.work.isNil(), { $0.work == nil }, "work nil")
            try check(Resident.work.isNotNil(), { $0.work != nil }, "work not nil")
            try check(Resident.home.location.isNil(), { $0.home.location == nil }, "home.location nil")
            try check(Resident.home.location.latitude > 10, { ($0.home.location?.latitude ?? -.infinity) > 10 }, "latitude > 10")
            try check(Resident.work.location.latitude.isNil(), { $0.work?.location == nil }, "work.location.latitude nil")
            try check(Resident.home.zip == "Z1", { $0.home.zip == "Z1" }, "zip")
            try check(Resident.home.level == .high, { $0.home.level == .high }, "level")
            try check(Resident.origin.latitude >= 3, { $0.origin.latitude >= 3 }, "origin")
            // The indexed leaf is answered from its index.
            #expect(try residents.query { Resident.home.city == "Oslo" }.build().describe().contains("index on home.city"))
            // Ordering by a leaf under optional values: nil first, as for any optional.
            let ordered = try residents.query().ordered(by: Resident.home.location.latitude).build().find()
            let latitudes = ordered.map { $0.home.location?.latitude ?? -.infinity }
            #expect(latitudes == latitudes.sorted())
            // Updating a leaf moves its index entry.
            var first = all[0]
            first.home.city = "Bergen"
            try residents.put(&first)
            #expect(try residents.query { Resident.home.city == "Bergen" }.build().findIds() == [first.id])
            #expect(try store.verify().isIntact)
        }
    }

    @Test func selectorsAndTheCatalogNameLeavesByTheirStoredPath() throws {
        try withStore { (store: Store) throws in
            let residents = store.box(for: Resident.self)
            var rng = SplitMix64(state: 0x5E1)
            var all = (0..<120).map { Self.randomResident($0, using: &rng) }
            try residents.put(&all)
            func both(_ selector: String, _ expected: (Resident) -> Bool) throws {
                let wanted = all.filter(expected).map(\.id)
                #expect(try residents.query(selector: selector).build().findIds() == wanted, "\(selector)")
                var lines: [Id] = []
                try store.query(entity: "Resident", selector: selector, fields: ["id"]) { lines.append(Id($0.dropFirst(6).dropLast())!) }
                #expect(lines == wanted, "catalog: \(selector)")
            }
            try both(#"{"home.city": "Rome"}"#) { $0.home.city == "Rome" }
            try both(#"{"home.postcode": {"$in": ["Z1", "Z2"]}}"#) { ["Z1", "Z2"].contains($0.home.zip ?? "") }
            try both(#"{"work": {"$exists": false}}"#) { $0.work == nil }
            try both(#"{"work.city": {"$ne": "Oslo"}, "home.location.latitude": {"$gte": 0}}"#) {
                $0.work?.city != "Oslo" && ($0.home.location?.latitude ?? -1) >= 0
            }
            #expect(throws: CofferError.self) { try residents.query(selector: #"{"home.town": "Rome"}"#) }
            var exported: [String] = []
            try store.dump(entity: "Resident", limit: 1) { exported.append($0) }
            #expect(exported[0].contains("\"home\":{\"city\":") && !exported[0].contains("\"home.city\""), "\(exported[0])")
        }
    }

    @Test func exportAndImportKeepEmbeddedValues() throws {
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in
                var rng = SplitMix64(state: 0x1E)
                var all = (0..<40).map { Self.randomResident($0, using: &rng) }
                try source.box(for: Resident.self).put(&all)
                var text = ""
                try source.dump(entity: "Resident") { text += $0 + "\n" }
                try target.copySchema(of: "Resident", from: source)
                try target.importObjects(entity: "Resident", jsonLines: Data(text.utf8))
                #expect(try target.box(for: Resident.self).all() == all)
            }
        }
    }

    @Test func schemaEvolutionAppliesInsideEmbeddedTypes() throws {
        try withStore { (store: Store) throws in
            // The older build stores residents with a smaller Address and no `work`.
            let old = store.box(for: EmbeddedV1.Resident.self)
            let id = try old.put(EmbeddedV1.Resident(name: "Ada", home: EmbeddedV1.Address(city: "Oslo", zip: "0150")))
            // The newer build reads them: added leaves and values take their defaults or nil.
            let residents = store.box(for: Resident.self)
            let read = try #require(try residents.get(id))
            #expect(read == Resident(id: id, name: "Ada", home: Address(city: "Oslo", zip: "0150"), work: nil, origin: GeoPoint(latitude: 0)))
            var updated = read
            updated.home.location = GeoPoint(latitude: 59.9, longitude: 10.7)
            updated.work = Address(city: "Bergen")
            try residents.put(&updated)
            // The older build updates the object: the leaves it does not know are kept.
            var again = try #require(try old.get(id))
            again.home.city = "Trondheim"
            try old.put(&again)
            let final = try #require(try residents.get(id))
            #expect(final.home.city == "Trondheim" && final.home.location == GeoPoint(latitude: 59.9, longitude: 10.7))
            #expect(final.work == Address(city: "Bergen"))
            #expect(try residents.query { Resident.home.city == "Trondheim" }.build().findIds() == [id])
            #expect(try store.verify().isIntact)
        }
    }
}
