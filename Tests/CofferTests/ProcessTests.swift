@testable import Coffer
import Foundation
import Testing

/// Runs this test binary again as a child process that executes one "child" test, selected
/// by an environment variable the child tests check (without it they return at once).
enum ChildProcess {
    static let roleVariable = "COFFER_TEST_CHILD"
    static let directoryVariable = "COFFER_TEST_DIRECTORY"

    /// The role this process plays, if it is a child.
    static var role: String? { ProcessInfo.processInfo.environment[roleVariable] }
    static var directory: String? { ProcessInfo.processInfo.environment[directoryVariable] }

    /// Starts the child test `filter` with `role` on `directory`; standard output is a pipe.
    static func start(filter: String, role: String, directory: String) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try selfPath())
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        var environment = ProcessInfo.processInfo.environment
        environment[roleVariable] = role
        environment[directoryVariable] = directory
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }

    static func selfPath() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// Writes a line to standard output at once (the parent reads it as it comes).
    static func report(_ line: String) {
        let data = Data((line + "\n").utf8)
        data.withUnsafeBytes { raw in _ = write(STDOUT_FILENO, raw.baseAddress, raw.count) }
    }
}

/// Collects the lines a child writes, from a reading thread.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private var lines: [String] = []

    func feed(_ data: Data) {
        lock.lock(); defer { lock.unlock() }
        buffer.append(data)
        while let newline = buffer.firstIndex(of: 10) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
    }

    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}

