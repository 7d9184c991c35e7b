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

    /// Starts the child test `filter` (which prints "committed N" after each commit it makes),
    /// kills it with SIGKILL at a random moment after its first line, and returns the numbers
    /// it reported committed before it died.
    static func killAtRandomMoment(filter: String, role: String, directory: String,
                                   using random: inout SplitMix64) throws -> Set<Int> {
        let (child, pipe) = try start(filter: filter, role: role, directory: directory)
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
        var reported = Set<Int>()
        for line in lines.all where line.hasPrefix("committed ") {
            if let number = Int(line.dropFirst("committed ".count)) { reported.insert(number) }
        }
        return reported
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
