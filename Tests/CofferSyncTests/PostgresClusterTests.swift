import Foundation
import PostgresNIO
import Testing

/// The private cluster the sync suites share: it starts, answers on loopback as the test
/// role, and has what the sync schema needs (xid8 stamps and snapshots).
@Suite struct PostgresClusterTests {
    @Test func answersAsTheTestRole() async throws {
        let rows = try await withConnection { connection in
            try await connection.query(
                "SELECT current_user, current_database(), inet_server_addr()::text, pg_current_xact_id()::text",
                logger: connection.logger
            ).collect()
        }
        let (user, database, address, txid) = try #require(rows.first).decode((String, String, String, String).self)
        #expect(user == "coffer_test")
        #expect(database == "coffer_test")
        #expect(address == "127.0.0.1/32")
        #expect(UInt64(txid) != nil)
    }

    @Test func isSharedByEveryCaller() async throws {
        let first = try await PostgresCluster.shared.endpoint()
        let second = try await PostgresCluster.shared.endpoint()
        #expect(first.port == second.port)
    }

    @Test func aMissingServerNamesThePackageToInstall() {
        let failures: [PostgresClusterError] = [
            .binariesMissing(searched: ["/usr/lib/postgresql/15/bin"]),
            .startFailed("port in use"),
            .commandFailed("initdb", status: 1, output: "boom"),
        ]
        for failure in failures {
            #expect(failure.description.contains("postgresql-15"))
        }
    }
}
