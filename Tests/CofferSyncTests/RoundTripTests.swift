import CofferSync
import Foundation
import PostgresNIO
import Testing

/// Every mapped type through coffer_push, a SQL read and coffer_pull, exactly.
@Suite struct RoundTripTests {
    static let doubles: [Double] = [0.1, .leastNonzeroMagnitude, Double(bitPattern: 0x0000_1234_5678_9abc), .greatestFiniteMagnitude, -0.0, .nan, .infinity, -.infinity,
                                    Double(Float(0.1)), 123456789.12345679, -2.5]

    /// A double as the wire carries it: the shortest decimal, or a string for what JSON lacks.
    static func wire(_ value: Double) -> String {
        if value.isNaN { return "\"NaN\"" }
        if value == .infinity { return "\"Infinity\"" }
        if value == -.infinity { return "\"-Infinity\"" }
        if value == 0 && value.sign == .minus { return "\"-0\"" }
        return "\(value)"
    }

    static func double(fromWire value: Any?) -> Double? {
        if let text = value as? String { return text == "-0" ? -0.0 : Double(text) }
        if let number = value as? NSNumber { return Double("\(number)") ?? number.doubleValue }
        return nil
    }

    @Test func everyTypeRoundTrips() async throws {
        let schema = try SyncSchema([Sample.self, Owner.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let id = UUID()
        let owner = UUID()
        let friends = [UUID(), UUID()]
        let uuid = UUID()
        let bytes = Data([0, 1, 2, 127, 128, 254, 255] + Array(repeating: 7, count: 100))
        let date = Date(timeIntervalSinceReferenceDate: 786_000_000.123456789)
        let clock = hlcNow()
        let text = "héllo ☃ \"quoted\" \\ back\nnew line\ttab 𝄞"
        let textJSON = String(decoding: try JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast()
        let fields: [(String, String)] = [
            ("flag", "true"), ("int", "\(Int.min)"), ("int8", "-128"), ("int16", "32767"), ("int32", "-2147483648"),
            ("int64", "\(Int64.max)"), ("uint8", "255"), ("uint16", "65535"), ("uint32", "4294967295"),
            ("uint64", "\"18446744073709551615\""), ("uint", "18446744073709551615"),
            ("float", Self.wire(Double(Float(0.1)))), ("double", Self.wire(0.1)),
            ("string", String(textJSON)), ("date", Self.wire(date.timeIntervalSinceReferenceDate)),
            ("data", "\"\(bytes.base64EncodedString())\""), ("bytes", "\"\(Data([9, 8, 0, 255]).base64EncodedString())\""),
            ("uuid", "\"\(uuid.uuidString)\""), ("strings", "[\"a\", \"\", \"ü\"]"),
            ("ints", "[\(Int.min), 0, \(Int.max)]"), ("int8s", "[-128, 127]"),
            ("uint64s", "[\"18446744073709551615\", 0, 42]"),
            ("doubles", "[" + Self.doubles.map(Self.wire).joined(separator: ", ") + "]"),
            ("floats", "[\(Self.wire(Double(Float(1.1)))), 0.5]"), ("dates", "[\(Self.wire(date.timeIntervalSinceReferenceDate))]"),
            ("bools", "[true, false]"), ("uuids", "[\"\(uuid.uuidString)\"]"),
            ("document", #"{"b": [1, 2.5, null, "x"], "a": {"nested": true}}"#), ("counts", #"{"x": 1, "y": -2}"#),
            ("optionalText", "null"), ("home", "true"), ("home.city", "\"Paris\""), ("home.zip", "null"),
            ("owner", "\"\(owner.uuidString)\""), ("friends", "[" + friends.map { "\"\($0.uuidString)\"" }.joined(separator: ", ") + "]"),
        ]
        let fieldsJSON = "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
        let clocksJSON = "{" + fields.map { "\"\($0.0)\": \"\(clock)\"" }.joined(separator: ", ") + "}"
        let batch = #"[{"mid": 1, "entity": "Sample", "id": "\#(id.uuidString)", "op": "upsert", "fields": \#(fieldsJSON), "clocks": \#(clocksJSON)}]"#

        try await withInstalled(schema) { connection in
            let result = try await connection.push(s, client: UUID(), json: batch)
            #expect((result["rejected"] as? [Any])?.isEmpty == true, "\(result)")
            #expect(result["lastMid"] as? Int == 1)

            // SQL sees the exact values in typed columns.
            let table = "\(s).\"Sample\""
            let row = try #require(try await connection.rows("""
                SELECT "flag"::text, "int"::text, "int8"::text, "int16"::text, "int32"::text, "int64"::text, "uint8"::text,
                       "uint16"::text, "uint32"::text, "uint64"::text, "uint"::text, encode(float8send("float"), 'hex'),
                       encode(float8send("double"), 'hex'), "string", encode(float8send("date"), 'hex'), encode("data", 'hex'),
                       encode("bytes", 'hex'), "uuid"::text, "strings"::text, "ints"::text, "int8s"::text, "uint64s"::text,
                       (SELECT string_agg(encode(float8send(e), 'hex'), ',' ORDER BY i) FROM unnest("doubles") WITH ORDINALITY t(e, i)),
                       "bools"::text, "document" #>> '{a,nested}', "counts" ->> 'y', ("optionalText" IS NULL)::text, "home"::text,
                       "home.city", ("home.zip" IS NULL)::text, "owner"::text, "friends"::text
                FROM \(table) WHERE sync_id = '\(id.uuidString)'
                """).first)
            func hex(_ value: Double) -> String {
                withUnsafeBytes(of: value.bitPattern.bigEndian) { $0.map { String(format: "%02x", $0) }.joined() }
            }
            #expect(row[0] == "true")
            #expect(row[1] == "\(Int.min)")
            #expect(row[2] == "-128" && row[3] == "32767" && row[4] == "-2147483648" && row[5] == "\(Int64.max)")
            #expect(row[6] == "255" && row[7] == "65535" && row[8] == "4294967295")
            #expect(row[9] == "18446744073709551615" && row[10] == "18446744073709551615")
            #expect(row[11] == hex(Double(Float(0.1))))
            #expect(row[12] == hex(0.1))
            #expect(row[13] == text)
            #expect(row[14] == hex(date.timeIntervalSinceReferenceDate))
            #expect(row[15] == bytes.map { String(format: "%02x", $0) }.joined())
            #expect(row[16] == "090800ff")
            #expect(row[17] == uuid.uuidString.lowercased())
            #expect(row[18] == "{a,\"\",ü}")
            #expect(row[19] == "{\(Int.min),0,\(Int.max)}")
            #expect(row[20] == "{-128,127}")
            #expect(row[21] == "{18446744073709551615,0,42}")
            #expect(row[22] == Self.doubles.map { $0.isNaN ? "7ff8000000000000" : hex($0) }.joined(separator: ","))
            #expect(row[23] == "{t,f}")
            #expect(row[24] == "true" && row[25] == "-2" && row[26] == "true" && row[27] == "true")
            #expect(row[28] == "Paris" && row[29] == "true")
            #expect(row[30] == owner.uuidString.lowercased())
            #expect(row[31] == "{" + friends.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}")

            // Pull gives the values back in their wire form.
            let pulled = try await connection.pullAll(s, "Sample")
            #expect(pulled.changes.count == 1)
            let change = try #require(pulled.changes.first)
            #expect(change["op"] as? String == "upsert")
            #expect((change["id"] as? String)?.lowercased() == id.uuidString.lowercased())
            let back = try #require(change["fields"] as? [String: Any])
            #expect(Set(back.keys) == Set(schema.tables[0].columns.map(\.name)))
            #expect(back["flag"] as? Bool == true)
            #expect((back["int"] as? NSNumber)?.int64Value == Int64.min)
            #expect((back["int64"] as? NSNumber)?.int64Value == Int64.max)
            #expect(back["uint64"] as? String == "18446744073709551615")
            #expect(back["uint"] as? String == "18446744073709551615")
            #expect(Self.double(fromWire: back["float"])?.bitPattern == Double(Float(0.1)).bitPattern)
            #expect(Self.double(fromWire: back["double"])?.bitPattern == (0.1 as Double).bitPattern)
            #expect(Self.double(fromWire: back["date"])?.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern)
            #expect(back["string"] as? String == text)
            #expect(back["data"] as? String == bytes.base64EncodedString())
            #expect((back["uuid"] as? String)?.lowercased() == uuid.uuidString.lowercased())
            #expect(back["strings"] as? [String] == ["a", "", "ü"])
            #expect(back["uint64s"] as? [String] == ["18446744073709551615", "0", "42"])
            let doubles = try #require(back["doubles"] as? [Any]).map { Self.double(fromWire: $0) }
            #expect(doubles.map { $0.map { $0.isNaN ? Double.nan.bitPattern : $0.bitPattern } }
                    == Self.doubles.map { $0.isNaN ? Double.nan.bitPattern : $0.bitPattern })
            #expect(back["optionalText"] is NSNull)
            #expect(back["home"] as? Bool == true)
            #expect(back["home.city"] as? String == "Paris")
            #expect(back["home.zip"] is NSNull)
            #expect((back["document"] as? NSDictionary) == (["a": ["nested": true], "b": [1, 2.5, NSNull(), "x"]] as NSDictionary))
            #expect((back["friends"] as? [String])?.map { $0.lowercased() } == friends.map { $0.uuidString.lowercased() })
            #expect(change["hlc"] as? String == "\(clock)")
        }
    }

    @Test func aStringWithNULIsRejectedNamingTheField() async throws {
        let schema = try SyncSchema([NoteV2.Note.self], schema: uniqueSchemaName())
        let client = UUID()
        let (good, bad) = (UUID(), UUID())
        let nul = Data("a\u{0}b".utf8).base64EncodedString()
        let clock = hlcNow()
        let batch = """
            [{"mid": 1, "entity": "Note", "id": "\(bad.uuidString)", "op": "upsert", "fields": {"title": {"nul": "\(nul)"}}, "clocks": {"title": "\(clock)"}},
             {"mid": 2, "entity": "Note", "id": "\(good.uuidString)", "op": "upsert", "fields": {"title": "fine"}, "clocks": {"title": "\(clock)"}}]
            """
        try await withInstalled(schema) { connection in
            let result = try await connection.push(schema.schemaName, client: client, json: batch)
            let rejected = try #require(result["rejected"] as? [[String: Any]])
            #expect(rejected.count == 1)
            #expect(rejected.first?["mid"] as? Int == 1)
            #expect((rejected.first?["reason"] as? String)?.contains(#"field "title": text cannot hold U+0000"#) == true)
            #expect(try await connection.value("SELECT count(*)::text FROM \(schema.schemaName).\"Note\"") == "1")
        }
    }
}
