import Coffer
import Foundation
import Observation

// A list and a detail bound to observable results, written the way SwiftUI views use them:
// each "screen" reads live objects in its render function and draws again when Observation
// says something it read changed (what SwiftUI does for a view's body). Then another process
// (this program started again with --writer, as an app extension would be) writes to the
// same store, and the screens follow. Checked: exits with status 1 when an expectation fails.
// Usage: LiveNotes [store-directory]      (LiveNotes --writer DIR TITLE is the other process)

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--writer", arguments.count == 3 {
    // The other process: one commit, then the moment it committed (a monotonic clock the
    // whole machine shares), for the parent's latency.
    let store = try Store(directory: arguments[1])
    try store.box(for: Note.self).put(Note(folder: "inbox", title: arguments[2]))
    print("committed \(DispatchTime.now().uptimeNanoseconds)")
    try store.close()
    exit(0)
}

let directory = arguments.first ?? NSTemporaryDirectory() + "live-notes-\(ProcessInfo.processInfo.processIdentifier).coffer"
var failures = 0

@MainActor func check(_ condition: Bool, _ what: String) {
    print("  \(condition ? "ok  " : "FAIL") \(what)")
    if !condition { failures += 1 }
}

/// A screen: draws its text from live objects and again whenever they change.
@MainActor final class Screen {
    private let render: @MainActor () -> String
    /// Every frame drawn, with when (to measure how fast a change shows).
    private(set) var frames: [(text: String, at: UInt64)] = []
    var text: String { frames.last?.text ?? "" }

    init(_ render: @escaping @MainActor () -> String) {
        self.render = render
        draw()
    }

    private func draw() {
        let text = withObservationTracking { render() } onChange: {
            // Called as a property is about to change; draw once it has.
            Task { @MainActor [weak self] in self?.draw() }
        }
        frames.append((text, DispatchTime.now().uptimeNanoseconds))
    }

    /// Waits (at most ten seconds) until the screen shows what `shows` accepts.
    func waitUntil(_ shows: (String) -> Bool) async throws -> Bool {
        for _ in 0..<1000 {
            if shows(text) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

@MainActor func scenarios() async throws {
    // Other processes' commits are checked for every 100 ms while anything observes.
    let store = try Store(directory: directory, options: StoreOptions(externalCommitCheckInterval: .milliseconds(100)))
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let notes = store.box(for: Note.self)
    var groceries = Note(folder: "inbox", title: "Groceries")
    try notes.put(&groceries)
    try notes.put([Note(folder: "inbox", title: "Call Ada"), Note(folder: "archive", title: "Taxes")])

    print("A list, its count and a detail, each drawn from live objects")
    let inbox = try notes.query { Note.folder == "inbox" }.ordered(by: Note.title).build()
    let list = LiveResults(inbox)
    let count = LiveValue(count: inbox)
    let detail = LiveObject(notes, id: groceries.id)
    let listScreen = Screen { "\(count.value ?? 0) notes: " + list.objects.map(\.title).joined(separator: ", ") }
    let detailScreen = Screen { detail.object.map { "\($0.title)\($0.pinned ? " (pinned)" : "")" } ?? "deleted" }
    check(listScreen.text == "2 notes: Call Ada, Groceries", "the list is drawn at once: \(listScreen.text)")
    check(detailScreen.text == "Groceries", "the detail is drawn at once")

    print("Writes of this process")
    try notes.put(Note(folder: "inbox", title: "Book flights"))
    check(try await listScreen.waitUntil { $0 == "3 notes: Book flights, Call Ada, Groceries" }, "a new note appears: \(listScreen.text)")
    groceries.pinned = true
    try notes.put(groceries)
    check(try await detailScreen.waitUntil { $0 == "Groceries (pinned)" }, "the detail follows an edit")
    try notes.put(Note(folder: "archive", title: "Old receipts"))
    try notes.put(Note(folder: "inbox", title: "Water plants"))
    check(try await listScreen.waitUntil { $0.hasSuffix("Water plants") }, "a note in another folder changes nothing")
    check(!listScreen.frames.contains { $0.text.contains("Old receipts") }, "no frame ever showed it")

    print("A write of another process (an app extension, say)")
    let writer = Process()
    writer.executableURL = Bundle.main.executableURL
    writer.arguments = ["--writer", directory, "From the widget"]
    let output = Pipe()
    writer.standardOutput = output
    try writer.run()
    writer.waitUntilExit()
    let reported = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let committedAt = reported.split(separator: "\n").compactMap { line in
        line.hasPrefix("committed ") ? UInt64(line.dropFirst("committed ".count)) : nil
    }.first
    check(writer.terminationStatus == 0 && committedAt != nil, "the other process committed")
    check(try await listScreen.waitUntil { $0.contains("From the widget") }, "its note appears: \(listScreen.text)")
    if let committedAt, let frame = listScreen.frames.first(where: { $0.text.contains("From the widget") }) {
        print("  commit in another process -> screen drawn: \(Double(frame.at &- committedAt) / 1e6) ms")
    }

    print("Removing and re-targeting")
    try notes.remove(groceries.id)
    check(try await detailScreen.waitUntil { $0 == "deleted" }, "the detail shows the removal")
    let flights = try notes.query { Note.title == "Book flights" }.build().findFirst()
    detail.id = flights?.id ?? 0
    check(detail.object?.title == "Book flights", "re-targeting reads the other note at once")
    check(try await detailScreen.waitUntil { $0 == "Book flights" }, "the detail screen shows it")
    list.query = try notes.query { Note.folder == "archive" }.ordered(by: Note.title).build()
    check(try await listScreen.waitUntil { $0.hasSuffix("Old receipts, Taxes") }, "the list shows another folder")
    check(list.error == nil && count.error == nil && detail.error == nil, "no errors")
    try store.close()
}

try await scenarios()
if failures > 0 {
    print("\(failures) expectation(s) failed")
    exit(1)
}
print("All live-object scenarios passed")