@Suite(.serialized) struct CrashTests {
    /// The child: commits transactions forever, reporting each commit after it returns.
    /// Transaction n stores three notes titled "t<n>" (unique ranks 3n...3n+2), a scratch note,
    /// removes the previous scratch note and updates an older note: any partial transaction
    /// would show as a title with one or two notes, or two scratch notes.
    @Test func crashChildWriter() throws {
        guard ChildProcess.role == "crash-writer", let directory = ChildProcess.directory else { return }
        // A small map, so that some transactions grow it and are rerun while being killed.
        let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync))
        let notes = store.box(for: Indexed.Note.self)
        var n = try notes.query { Indexed.Note.title.startsWith("t") }.build().count() / 3
        var scratch: Id = try notes.query { Indexed.Note.title == "scratch" }.build().findIds().first ?? 0
        while true {
            n += 1
            let number = n
            let previousScratch = scratch
            scratch = try store.write {
                for offset in 0..<3 {
                    try notes.put(Indexed.Note(title: "t\(number)", body: String(repeating: "x", count: 200), rank: 3 * number + offset))
                }
                if previousScratch != 0 { try notes.remove(previousScratch) }
                if var older = try notes.get(Id(max(1, number - 5))) {
                    older.body += "!"
                    try notes.put(&older)
                }
                return try notes.put(Indexed.Note(title: "scratch", rank: -number))
            }
            ChildProcess.report("committed \(number)")
        }
    }

    static func checkAfterCrash(directory: String, reported: Set<Int>, run: Int) throws {
        let store = try Store(directory: directory)
        defer { try? store.close() }
        let notes = store.box(for: Indexed.Note.self)
        let all = try notes.all()
        var byTitle: [String: Int] = [:]
        for note in all { byTitle[note.title, default: 0] += 1 }
        for number in reported { #expect(byTitle["t\(number)"] == 3, "commit \(number) was reported but is missing") }
        for (title, count) in byTitle where title.hasPrefix("t") { #expect(count == 3, "\(title) is partial") }
        #expect((byTitle["scratch"] ?? 0) <= 1)
        // Writing after the crash works and the indexes agree with the records.
        try notes.put(Indexed.Note(title: "after", rank: Int.min + run))
        #expect(try IndexProbe.isConsistent(store, Indexed.Note.self))
    }

    @Test func killedWriterLosesNoCommitAndLeavesNoPartialTransaction() throws {
        guard ChildProcess.role == nil else { return }
        let runs = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_RUNS"] ?? "") ?? 24
        var random = SplitMix64(state: 42)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var reported = Set<Int>()
        for run in 0..<runs {
            let (child, pipe) = try ChildProcess.start(filter: "crashChildWriter", role: "crash-writer", directory: directory.path)
            let lines = LineCollector()
            pipe.fileHandleForReading.readabilityHandler = { handle in lines.feed(handle.availableData) }
            // Wait for the child's first commit, then kill it at a random moment.
            let deadline = Date().addingTimeInterval(30)
            while lines.all.isEmpty, child.isRunning, Date() < deadline { usleep(1_000) }
            usleep(UInt32.random(in: 0...40_000, using: &random))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
            lines.feed(pipe.fileHandleForReading.readDataToEndOfFile())
            for line in lines.all where line.hasPrefix("committed ") {
                if let number = Int(line.dropFirst("committed ".count)) { reported.insert(number) }
            }
            try Self.checkAfterCrash(directory: directory.path, reported: reported, run: run)
        }
        #expect(!reported.isEmpty)
    }
}

@Suite(.serialized) struct MultiProcessTests {
    /// The child: stores one note in a store the parent has open read-only.
    @Test func writerChild() throws {
        guard ChildProcess.role == "writer", let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        try store.box(for: Person.self).put(Person(firstName: "Grace", lastName: "Hopper", age: 85))
        try store.close()
    }

    @Test func readOnlyStoreSeesEntitiesCreatedByAnotherProcess() throws {
        guard ChildProcess.role == nil else { return }
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        // Created empty, then opened read-only before the entity exists.
        try Store(directory: directory.path).close()
        let reader = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        defer { try? reader.close() }
        let people = reader.box(for: Person.self)
        #expect(try people.count() == 0)
        let (child, _) = try ChildProcess.start(filter: "writerChild", role: "writer", directory: directory.path)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        #expect(try people.count() == 1)
        #expect(try people.query { Person.firstName == "Grace" }.build().find().map(\.age) == [85])
        #expect(try reader.info().entities.map(\.name).contains("Person"))
    }
}

@Suite struct StoreOpeningTests {
    @Test func truncatedFileIsRefusedWithAClearError() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path)
        try store.box(for: Note.self).put((0..<2_000).map { Note(title: "note \($0)", body: String(repeating: "b", count: 100)) })
        try store.close()
        let file = directory.path + "/data.mdb"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(truncate(file, off_t(size / 2)) == 0)
        #expect {
            _ = try Store(directory: directory.path)
        } throws: { error in
            guard case CofferError.damagedStore(.file(directory.path), let reason) = error else { return false }
            return reason.contains("truncated")
        }
        // A file that was merely extended (a copy padded with zeros) still opens.
        #expect(truncate(file, off_t(size)) == 0)
        #expect(truncate(file, off_t(size + 8192)) == 0)
        let reopened = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        try reopened.close()
    }

    /// LMDB counts in its last page number the pages a transaction allocated and freed again
    /// before committing, and never writes them, so a store's file may end before that page
    /// when the pages past its end are all free (seen with Debian's LMDB 0.9.24 after a
    /// removal). Such a store is whole: it opens, verifies, reads and grows again; a file that
    /// lacks a page in use is still refused and reported as truncated.
    @Test func storesWhoseLastPagesAreFreeOpenAndVerify() throws {
        var found = 0
        for count in stride(from: 50, through: 400, by: 25) {
            let directory = TemporaryDirectory()
            defer { directory.cleanUp() }
            let store = try Store(directory: directory.path)
            let notes = store.box(for: Note.self)
            try notes.put((0..<count).map { Note(title: "note \($0)", body: String(repeating: "b", count: 200)) })
            try notes.put((0..<count).map { Note(title: "later \($0)", body: String(repeating: "c", count: 200)) })
            // The newest objects go: the pages at the file's end become free.
            try notes.remove(Array(Id(count + 1)...Id(2 * count)))
            // Small writes after it copy the pages the removal wrote last into free pages
            // lower down, so that the pages at the end become free.
            for round in 0..<3 { try notes.put(Note(title: "small \(round)")) }
            try store.close()
            let file = directory.path + "/data.mdb"
            let list = try #require(FileVerifier.freeList(file: file))
            guard list.pages.contains(list.lastPage) else { continue }
            found += 1
            // Cut the free pages off the end, as LMDB leaves them when it never wrote them.
            var lastInUse = list.lastPage
            while list.pages.contains(lastInUse) { lastInUse -= 1 }
            #expect(truncate(file, off_t(Int(lastInUse + 1) * list.pageSize)) == 0)
            #expect(FileVerifier.freeList(file: file)?.missingPagesAreFree == true)
            #expect(try Store.verify(directory: directory.path).isIntact, "\(count)")
            let reopened = try Store(directory: directory.path)
            #expect(try reopened.box(for: Note.self).count() == count + 3)
            #expect(try reopened.verify().isIntact, "\(count)")
            try reopened.box(for: Note.self).put((0..<count).map { Note(title: "again \($0)", body: String(repeating: "d", count: 200)) })
            #expect(try reopened.verify().isIntact, "\(count)")
            try reopened.close()
            // One page in use missing as well: refused, and reported.
            let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
            let list2 = try #require(FileVerifier.freeList(file: file))
            var used = list2.lastPage
            while list2.pages.contains(used) { used -= 1 }
            #expect(truncate(file, off_t(min(size, Int(used) * list2.pageSize))) == 0)
            #expect { _ = try Store(directory: directory.path) } throws: { error in
                guard case CofferError.damagedStore(.file(directory.path), let reason) = error else { return false }
                return reason.contains("truncated")
            }
            #expect(try Store.verify(directory: directory.path).problems.contains { $0.contains("truncated") })
        }
        #expect(found > 0)
    }

    /// Whatever LMDB leaves behind after random workloads (transactions of random puts,
    /// updates and removals of records of random sizes, with indexes, often ending with a
    /// large removal and small writes), a closed store opens again, verifies intact and holds
    /// what a plain model says: the size check at open never takes a whole store for a
    /// truncated one. (LMDB leaves free pages past the file's end rarely; the test above
    /// builds that case on purpose.)
    @Test func storesAfterRandomWorkloadsAlwaysReopen() throws {
        var random = SplitMix64(state: 0x5EED)
        for round in 0..<40 {
            let directory = TemporaryDirectory()
            defer { directory.cleanUp() }
            var model: [Id: String] = [:]
            let store = try Store(directory: directory.path)
            let contacts = store.box(for: Contact.self)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                try store.write {
                    for _ in 0..<Int.random(in: 1...300, using: &random) {
                        if !model.isEmpty, Int.random(in: 0..<3, using: &random) == 0, let id = model.keys.randomElement(using: &random) {
                            #expect(try contacts.remove(id))
                            model[id] = nil
                        } else {
                            let note = String(repeating: "n", count: Int.random(in: 0...600, using: &random))
                            var contact = Contact(city: ["Oslo", "Rome", "Lima"].randomElement(using: &random)!,
                                                  age: Int.random(in: 0...99, using: &random), note: note)
                            if !model.isEmpty, Bool.random(using: &random), let id = model.keys.randomElement(using: &random) { contact.id = id }
                            try contacts.put(&contact)
                            model[contact.id] = note
                        }
                    }
                }
            }
            // Often a large removal, then small writes: the pattern that leaves free pages at
            // the end of the file (see the test above).
            if Bool.random(using: &random) {
                let doomed = model.keys.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }
                #expect(try contacts.remove(doomed) == doomed.count)
                for id in doomed { model[id] = nil }
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    var contact = Contact(city: "Oslo", age: 1, note: "small")
                    try contacts.put(&contact)
                    model[contact.id] = "small"
                }
            }
            try store.close()
            let reopened = try Store(directory: directory.path)
            let stored = try reopened.box(for: Contact.self).all()
            #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.note) }) == model, "round \(round)")
            #expect(try reopened.verify().isIntact, "round \(round)")
            try reopened.close()
        }
    }

    @Test func sameDirectoryThroughASymlinkIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path)
        defer { try? store.close() }
        let link = directory.path + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.path)
        defer { try? FileManager.default.removeItem(atPath: link) }
        #expect(throws: CofferError.self) { _ = try Store(directory: link) }
    }

    @Test func closingInsideOwnTransactionIsAnError() throws {
        try withStore { (store: Store) throws in
            #expect(throws: CofferError.self) { try store.read { try store.close() } }
            #expect(throws: CofferError.self) { try store.write { try store.close() } }
            #expect(try store.box(for: Note.self).count() == 0)   // still open
        }
    }

    @Test func readsNeverTakeTheWriterLock() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "x"))
            // While another thread holds a write transaction, first reads of other entities
            // and of the written one complete (the gate is shared, the writer lock untouched).
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let writer = Thread {
                try? store.write {
                    started.signal()
                    release.wait()
                }
            }
            writer.start()
            started.wait()
            defer { release.signal() }
            #expect(try store.box(for: Note.self).count() == 1)
            #expect(try store.box(for: Person.self).count() == 0)
            #expect(try store.box(for: Note.self).query { Note.title == "x" }.build().describe().contains("Note"))
        }
    }

    @Test func mapGrowthIsNotStarvedByReaders() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) throws in
            let notes = store.box(for: Note.self)
            try notes.put(Note(title: "seed"))
            let stop = Flag()
            let readers = (0..<4).map { _ in
                Thread {
                    while !stop.isSet { _ = try? notes.count() }
                }
            }
            readers.forEach { $0.start() }
            defer { stop.set() }
            // Needs the map to grow several times while the readers keep reading.
            try notes.put((0..<20_000).map { Note(title: "n\($0)", body: String(repeating: "z", count: 200)) })
            #expect(try notes.count() == 20_001)
        }
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}

