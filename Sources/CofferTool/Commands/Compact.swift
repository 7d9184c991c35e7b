import ArgumentParser
import Coffer
import Foundation

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compacted copy of a store (free pages left out) into a new directory.")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The directory for the copy (created; must not hold a store).")
    var output: String

    func run() throws {
        let store = try openStoreOrFail(directory)
        try failing { try store.backup(to: output) }
        try store.close()
        let before = (try? FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int) ?? 0
        let after = (try? FileManager.default.attributesOfItem(atPath: output + "/data.mdb")[.size] as? Int) ?? 0
        print("Copied \(directory) (\(formatBytes(before))) to \(output) (\(formatBytes(after)))")
    }
}
