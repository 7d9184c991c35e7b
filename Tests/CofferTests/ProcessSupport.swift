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
