@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A store in a fresh temporary directory, closed and removed by `cleanUp()`.
final class TemporaryStore: Sendable {
    let directory: String
    let store: Store

    init() throws {
        directory = NSTemporaryDirectory() + "coffer-sync-tests/" + UUID().uuidString
        store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
    }

    func cleanUp() {
        do { try store.close() } catch { Issue.record("closing the store failed: \(error)") }
        do { try FileManager.default.removeItem(atPath: directory) } catch { Issue.record("removing \(directory) failed: \(error)") }
    }
}

/// A transport to the test cluster (or to `port`, a fault proxy in front of it) for `schema`,
/// as the test role or as `user` (a login role a test made), with short deadlines so that a
/// stalled call fails within the test's bounds.
func testTransport(schema: String, port: Int? = nil, user: String? = nil, timeout: Duration = .seconds(3)) async throws -> PostgresTransport {
    let endpoint = try await PostgresCluster.shared.endpoint()
    return PostgresTransport(configuration: .init(
        host: "127.0.0.1", port: port ?? endpoint.port, username: user ?? endpoint.user, password: nil,
        database: endpoint.database, tls: .disable, schema: schema, requestTimeout: timeout, connectTimeout: timeout,
        listenRetry: (.milliseconds(50), .milliseconds(500))))
}

/// Runs `body` until it does not fail with a transient transport error, for at most
/// `seconds`, as a replica would retry a call the network broke; the last failure is thrown.
func retryingTransient<T>(seconds: Double = 30, _ body: () async throws -> T) async throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        do {
            return try await body()
        } catch let error as SyncTransportError where error.isTransient && Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// Retries `body` until it returns true, at most `attempts` times and for at most `seconds`.
func eventually(attempts: Int = 200, seconds: Double = 30, _ body: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    for _ in 0..<attempts {
        if try await body() { return true }
        guard Date() < deadline else { return false }
        try await Task.sleep(for: .milliseconds(50))
    }
    return false
}
