@testable import Coffer
import Foundation
import Testing

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

    @Test func killedWriterLosesNoCommitAndLeavesNoPartialTransaction() async throws {
        guard ChildProcess.role == nil else { return }
        let runs = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_RUNS"] ?? "") ?? 24
        var random = SplitMix64(state: 42)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var reported = Set<Int>()
        for run in 0..<runs {
            reported.formUnion(try await ChildProcess.killAtRandomMoment(filter: "crashChildWriter", role: "crash-writer", directory: directory.path,
                                                                   using: &random))
            try Self.checkAfterCrash(directory: directory.path, reported: reported, run: run)
        }
        #expect(!reported.isEmpty)
    }
}
