import ArgumentParser
import Coffer
import Foundation

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print objects of one entity, one JSON object per line.")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The entity name, as `coffer info` shows it.")
    var entity: String

    @Option(help: "Print at most this many objects.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    func run() throws {
        let store = try openStoreOrFail(directory)
        try failing { try store.dump(entity: entity, limit: limit) { print($0) } }
        try store.close()
    }
}
