@_spi(CofferGenerated) @testable import Coffer
import Foundation
import Testing

/// Documents: `JSONValue` metadata and `[String: X]` dictionaries, stored in the binary
/// record format and queried by path (Layer's metadata queries, Cloudant sub-documents).
@Suite struct DocumentTests {
    static let colors = ["red", "blue", "green"]

    static func random(_ index: Int, using rng: inout SplitMix64) -> Conversation {
        var metadata: [String: JSONValue] = [:]
        if Bool.random(using: &rng) { metadata["backgroundColor"] = .string(colors.randomElement(using: &rng)!) }
        if Bool.random(using: &rng) {
            metadata["first"] = ["second": ["third": Bool.random(using: &rng) ? "NestedResult" : "Other"]]
        }
        if Bool.random(using: &rng) { metadata["priority"] = .number(Double(Int.random(in: 0...5, using: &rng))) }
        if Bool.random(using: &rng) { metadata["tags"] = .array([.string(colors.randomElement(using: &rng)!), 1, nil, true]) }
        return Conversation(title: "C\(index % 5)", metadata: .object(metadata),
                            labels: Bool.random(using: &rng) ? ["team": colors.randomElement(using: &rng)!] : [:],
                            counts: Bool.random(using: &rng) ? ["unread": Int.random(in: 0...3, using: &rng)] : nil,
                            scores: ["rank": Double(Int.random(in: 0...4, using: &rng)) / 2],
                            flags: Bool.random(using: &rng) ? ["muted": Bool.random(using: &rng)] : [:])
    }

