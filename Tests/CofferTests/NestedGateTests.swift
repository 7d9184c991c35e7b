@testable import Coffer
import CLMDB
import Foundation
import Testing

/// A value set by one thread and read by another.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = ""
    var value: String { lock.lock(); defer { lock.unlock() }; return stored }
    func set(_ value: String) { lock.lock(); stored = value; lock.unlock() }
}

/// Public calls made inside a transaction closure never take the store's gate a second time.
@Suite(.serialized) struct NestedGateTests {
    /// Regression: `backup(to:)` inside `store.read { }` took the gate again
    /// and waited behind a `close()` waiting for that very read: a deadlock.
    @Test func copyInsideAReadWhileCloseWaitsDoesNotDeadlock() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        try store.box(for: Note.self).put(Note(title: "kept"))
        let inRead = DispatchSemaphore(value: 0)
        let copied = DispatchSemaphore(value: 0)
        let outcome = ResultBox()
        let reader = Thread {
            do {
                try store.read {
                    inRead.signal()
                    // Give the closing thread time to start waiting for the gate.
                    Thread.sleep(forTimeInterval: 0.3)
                    try store.backup(to: directory.path + "/backup")
                    try store.backup(to: directory.path + "/copy")
                }
                outcome.set("ok")
            } catch {
                outcome.set("\(error)")
            }
            copied.signal()
        }
        reader.start()
        inRead.wait()
        let closer = Thread { try? store.close() }
        closer.start()
        let finished = copied.wait(timeout: .now() + 30) == .success
        #expect(finished, "backup inside a read deadlocked behind close()")
        guard finished else { return }
        #expect(outcome.value == "ok")
        for copy in ["backup", "copy"] {
            let opened = try Store(directory: directory.path + "/" + copy)
            #expect(try opened.box(for: Note.self).all().map(\.title) == ["kept"])
            try opened.close()
        }
    }

    /// Copies and checks of a write's uncommitted state are refused; inside a read they
    /// work on the latest committed state.
    @Test func copyAndVerifyInsideTransactions() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try withStore { (store: Store) throws in
            try store.box(for: Note.self).put(Note(title: "a"))
            #expect(throws: CofferError.self) { try store.write { try store.backup(to: directory.path + "/w") } }
            #expect(throws: CofferError.self) { try store.write { try store.verify() } }
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/w/data.mdb"))
            // A commit from another thread after the read began: verify still checks a snapshot.
            let report = try store.read { () throws -> VerificationReport in
                let other = Thread { _ = try? store.box(for: Note.self).put(Note(title: "b")) }
                other.start()
                while try store.performLatestRead({ _ in try store.box(for: Note.self).count() }) < 2 {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                return try store.verify()
            }
            #expect(report.isIntact && report.objectsChecked == 2)
        }
    }
}
