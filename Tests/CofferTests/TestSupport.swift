import Coffer
import Foundation

/// A fresh directory under the system temp directory, removed by `cleanUp()`.
struct TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "coffer-tests/" + UUID().uuidString
    }

    func cleanUp() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

@discardableResult
/// Runs `body` with a new store in a new directory, then closes and deletes it.
func withStore<T>(options: StoreOptions = StoreOptions(durability: .noSync), _ body: (Store) throws -> T) throws -> T {
    let directory = TemporaryDirectory()
    defer { directory.cleanUp() }
    let store = try Store(directory: directory.path, options: options)
    defer { try? store.close() }
    return try body(store)
}

@discardableResult
/// Async variant of `withStore`.
func withStore<T>(options: StoreOptions = StoreOptions(durability: .noSync), _ body: (Store) async throws -> T) async throws -> T {
    let directory = TemporaryDirectory()
    defer { directory.cleanUp() }
    let store = try Store(directory: directory.path, options: options)
    defer { try? store.close() }
    return try await body(store)
}

struct Boom: Error, Equatable {}
