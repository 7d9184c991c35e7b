import ArgumentParser
import Coffer
import Foundation

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a store: the data file's structure (without LMDB), then records, indexes and relations.",
        discussion: """
            Exit status 0: intact. 1: damaged (each problem is printed) or unreadable.
            The structural check reads the file with bounds checks before LMDB maps it, so a
            damaged file is reported, never crashes the tool. Run it while no process writes,
            or expect a retry message.
            """)

    @Argument(help: "The store directory.")
    var directory: String

    @Flag(help: "No progress on standard error.")
    var quiet = false

    func run() throws {
        let structure = try failing { try Store.verify(directory: directory) }
        guard structure.isIntact else {
            print(structure)
            throw ExitCode.failure
        }
        let store = try openStoreOrFail(directory)
        var progress = Progress(verb: "checked", noun: "object", quiet: quiet)
        let report = try failing { try store.verify { progress.update(to: $0) } }
        progress.update(to: report.objectsChecked)
        progress.finish()
        try store.close()
        print(report)
        if !report.isIntact { throw ExitCode.failure }
    }
}
