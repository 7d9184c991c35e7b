@testable import Coffer
import Foundation
import Testing

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
