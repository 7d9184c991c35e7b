import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs this test binary again as a child process that executes one "child" test, selected
/// by an environment variable the child tests check (without it they return at once).
///
/// ```swift
/// @Test func writerChild() throws {
///     guard ChildProcess.role == "writer", let directory = ChildProcess.directory else { return }
///     // ... commit, then ChildProcess.report("committed \(n)")
/// }
/// let (child, _) = try ChildProcess.start(filter: "writerChild", role: "writer", directory: path)
/// ```
package enum ChildProcess {
    package static let roleVariable = "COFFER_TEST_CHILD"
    package static let directoryVariable = "COFFER_TEST_DIRECTORY"

    /// The role this process plays, if it is a child.
    package static var role: String? { ProcessInfo.processInfo.environment[roleVariable] }
    package static var directory: String? { ProcessInfo.processInfo.environment[directoryVariable] }

    /// Starts the child test `filter` with `role` on `directory`, and `environment` added to
    /// this process's; standard output is a pipe.
    package static func start(filter: String, role: String, directory: String,
                              environment extra: [String: String] = [:]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try selfPath())
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        var environment = ProcessInfo.processInfo.environment
        environment[roleVariable] = role
        environment[directoryVariable] = directory
        environment.merge(extra) { $1 }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }

    package static func selfPath() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// Writes a line to standard output at once (the parent reads it as it comes).
    package static func report(_ line: String) {
        let data = Data((line + "\n").utf8)
        data.withUnsafeBytes { raw in _ = write(STDOUT_FILENO, raw.baseAddress, raw.count) }
    }

    /// Starts the child test `filter` (which prints "committed N" after each commit it makes),
    /// kills it with SIGKILL at a random moment (up to `maximumDelay` microseconds) after its
    /// first line, and returns the numbers it reported committed before it died.
    ///
    /// Runs on a thread of its own: its waits block a thread for as long as the child runs,
    /// and blocking the cooperative pool (one thread per core) would stall every other test's
    /// tasks, servers and deadlines in this process meanwhile.
    package static func killAtRandomMoment(filter: String, role: String, directory: String,
                                           environment: [String: String] = [:], maximumDelay: UInt32 = 40_000,
                                           using random: inout SplitMix64) async throws -> Set<Int> {
        let state = random.state
        let (numbers, after) = try await offPool {
            var generator = SplitMix64(state: state)
            let numbers = try blockingKillAtRandomMoment(filter: filter, role: role, directory: directory, environment: environment,
                                                         maximumDelay: maximumDelay, using: &generator)
            return (numbers, generator.state)
        }
        random = SplitMix64(state: after)
        return numbers
    }

    /// Runs `body` on a new thread and returns what it returns.
    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    private static func blockingKillAtRandomMoment(filter: String, role: String, directory: String,
                                                   environment: [String: String], maximumDelay: UInt32,
                                                   using random: inout SplitMix64) throws -> Set<Int> {
        let (child, pipe) = try start(filter: filter, role: role, directory: directory, environment: environment)
        let lines = LineCollector()
        // Blocking reads on a thread of their own until the child's end closes the pipe, not a
        // readability handler: its dispatch source watches the descriptor with epoll, which
        // keys on the open file (shared with every child spawned meanwhile), and the suite
        // once crashed in libdispatch's event loop while children were being spawned.
        let reading = DispatchGroup()
        reading.enter()
        let output = pipe.fileHandleForReading
        DispatchQueue.global().async {
            while case let data = output.availableData, !data.isEmpty { lines.feed(data) }
            reading.leave()
        }
        // Wait for the child's first commit, then kill it at a random moment.
        let deadline = Date().addingTimeInterval(30)
        while lines.all.isEmpty, child.isRunning, Date() < deadline { usleep(1_000) }
        usleep(UInt32.random(in: 0...maximumDelay, using: &random))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        // The pipe ends with the child; the bound only keeps a stray holder of its write end
        // (a process spawned meanwhile) from stopping the test.
        _ = reading.wait(timeout: .now() + 30)
        return committedNumbers(in: lines.all)
    }

    /// The numbers of the "committed N" lines among `lines`.
    package static func committedNumbers(in lines: [String]) -> Set<Int> {
        var reported = Set<Int>()
        for line in lines where line.hasPrefix("committed ") {
            if let number = Int(line.dropFirst("committed ".count)) { reported.insert(number) }
        }
        return reported
    }

    /// What a child that ran to its end printed, and how it ended.
    package struct Outcome: Sendable {
        /// Every line it wrote to standard output.
        package var lines: [String]
        /// It died of SIGKILL (its own, or the parent's after `timedOut`).
        package var killed: Bool
        /// It was still running at the deadline, and was killed then.
        package var timedOut: Bool
    }

    /// Starts the child test `filter` and waits for it to end by itself (a child that kills
    /// itself at a chosen point), for at most `timeout` seconds, after which it is killed. On a
    /// thread of its own, as ``killAtRandomMoment(filter:role:directory:environment:maximumDelay:using:)``.
    package static func runToEnd(filter: String, role: String, directory: String, environment: [String: String] = [:],
                                 timeout: Double) async throws -> Outcome {
        try await offPool {
            try blockingRunToEnd(filter: filter, role: role, directory: directory, environment: environment, timeout: timeout)
        }
    }

    private static func blockingRunToEnd(filter: String, role: String, directory: String, environment: [String: String],
                                         timeout: Double) throws -> Outcome {
        let (child, pipe) = try start(filter: filter, role: role, directory: directory, environment: environment)
        let lines = LineCollector()
        // One blocking read to the end of the output, on a thread of its own, waited for
        // below: a readability handler could still be feeding the last line (the one a
        // child writes just before it kills itself) when the lines are read.
        let reading = DispatchGroup()
        reading.enter()
        DispatchQueue.global().async {
            lines.feed(pipe.fileHandleForReading.readDataToEndOfFile())
            reading.leave()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning, Date() < deadline { usleep(1_000) }
        let timedOut = child.isRunning
        if timedOut { kill(child.processIdentifier, SIGKILL) }
        child.waitUntilExit()
        reading.wait()
        let killed = child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL
        return Outcome(lines: lines.all, killed: killed, timedOut: timedOut)
    }
}
