import ArgumentParser
import Coffer
import Foundation

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Every object of an entity (or those matching --selector) as JSON lines, in id order.")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The entity's stored name.")
    var entity: String

    @Option(help: "Only the objects matching this Cloudant Query selector.")
    var selector = "{}"

    @Flag(help: "No progress on standard error.")
    var quiet = false

    func run() throws {
        let store = try openStoreOrFail(directory)
        defer { try? store.close() }
        var progress = Progress(verb: "exported", noun: "\(entity) object", quiet: quiet)
        try failing {
            try store.query(entity: entity, selector: selector) { line in
                print(line)
                progress.advance()
            }
        }
        progress.finish()
    }
}
