import ArgumentParser
import Coffer
import Foundation

struct Stat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "LMDB statistics: pages and depth per database, free pages, reader slots.")

    @Argument(help: "The store directory.")
    var directory: String

    func run() throws {
        let store = try openStoreOrFail(directory)
        let statistics = try failing { try store.statistics() }
        try store.close()
        let page = statistics.pageSize
        print("Store \(directory)")
        print("  page size \(page) B, map \(formatBytes(statistics.mapSize)), \(statistics.pagesUsed) pages used (\(formatBytes(statistics.pagesUsed * page)))")
        print("  free pages \(statistics.freePages) (\(formatBytes(statistics.freePages * page)); `coffer compact` leaves them out)")
        print("  reader slots \(statistics.readersUsed) used of \(statistics.maximumReaders)")
        let width = max(8, statistics.databases.map(\.name.count).max() ?? 0)
        print("\n  " + "database".padding(toLength: width, withPad: " ", startingAt: 0) + "    entries  depth  branch    leaf  overflow")
        for database in statistics.databases {
            let columns = [(database.entries, 11), (database.depth, 7), (database.branchPages, 8), (database.leafPages, 8), (database.overflowPages, 10)]
            print("  " + database.name.padding(toLength: width, withPad: " ", startingAt: 0)
                  + columns.map { value, size in String(repeating: " ", count: max(0, size - String(value).count)) + String(value) }.joined())
        }
    }
}
