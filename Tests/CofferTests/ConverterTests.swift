@testable import Coffer
import Foundation
import Testing

/// Properties stored through `PropertyConvertible`: a user type, `URL` and `Decimal`.
@Suite struct ConverterTests {
    static func randomDecimal(using rng: inout SplitMix64) -> Decimal {
        let mantissa = Decimal(Int64.random(in: -99_999...99_999, using: &rng))
        return Decimal(sign: mantissa < 0 ? .minus : .plus, exponent: Int.random(in: -12...12, using: &rng),
                       significand: mantissa < 0 ? -mantissa : mantissa)
    }

    @Test func convertedValuesRoundTripAndQueryByTheirStoredValues() throws {
        try withStore { (store: Store) throws in
            let swatches = store.box(for: Swatch.self)
            var rng = SplitMix64(state: 0xC0)
            var all = (0..<150).map { index in
                Swatch(color: Color(red: UInt8.random(in: 0...2, using: &rng), green: 0, blue: UInt8(index % 3)),
                       accent: Bool.random(using: &rng) ? Color(red: 255, green: 255, blue: 255) : nil,
                       link: Bool.random(using: &rng) ? URL(string: "https://example.com/\(index)?q=a%20b") : nil,
                       price: Self.randomDecimal(using: &rng))
            }
            all.append(Swatch(color: Color(red: 1, green: 2, blue: 3), price: Decimal(string: "-0.000000000000000000000000000000000001")!))
            all.append(Swatch(color: Color(red: 1, green: 2, blue: 3), price: Decimal(string: "79228162514264337593543950335")!))
            try swatches.put(&all)
            #expect(try swatches.all() == all)
            let red = Color(red: 2, green: 0, blue: 1)
            func check(_ condition: QueryCondition<Swatch>, _ expected: (Swatch) -> Bool, _ label: String) throws {
                #expect(try swatches.query { condition }.build().findIds() == all.filter(expected).map(\.id), "\(label)")
            }
            try check(Swatch.color == red, { $0.color == red }, "==")
            try check(Swatch.color.isIn([red, Color(red: 0, green: 0, blue: 0)]), { [red, Color(red: 0, green: 0, blue: 0)].contains($0.color) }, "isIn")
            try check(Swatch.accent.isNil(), { $0.accent == nil }, "nil")
            try check(Swatch.link == URL(string: "https://example.com/7?q=a%20b")!, { $0.link == URL(string: "https://example.com/7?q=a%20b")! }, "url")
            for _ in 0..<20 {
                let limit = Self.randomDecimal(using: &rng)
                try check(Swatch.price > limit, { $0.price > limit }, "price > \(limit)")
                try check(Swatch.price <= limit, { $0.price <= limit }, "price <= \(limit)")
            }
            #expect(try swatches.query { Swatch.price > 0 }.build().describe().contains("index on price"))
            let byPrice = try swatches.query().ordered(by: Swatch.price).build().find().map(\.price)
            #expect(byPrice == byPrice.sorted())
            // Selectors and the tool see the stored value.
            #expect(try swatches.query(selector: ##"{"color": "#020001"}"##).build().findIds() == all.filter { $0.color == red }.map(\.id))
            var line: [String] = []
            try store.dump(entity: "Swatch", limit: 1) { line.append($0) }
            #expect(line[0].contains("\"color\":\"#"))
        }
    }

    @Test func aStoredValueTheTypeRefusesIsDamage() throws {
        try withStore { (store: Store) throws in
            let swatches = store.box(for: Swatch.self)
            let id = try swatches.put(Swatch(color: Color(red: 1, green: 1, blue: 1)))
            // An import writes what the catalog allows (a String): the type refuses it on read.
            try store.importObjects(entity: "Swatch", jsonLines: Data(##"{"id": \##(id), "color": "teal", "price": "#1"}"##.utf8))
            #expect {
                try swatches.get(id)
            } throws: { error in
                guard case CofferError.damagedRecord(let entity, let failed, let reason) = error else { return false }
                return entity == "Swatch" && failed == id && reason.contains("Color") && reason.contains("teal")
            }
        }
    }

    @Test func sortableDecimalsKeepValueAndOrder() throws {
        var rng = SplitMix64(state: 0xDEC)
        var values = (0..<3_000).map { _ in Self.randomDecimal(using: &rng) }
        values += [0, -0, Decimal.greatestFiniteMagnitude, Decimal.leastFiniteMagnitude, Decimal.leastNonzeroMagnitude,
                   Decimal(string: "0.1")!, Decimal(string: "0.12")!, Decimal(string: "-0.12")!, Decimal(string: "-0.123")!, 1, 10, 100, -1, -10]
        for value in values {
            let text = SortableDecimal.encode(value)
            #expect(SortableDecimal.decode(text) == value, "\(value) -> \(text)")
            #expect(try Decimal(storedValue: text) == value)
        }
        let byText = values.sorted { Array(SortableDecimal.encode($0).utf8).lexicographicallyPrecedes(Array(SortableDecimal.encode($1).utf8)) }
        #expect(byText == values.sorted())
        #expect(try Decimal(storedValue: "12.50") == Decimal(string: "12.5")!)
        #expect(throws: CofferError.self) { try Decimal(storedValue: "twelve") }
        #expect(throws: CofferError.self) { try Decimal(storedValue: "#9") }
        #expect(SortableDecimal.encode(.nan) == "NaN")
    }
}
