@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The fault proxy the network-fault tests put between a replica and PostgreSQL: it forwards,
/// counts, holds a stalled direction without losing bytes, breaks connections with a reset and
/// refuses new ones, against the test cluster.
@Suite(.timeLimit(.minutes(1))) struct FaultProxyTests {
    @Test func forwardsHoldsResetsAndRefuses() async throws {
        let endpoint = try await PostgresCluster.shared.endpoint()
        let proxy = try FaultProxy(upstreamPort: UInt16(endpoint.port))
        defer { proxy.stop() }
        let connection = try await Self.connect(to: proxy, endpoint)
        #expect(try await connection.value("SELECT (41 + 1)::text") == "42")
        let afterFirst = proxy.bytesForwarded
        #expect(afterFirst.toServer > 0 && afterFirst.toClient > 0)

        // A stall toward the server holds the query, losing nothing: it completes once healed.
        proxy.faults = .init(stallToServer: true)
        async let held = connection.value("SELECT 'held'::text")
        try await Task.sleep(for: .milliseconds(200))
        #expect(proxy.bytesForwarded.toServer == afterFirst.toServer, "a stalled direction forwards nothing")
        proxy.faults = .init()
        #expect(try await held == "held")

        // Delayed chunks still arrive whole.
        proxy.faults = .init(delay: .milliseconds(20))
        #expect(try await connection.value("SELECT repeat('x', 100000)")?.count == 100_000)
        proxy.faults = .init()

        // A reset breaks the open connection: the query fails, or never answers (postgres-nio
        // may not notice a peer that went away; the sync transport bounds every call for that
        // reason, and so does this test).
        proxy.resetAll()
        await #expect(throws: (any Error).self) {
            try await SyncDeadline.run(.seconds(3), expired: { CancellationError() }) { try await connection.value("SELECT 1::text") }
        }
        PostgresTransport.abandon(connection)

        // Refused connections fail to connect; healed, a new connection works.
        proxy.faults = .init(refuseConnections: true)
        await #expect(throws: (any Error).self) { try await Self.connect(to: proxy, endpoint).close() }
        proxy.faults = .init()
        let again = try await Self.connect(to: proxy, endpoint)
        #expect(try await again.value("SELECT 'again'::text") == "again")
        try await again.close()
    }

    private static func connect(to proxy: FaultProxy, _ endpoint: PostgresCluster.Endpoint) async throws -> PostgresConnection {
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: Int(proxy.port), username: endpoint.user, password: nil,
            database: endpoint.database, tls: .disable
        )
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "coffer.sync.tests.proxy"))
    }
}