@Suite struct ConcurrencySoakTests {
    /// Writers (threads and tasks) move balance between accounts and add notes that make the
    /// map grow; readers (threads and tasks) check in every snapshot that the total is
    /// unchanged, that every account is found through its unique index and that the notes
    /// counted through the table and through a query agree. `COFFER_SOAK_SECONDS` sets the
    /// duration (Scripts/soak.sh runs it for minutes).
    @Test func readersAndWritersKeepInvariants() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["COFFER_SOAK_SECONDS"] ?? "") ?? 1.5
        try await withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) async throws in
            let accounts = store.box(for: Account.self)
            let notes = store.box(for: Note.self)
            try accounts.put((0..<20).map { Account(handle: "@\($0)", balance: 100) })
            let deadline = Date().addingTimeInterval(seconds)
            let failures = Counter()
            let checks = Counter()
            @Sendable func check() throws {
                try store.read {
                    let all = try accounts.all()
                    if all.count != 20 || all.reduce(0, { $0 + $1.balance }) != 2_000 { failures.add() }
                    let handle = "@\(Int.random(in: 0..<20))"
                    let holders = try accounts.query({ Account.handle == handle }).build().count()
                    if holders != 1 { failures.add() }
                    let counted = try notes.query({ Note.rank >= 0 }).build().count()
                    if try notes.count() != counted { failures.add() }
                }
                checks.add()
            }
            @Sendable func transfer(_ seed: Int) throws {
                try store.write {
                    let from = Id.random(in: 1...20), to = Id.random(in: 1...20)
                    guard var a = try accounts.get(from), var b = try accounts.get(to), from != to else { return }
                    a.balance -= 7
                    b.balance += 7
                    try accounts.put(&a)
                    try accounts.put(&b)
                    if seed % 3 == 0 { try notes.put(Note(title: "n", body: String(repeating: "g", count: 2_000), rank: seed)) }
                }
            }
            let threads = (0..<4).map { number in
                Thread {
                    var seed = number
                    while Date() < deadline {
                        seed += 4
                        do { if number < 2 { try check() } else { try transfer(seed) } } catch { failures.add() }
                    }
                }
            }
            threads.forEach { $0.start() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<4 {
                    group.addTask {
                        var seed = number
                        while Date() < deadline {
                            seed += 4
                            if number % 2 == 0 {
                                try await store.read { try check() }
                            } else {
                                let current = seed
                                try await store.write { try transfer(current) }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            while threads.contains(where: { $0.isExecuting }) { try await Task.sleep(nanoseconds: 10_000_000) }
            #expect(failures.value == 0)
            #expect(checks.value > 0)
            #expect(try accounts.all().reduce(0, { $0 + $1.balance }) == 2_000)
            #expect(try IndexProbe.isConsistent(store, Account.self))
        }
    }
}

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

@Suite(.serialized) struct SchemaAcrossProcessesTests {
    /// The child: a newer build that adds an indexed property and stores objects with it.
    @Test func newerBuildChild() throws {
        guard ChildProcess.role == "newer-build", let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        try store.box(for: V2.Poem.self).put((1...5).map { V2.Poem(title: "new \($0)", rating: $0) })
        try store.close()
    }

    /// Regression: a process that had bound an entity before another build changed its
    /// schema kept writing without maintaining that build's index.
    @Test func olderBuildKeepsTheNewerBuildsIndexMaintained() throws {
        guard ChildProcess.role == nil else { return }
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        let poems = store.box(for: Poem.self)
        try poems.put(Poem(title: "old"))   // binds Poem before the newer build runs
        let (child, _) = try ChildProcess.start(filter: "newerBuildChild", role: "newer-build", directory: directory.path)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        // The older build inserts, updates and removes while the newer build's index exists.
        try poems.put(Poem(title: "older insert"))
        var second = try #require(try poems.get(2))
        second.title = "changed"
        try poems.put(&second)
        try poems.remove(3)
        #expect(try IndexProbe.isConsistent(store, V2.Poem.self))
        #expect(try store.verify().isIntact)
        let newer = store.box(for: V2.Poem.self)
        #expect(try newer.query { V2.Poem.rating >= 1 }.build().find().map(\.rating) == [1, 3, 4, 5])
    }
}
