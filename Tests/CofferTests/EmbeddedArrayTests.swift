@testable import Coffer
import Foundation
import Testing

/// Arrays of embedded values: stored as documents (one object per element), queried by path
/// with any element matching, exported and imported, damage reported.
@Suite struct EmbeddedArrayTests {
    static func random(_ index: Int, using rng: inout SplitMix64) -> Route {
        let stops = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            Address(city: EmbeddedTests.cities.randomElement(using: &rng)!,
                    zip: Bool.random(using: &rng) ? "Z\(Int.random(in: 0..<3, using: &rng))" : nil,
                    location: Bool.random(using: &rng) ? GeoPoint(latitude: Double(Int.random(in: -5...5, using: &rng)), longitude: .pi) : nil,
                    level: Bool.random(using: &rng) ? .high : .low)
        }
        let detours: [GeoPoint]? = Bool.random(using: &rng) ? [GeoPoint(latitude: Double(index), longitude: -0.0)] : nil
        return Route(name: "R\(index)", stops: stops, detours: detours)
    }

    @Test func arraysOfEmbeddedValuesRoundTripAndMatchByElement() throws {
        try withStore { (store: Store) throws in
            let routes = store.box(for: Route.self)
            var rng = SplitMix64(state: 0x5709)
            var all = (0..<150).map { Self.random($0, using: &rng) }
            all.append(Route(name: "extreme", stops: [Address(city: "", zip: "", location: GeoPoint(latitude: .greatestFiniteMagnitude, longitude: -.infinity))]))
            try routes.put(&all)
            #expect(try routes.all() == all)
            func check(_ condition: QueryCondition<Route>, _ selector: String, _ expected: (Route) -> Bool, _ label: String) throws {
                let wanted = all.filter(expected).map(\.id)
                #expect(try routes.query { condition }.build().findIds() == wanted, "\(label)")
                #expect(try routes.query(selector: selector).build().findIds() == wanted, "selector \(label)")
            }
            try check(Route.stops["city"] == "Oslo", #"{"stops.city": "Oslo"}"#, { $0.stops.contains { $0.city == "Oslo" } }, "city")
            try check(Route.stops["city"].isIn(["Rome", "Lima"]), #"{"stops.city": {"$in": ["Rome", "Lima"]}}"#,
                      { $0.stops.contains { ["Rome", "Lima"].contains($0.city) } }, "in")
            try check(Route.stops["location"]["latitude"] > 2, #"{"stops.location.latitude": {"$gt": 2}}"#,
                      { $0.stops.contains { ($0.location?.latitude ?? -.infinity) > 2 } }, "nested")
            try check(Route.stops["postcode"].isNil(), #"{"stops.postcode": {"$exists": false}}"#,
                      { !$0.stops.contains { $0.zip != nil } }, "no element has a postcode")
            try check(Route.stops["level"] == Level.high.rawValue, #"{"stops.level": 99}"#, { $0.stops.contains { $0.level == .high } }, "enum leaf")
        }
    }

    @Test func exportAndImportKeepArraysOfEmbeddedValues() throws {
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in
                var rng = SplitMix64(state: 0xA55)
                var all = (0..<40).map { Self.random($0, using: &rng) }
                try source.box(for: Route.self).put(&all)
                var text = ""
                try source.dump(entity: "Route") { text += $0 + "\n" }
                try target.copySchema(of: "Route", from: source)
                try target.importObjects(entity: "Route", jsonLines: Data(text.utf8))
                #expect(try target.box(for: Route.self).all() == all)
                // An element without its required city imports (the catalog sees a document)
                // and reads as damage, never as a made-up value.
                try target.importObjects(entity: "Route", jsonLines: Data(#"{"id": 1, "name": "x", "stops": [{"postcode": "1"}]}"#.utf8))
                #expect {
                    try target.box(for: Route.self).get(1)
                } throws: { error in
                    guard case CofferError.damagedRecord(_, let id, let reason) = error else { return false }
                    return id == 1 && reason.contains("city")
                }
            }
        }
    }
}
