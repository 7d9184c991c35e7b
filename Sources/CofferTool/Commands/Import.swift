import ArgumentParser
import Coffer
import Foundation

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store JSON lines (as `coffer export` writes them) in an entity, in one transaction.",
        discussion: """
            Reads standard input (or --input). Each line is one object, checked against the
            store's catalog: a bad line stops the import with its line number and nothing is
            stored. A line with an "id" replaces that object; without one, it is inserted.
            Indexes, unique constraints, full-text indexes and relations are kept as the app's
            puts keep them. Works while an app has the store open: the import waits for the
            app's write lock and commits between its writes.

            Into a new store, give the entity's schema with --schema-from (a store that has it,
            such as the one exported from).
            """)

    @Argument(help: "The store directory (created when it does not exist).")
    var directory: String

    @Argument(help: "The entity's stored name.")
    var entity: String

    @Option(help: "Read this file instead of standard input.")
    var input: String?

    @Option(name: .customLong("upsert-by"), help: "Replace the stored object with the same value of this indexed property (ids in the lines are ignored).")
    var upsertBy: String?

    @Option(name: .customLong("schema-from"), help: "Copy the entity's schema from this store first (when the target store does not have the entity).")
    var schemaFrom: String?

    @Flag(help: "No progress on standard error.")
    var quiet = false

    func run() throws {
        let data: Data = try failing {
            if let input { return try Data(contentsOf: URL(fileURLWithPath: input)) }
            return FileHandle.standardInput.readDataToEndOfFile()
        }
        let store = try failing { try Store(directory: directory, options: StoreOptions(verifyOnOpen: true)) }
        defer { try? store.close() }
        if let schemaFrom {
            let source = try openStoreOrFail(schemaFrom)
            defer { try? source.close() }
            try failing { try store.copySchema(of: entity, from: source) }
        }
        var progress = Progress(verb: "imported", noun: "line", quiet: quiet)
        let summary = try failing {
            try store.importObjects(entity: entity, jsonLines: data, upsertBy: upsertBy) { done, total in
                progress.total = total
                progress.update(to: done)
            }
        }
        progress.finish()
        print("Imported \(summary.inserted + summary.updated) \(entity) objects into \(directory): \(summary.inserted) new, \(summary.updated) updated")
    }
}
