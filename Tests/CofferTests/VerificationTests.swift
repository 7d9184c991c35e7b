@testable import Coffer
import Foundation
import Testing

@Suite(.serialized) struct VerificationTests {
    static func populate(_ store: Store) throws {
        let contacts = store.box(for: Contact.self)
        try contacts.put((0..<300).map { Contact(email: "c\($0)@example.com", city: ["Oslo", "Rome", "Lima"][$0 % 3], age: $0 % 90, note: String(repeating: "n", count: $0 % 7 == 0 ? 3_000 : 20)) })
        let students = store.box(for: Student.self)
        var ada = Student(name: "Ada")
        ada.teachers.append(Teacher(name: "Grace"))
        try students.put(&ada)
        var order = Order(date: Date(), total: 3)
        order.customer.target = Customer(name: "Joe")
        try store.box(for: Order.self).put(&order)
        try contacts.remove(Array(1...40))
    }

    @Test func intactStoreVerifiesAndDamageIsReported() throws {
        try withStore { (store: Store) throws in
            try Self.populate(store)
            let report = try store.verify()
            #expect(report.isIntact, "\(report)")
            #expect(report.objectsChecked > 260 && report.pagesChecked > 10)
            try Damage.overwriteRecord(store, Contact.self, id: 50, with: DamageTests.garbage)
            var stray = [IndexKey.valueTag] + Array("Nowhere".utf8) + [0, 0]
            stray += withUnsafeBytes(of: Id(9_999).bigEndian) { Array($0) }
            try Damage.putIndexKey(store, Contact.city, key: stray)
            let damaged = try store.verify()
            #expect(damaged.problems.contains { $0.contains("Contact") && $0.contains("50") })
            #expect(damaged.problems.contains { $0.contains("city") && $0.contains("9999") })
        }
    }

    /// The child: opens a damaged copy (verifying it first) and reads everything; any error
    /// is fine, a crash is not.
    @Test func damagedReaderChild() throws {
        guard ChildProcess.role == "damaged-reader", let directory = ChildProcess.directory else { return }
        do {
            let store = try Store(directory: directory, options: StoreOptions(readOnly: true, verifyOnOpen: true))
            _ = try? store.box(for: Contact.self).all()
            _ = try? store.box(for: Contact.self).query { Contact.city == "Rome" }.build().find()
            _ = try? store.box(for: Contact.self).query().ordered(by: Contact.age).build().findIds()
            _ = try? store.box(for: Student.self).all().map { try? $0.teachers.load() }
            _ = try? store.dump(entity: "Contact") { _ in }
            _ = try? store.verify()
            try store.close()
        } catch {
            ChildProcess.report("refused: \(error)")
        }
    }

    @Test func damagedFilesAreReportedOrReadWithoutCrashing() throws {
        guard ChildProcess.role == nil else { return }
        let copies = Int(ProcessInfo.processInfo.environment["COFFER_DAMAGE_RUNS"] ?? "") ?? 40
        let original = TemporaryDirectory()
        defer { original.cleanUp() }
        let store = try Store(directory: original.path, options: StoreOptions(durability: .noSync))
        try Self.populate(store)
        try store.close()
        let file = try Data(contentsOf: URL(fileURLWithPath: original.path + "/data.mdb"))
        let pageSize = 4096
        var random = SplitMix64(state: 77)
        var reported = 0, opened = 0
        for _ in 0..<copies {
            var bytes = [UInt8](file)
            let page = Int.random(in: 2..<(bytes.count / pageSize), using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: for i in 0..<pageSize { bytes[page * pageSize + i] = 0 }
            case 1: for _ in 0..<16 { bytes[page * pageSize + Int.random(in: 0..<pageSize, using: &random)] = .random(in: 0...255, using: &random) }
            case 2: bytes[page * pageSize + Int.random(in: 0..<32, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 3: bytes.removeLast(Int.random(in: 1..<(bytes.count - 2 * pageSize), using: &random))
            default: bytes += [UInt8](repeating: 0, count: pageSize * Int.random(in: 1...4, using: &random))
            }
            let copy = TemporaryDirectory()
            defer { copy.cleanUp() }
            try FileManager.default.createDirectory(atPath: copy.path, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: copy.path + "/data.mdb"))
            // The structural check runs in this process: it must never trap.
            let report = try Store.verify(directory: copy.path)
            if !report.isIntact { reported += 1 }
            let (child, _) = try ChildProcess.start(filter: "damagedReaderChild", role: "damaged-reader", directory: copy.path)
            child.waitUntilExit()
            #expect(child.terminationReason == .exit, "a damaged copy crashed the reader: \(report)")
            opened += 1
        }
        #expect(reported > 0 && opened == copies)
    }
}
