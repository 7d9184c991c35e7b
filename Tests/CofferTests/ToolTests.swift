@testable import Coffer
import Foundation
import Testing

/// Runs the built `coffer` tool (next to the test bundle: `swift test` builds it) on stores
/// this process writes, as a user runs it beside an app.
@Suite(.serialized) struct ToolTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    static func toolPath() throws -> String {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("coffer").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ToolMissing(path: path)
        }
        return path
    }

    /// Runs `coffer arguments...` with `input` on standard input.
    @discardableResult
    static func coffer(_ arguments: [String], input: Data? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try toolPath())
        process.arguments = arguments
        let output = Pipe(), errors = Pipe(), standardInput = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = standardInput
        try process.run()
        // Read both pipes while the tool runs: a full pipe would block it.
        let collected = LockedData()
        let group = DispatchGroup()
        for (pipe, isOutput) in [(output, true), (errors, false)] {
            DispatchQueue.global().async(group: group) {
                collected.set(pipe.fileHandleForReading.readDataToEndOfFile(), isOutput: isOutput)
            }
        }
        if let input { standardInput.fileHandleForWriting.write(input) }
        try standardInput.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return Run(status: process.terminationStatus, output: String(decoding: collected.output, as: UTF8.self),
                   errors: String(decoding: collected.errors, as: UTF8.self))
    }

    final class LockedData: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: (Data, Data) = (Data(), Data())
        var output: Data { lock.withLock { storage.0 } }
        var errors: Data { lock.withLock { storage.1 } }
        func set(_ data: Data, isOutput: Bool) {
            lock.withLock { if isOutput { storage.0 = data } else { storage.1 = data } }
        }
    }

    static func populate(_ store: Store) throws {
        try store.box(for: Contact.self).put((0..<120).map {
            Contact(email: "c\($0)@example.com", externalId: "x\($0)", city: ["Oslo", "Rome", "Lima"][$0 % 3], age: $0 % 50,
                    born: $0 % 4 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double($0) * 86_400.25), note: "note \($0)")
        })
        var ada = Student(name: "Ada")
        ada.teachers.append(Teacher(name: "Grace"))
        try store.box(for: Student.self).put(&ada)
        var order = Order(date: Date(timeIntervalSinceReferenceDate: 1), total: 3)
        order.customer.target = Customer(name: "Joe")
        try store.box(for: Order.self).put(&order)
    }

    @Test func queryPrintsMatchesSortedPagedAndProjected() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let run = try Self.coffer(["query", store.path, "Contact", #"{"city": "Rome", "age": {"$gte": 40}}"#,
                                       "--sort", "age:desc", "--skip", "1", "--limit", "2", "--fields", "age,city"])
            #expect(run.status == 0, "\(run.errors)")
            let expected = try store.box(for: Contact.self).query { Contact.city == "Rome" && Contact.age >= 40 }
                .ordered(by: Contact.age, flags: .descending).build().find().dropFirst().prefix(2)
                .map { "{\"city\":\"Rome\",\"age\":\($0.age)}" }
            #expect(run.lines == Array(expected))
            let explained = try Self.coffer(["query", store.path, "Contact", #"{"city": "Rome"}"#, "--explain"])
            #expect(explained.status == 0 && explained.output.contains("city"), "\(explained.output)")
            let linked = try Self.coffer(["query", store.path, "Order", #"{"customer.name": "Joe"}"#, "--fields", "total"])
            #expect(linked.lines == [#"{"total":3}"#])
            let bad = try Self.coffer(["query", store.path, "Contact", #"{"age": {"$mod": [0, 1]}}"#])
            #expect(bad.status == 1 && bad.errors.contains("$mod") && bad.output.isEmpty)
        }
    }

    @Test func sqlPrintsRowsATableOrThePlan() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let statement = "SELECT city, COUNT(*) AS n, MIN(age) FROM Contact WHERE age >= ? GROUP BY city ORDER BY city"
            let run = try Self.coffer(["sql", store.path, statement, "--param", "40"])
            #expect(run.status == 0, "\(run.errors)")
            let expected = try store.query(sql: statement, parameters: [40]).rows.map(\.json)
            #expect(run.lines == expected && expected.count == 3)
            #expect(run.lines.first == #"{"city":"Lima","n":6,"MIN(age)":41}"#)
            let table = try Self.coffer(["sql", store.path, "SELECT city, age FROM Contact WHERE age = :age ORDER BY id LIMIT 2",
                                         "--named", "age=7", "--table"])
            #expect(table.lines == ["city | age", "-----+----", "Rome | 7", "Oslo | 7", "(2 rows)"], "\(table.output)")
            let explained = try Self.coffer(["sql", store.path, "SELECT * FROM Contact WHERE city = 'Rome'", "--explain"])
            #expect(explained.status == 0 && explained.output.hasPrefix("Contact: index on city"), "\(explained.output)")
            let bad = try Self.coffer(["sql", store.path, "SELECT nope FROM Contact"])
            #expect(bad.status == 1 && bad.errors.contains("position 8") && bad.output.isEmpty, "\(bad.errors)")
        }
    }

    @Test func exportThenImportIntoANewStoreGivesIdenticalObjects() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let copy = TemporaryDirectory()
            defer { copy.cleanUp() }
            for entity in ["Contact", "Student", "Teacher", "Order", "Customer"] {
                let exported = try Self.coffer(["export", store.path, entity])
                #expect(exported.status == 0 && exported.errors.contains("exported"), "\(exported.errors)")
                let imported = try Self.coffer(["import", copy.path, entity, "--schema-from", store.path], input: Data(exported.output.utf8))
                #expect(imported.status == 0, "\(imported.errors)")
                #expect(imported.output.contains("new"), "\(imported.output)")
                let again = try Self.coffer(["export", copy.path, entity, "--quiet"])
                #expect(again.output == exported.output && again.errors.isEmpty, "\(entity)")
            }
            let restored = try Store(directory: copy.path)
            defer { try? restored.close() }
            let originals = try store.box(for: Contact.self).all()
            let copies = try restored.box(for: Contact.self).all()
            #expect(copies.map(\.id) == originals.map(\.id))
            for (a, b) in zip(originals, copies) {
                #expect(a.email == b.email && a.externalId == b.externalId && a.city == b.city && a.age == b.age)
                #expect(a.born == b.born && a.note == b.note && a.created == b.created && a.modified == b.modified)
            }
            #expect(try restored.box(for: Student.self).all().first?.teachers.load().map(\.name) == ["Grace"])
            #expect(try restored.box(for: Order.self).all().first?.customer.target?.name == "Joe")
            #expect(try restored.box(for: Contact.self).query { Contact.city == "Lima" }.build().count() == 40)
            #expect(try restored.verify().isIntact)
        }
    }

    @Test func aBadLineStopsTheImportWithItsNumberAndChangesNothing() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let before = try Self.coffer(["export", store.path, "Contact", "--quiet"]).output
            let input = Data("{\"city\": \"Bergen\"}\n{\"city\": \"Oslo\", \"age\": \"old\"}\n".utf8)
            let run = try Self.coffer(["import", store.path, "Contact", "--quiet"], input: input)
            #expect(run.status == 1)
            #expect(run.errors.contains("line 2") && run.errors.contains("Contact.age"), "\(run.errors)")
            #expect(try Self.coffer(["export", store.path, "Contact", "--quiet"]).output == before)
            let upsert = try Self.coffer(["import", store.path, "Contact", "--upsert-by", "externalId", "--quiet"],
                                         input: Data(#"{"externalId": "x7", "city": "Bergen"}"#.utf8))
            #expect(upsert.status == 0 && upsert.output.contains("0 new, 1 updated"), "\(upsert.output) \(upsert.errors)")
            #expect(try store.box(for: Contact.self).get(8)?.city == "Bergen")
        }
    }

    @Test func checkPassesOnAHealthyStoreAndReportsABrokenIndexEntry() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let healthy = try Self.coffer(["check", store.path])
            #expect(healthy.status == 0 && healthy.output.contains("intact"), "\(healthy.output) \(healthy.errors)")
            #expect(healthy.errors.contains("checked"))
            var stray = [IndexKey.valueTag] + Array("Nowhere".utf8) + [0, 0]
            stray += withUnsafeBytes(of: Id(9_999).bigEndian) { Array($0) }
            try Damage.putIndexKey(store, Contact.city, key: stray)
            let broken = try Self.coffer(["check", store.path, "--quiet"])
            #expect(broken.status == 1)
            #expect(broken.output.contains("Contact.city") && broken.output.contains("9999"), "\(broken.output)")
            #expect(broken.errors.isEmpty)
        }
    }

    @Test func compactAndStatWork() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            try store.box(for: Contact.self).remove(Array(1...100))
            let copy = TemporaryDirectory()
            defer { copy.cleanUp() }
            let compacted = try Self.coffer(["compact", store.path, copy.path + "/out"])
            #expect(compacted.status == 0, "\(compacted.errors)")
            #expect(try Self.coffer(["check", copy.path + "/out", "--quiet"]).status == 0)
            let copied = try Self.coffer(["export", copy.path + "/out", "Contact", "--quiet"]).output
            #expect(copied == (try Self.coffer(["export", store.path, "Contact", "--quiet"]).output))
            let stat = try Self.coffer(["stat", store.path])
            #expect(stat.status == 0 && stat.output.contains("free pages") && stat.output.contains("reader slots"))
        }
    }

    @Test func importWaitsForTheAppsWriteAndBothLand() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let contacts = store.box(for: Contact.self)
            let appIsWriting = DispatchSemaphore(value: 0)
            let appDone = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                // The app holds its write transaction while the tool starts its import.
                try? store.write {
                    try contacts.put(Contact(city: "App"))
                    appIsWriting.signal()
                    Thread.sleep(forTimeInterval: 0.5)
                }
                appDone.signal()
            }
            appIsWriting.wait()
            let run = try Self.coffer(["import", store.path, "Contact", "--quiet"], input: Data(#"{"city": "Tool"}"#.utf8))
            appDone.wait()
            #expect(run.status == 0, "\(run.errors)")
            #expect(try contacts.query { Contact.city == "App" }.build().count() == 1)
            #expect(try contacts.query { Contact.city == "Tool" }.build().count() == 1)
            // The tool's object got an id after the app's.
            let app = try #require(try contacts.query { Contact.city == "App" }.build().findFirst())
            let tool = try #require(try contacts.query { Contact.city == "Tool" }.build().findFirst())
            #expect(tool.id > app.id)
            #expect(try store.verify().isIntact)
        }
    }
}

/// The `coffer` tool is not where `swift build` puts it.
struct ToolMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "the coffer tool is not built at \(path); run swift build first" }
}
