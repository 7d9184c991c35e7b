import Foundation

/// Collects the lines a child writes, from a reading thread.
///
/// ```swift
/// let lines = LineCollector()
/// while case let data = pipe.fileHandleForReading.availableData, !data.isEmpty { lines.feed(data) }
/// ```
package final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private var lines: [String] = []

    package init() {}

    package func feed(_ data: Data) {
        lock.lock(); defer { lock.unlock() }
        buffer.append(data)
        while let newline = buffer.firstIndex(of: 10) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
    }

    package var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
