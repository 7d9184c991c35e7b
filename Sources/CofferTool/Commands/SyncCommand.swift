import ArgumentParser

/// `coffer sync`: the PostgreSQL side of sync, built from a store's catalog.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Install the PostgreSQL side of sync from a store's catalog, and show the server's sync state.",
        subcommands: [SyncInstall.self, SyncStatus.self]
    )
}
