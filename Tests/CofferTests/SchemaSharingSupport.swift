@testable import Coffer
import CLMDB
import Foundation
import Testing

extension ChildProcess {
    /// In a child playing `role`, the store it was given; nil in any other process.
    static func openStore(role: String) throws -> Store? {
        guard self.role == role, let directory else { return nil }
        return try Store(directory: directory, options: StoreOptions(durability: .noSync))
    }

    /// In the parent: a new store in a new directory, for children to share.
    static func parentStore() throws -> (TemporaryDirectory, Store) {
        let directory = TemporaryDirectory()
        do {
            return (directory, try Store(directory: directory.path, options: StoreOptions(durability: .noSync)))
        } catch {
            directory.cleanUp()
            throw error
        }
    }

    /// Runs the child test `filter` with `role` on `directory` to its end; its exit status.
    static func run(filter: String, role: String, directory: String) throws -> Int32 {
        let (child, _) = try start(filter: filter, role: role, directory: directory)
        child.waitUntilExit()
        return child.terminationStatus
    }
}
