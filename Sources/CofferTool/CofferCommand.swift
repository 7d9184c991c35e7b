import ArgumentParser
import Coffer
import Foundation

/// `coffer`: inspect, query, export, import, verify and compact any Coffer store from its
/// schema catalog, without the app's code, and install the PostgreSQL side of sync. Every
/// subcommand but `import` opens stores read-only and never changes them.
@main
struct CofferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Inspect, query, export and import Coffer stores, verify them and copy them compacted.",
        subcommands: [Info.self, Dump.self, Query.self, Sql.self, Export.self, Import.self, Check.self, Stat.self, Compact.self, SyncCommand.self]
    )
}