    @Test func documentsRoundTrip() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Conversation.self)
            var value = Conversation(title: "all", metadata: [
                "null": nil, "bool": false, "number": -2.5, "big": 1e300, "string": "Grüße 🌍 \"quoted\"\n",
                "array": [1, [2, [3]], ["deep": ["deeper": true]]], "": "empty key", "nested": ["a": ["b": ["c": ["d": "e"]]]],
            ], labels: ["ü": "x", "": ""], counts: ["max": .max, "min": .min], scores: ["nan": .infinity, "zero": -0.0], flags: ["t": true])
            try box.put(&value)
            #expect(try box.get(value.id) == value)
            var empty = Conversation(title: "none")
            try box.put(&empty)
            #expect(try box.get(empty.id) == empty)
        }
    }

    @Test func layersMetadataQueriesAgreeWithAPlainFilter() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Conversation.self)
            var rng = SplitMix64(state: 0x1A7E)
            var all = (0..<250).map { Self.random($0, using: &rng) }
            try box.put(&all)
            func check(_ condition: QueryCondition<Conversation>, _ selector: String?, _ expected: (Conversation) -> Bool, _ label: String) throws {
                let wanted = all.filter(expected).map(\.id)
                #expect(try box.query { condition }.build().findIds() == wanted, "\(label)")
                if let selector {
                    #expect(try box.query(selector: selector).build().findIds() == wanted, "selector \(label)")
                    var lines: [Id] = []
                    try store.query(entity: "Conversation", selector: selector, fields: ["id"]) { lines.append(Id($0.dropFirst(6).dropLast())!) }
                    #expect(lines == wanted, "catalog \(label)")
                }
            }
            // Layer: nested path equality, IN on a key, a compound predicate with the title.
            try check(Conversation.metadata["first"]["second"]["third"] == "NestedResult",
                      #"{"metadata.first.second.third": "NestedResult"}"#,
                      { $0.metadata["first"]?["second"]?["third"] == "NestedResult" }, "nested")
            try check(Conversation.metadata["backgroundColor"].isIn(["red", "blue"]),
                      #"{"metadata.backgroundColor": {"$in": ["red", "blue"]}}"#,
                      { ["red", "blue"].contains($0.metadata["backgroundColor"] ?? nil) }, "in")
            try check(Conversation.title == "C1" && Conversation.metadata["backgroundColor"] == "green",
                      #"{"title": "C1", "metadata.backgroundColor": "green"}"#,
                      { $0.title == "C1" && $0.metadata["backgroundColor"] == "green" }, "compound")
            try check(Conversation.metadata["priority"] >= 3, #"{"metadata.priority": {"$gte": 3}}"#,
                      { if case .number(let n)? = $0.metadata["priority"] { return n >= 3 } else { return false } }, "number")
            try check(Conversation.metadata["priority"].isNil(), #"{"metadata.priority": {"$exists": false}}"#,
                      { $0.metadata["priority"] == nil }, "missing")
            try check(Conversation.metadata["backgroundColor"] != "red", #"{"metadata.backgroundColor": {"$ne": "red"}}"#,
                      { $0.metadata["backgroundColor"] != "red" }, "ne")
            try check(Conversation.metadata["tags"].containsElement("blue"), #"{"metadata.tags": "blue"}"#,
                      { if case .array(let items)? = $0.metadata["tags"] { return items.contains("blue") } else { return false } }, "array element")
            // Dictionaries, by key and by key presence.
            try check(Conversation.labels["team"] == "red", #"{"labels.team": "red"}"#, { $0.labels["team"] == "red" }, "labels")
            try check(Conversation.labels["team"].isNotNil(), #"{"labels.team": {"$exists": true}}"#, { $0.labels["team"] != nil }, "presence")
            try check(Conversation.counts["unread"] > 1, #"{"counts.unread": {"$gt": 1}}"#, { ($0.counts?["unread"] ?? -1) > 1 }, "counts")
            try check(Conversation.scores["rank"] == 1.5, #"{"scores.rank": 1.5}"#, { $0.scores["rank"] == 1.5 }, "scores")
            try check(Conversation.flags["muted"] == true, #"{"flags.muted": true}"#, { $0.flags["muted"] == true }, "flags")
            #expect(throws: CofferError.self) { try box.query(selector: #"{"metadata.a": {"$gt": [1]}}"#) }
            #expect(throws: CofferError.self) { try box.query(selector: #"{"metadata..a": 1}"#) }
            #expect(throws: CofferError.self) { try box.query(selector: "{}", sort: [("metadata", .ascending)]) }
            #expect(try box.query { Conversation.metadata["first"]["second"] == "x" }.build().describe().contains(#"metadata["first"]["second"]"#))
        }
    }

    @Test func exportAndImportKeepDocuments() throws {
        try withStore { (source: Store) throws in
            try withStore { (target: Store) throws in
                var rng = SplitMix64(state: 0xD0C)
                var all = (0..<60).map { Self.random($0, using: &rng) }
                try source.box(for: Conversation.self).put(&all)
                var text = ""
                try source.dump(entity: "Conversation") { text += $0 + "\n" }
                #expect(text.contains(#""metadata":{"#))
                try target.copySchema(of: "Conversation", from: source)
                try target.importObjects(entity: "Conversation", jsonLines: Data(text.utf8))
                #expect(try target.box(for: Conversation.self).all() == all)
                #expect(throws: CofferError.self) {
                    try target.importObjects(entity: "Conversation", jsonLines: Data(#"{"title": "x", "counts": {"a": 1.5}}"#.utf8))
                }
                #expect(throws: CofferError.self) {
                    try target.importObjects(entity: "Conversation", jsonLines: Data(#"{"title": "x", "metadata": {"a": [{"b": 1, "b": 2}]}}"#.utf8))
                }
                #expect(try target.box(for: Conversation.self).all() == all)
            }
        }
    }

    @Test func checkReportsDamagedPayloadsOfTheNewKinds() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Conversation.self)
            let id = try box.put(Conversation(title: "ok"))
            #expect(try store.verify().isIntact)
            // A well-framed field whose document is garbage (as damage could leave it).
            try store.performWrite { transaction in
                let binding = try store.writableBinding(for: Conversation.self, in: transaction)
                var same = id
                try transaction.storeObject(id: &same, binding: binding) { writer, _ in
                    writer.write(1, "ok")
                    DocumentCodec.writeField(2, to: &writer) { $0.reserve(3); $0.append(UInt8(7)); $0.append(UInt16(0xFFFF)) }
                }
            }
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("damaged document") }, "\(report.problems)")
            #expect(throws: CofferError.self) { try box.get(id) }
            #expect(throws: CofferError.self) { try box.query { Conversation.metadata["a"] == 1 }.build().find() }
        }
    }

    @Test func damagedDocumentsNeverTrapAndAreReportedAsDamage() throws {
        var rng = SplitMix64(state: 0xBAD)
        let buffer = RecordBuffer()
        let storedIds: [UInt16] = [0, 1]
        let valid: [UInt8] = try storedIds.withUnsafeBufferPointer { ids in
            var writer = RecordWriter(buffer: buffer, storedIds: ids.baseAddress!)
            JSONValue.object(["a": [1, "b", ["c": true]], "d": nil]).cofferWrite(1, to: &writer)
            buffer.adopt(writer)
            return Array(try #require(try RecordFields(bytes: writer.bytes, entity: "Document", id: 0).field(1)).payload)
        }
        #expect(valid.withUnsafeBytes { DocumentCodec.decode($0) } != nil)
        for _ in 0..<20_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                if Bool.random(using: &rng) { bytes[at] = UInt8.random(in: 0...255, using: &rng) } else { bytes.remove(at: at) }
                if bytes.isEmpty { break }
            }
            _ = bytes.withUnsafeBytes { DocumentCodec.decode($0) }
            _ = bytes.withUnsafeBytes { DocumentCodec.find(["a"], in: $0) }
        }
        let deep = [UInt8](repeating: 6, count: 0) + Array(repeating: [6, 1, 0, 0, 0], count: 100).flatMap { $0 } + [0]
        #expect(deep.withUnsafeBytes { DocumentCodec.decode($0) } == nil, "nesting beyond the limit is damage")
    }
}
