@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The transport's deadlines hold even when postgres-nio never completes a call: a connect
/// whose startup gets no answer, a query on a connection whose peer went away. A deadline
/// that waits for the call to end (a task group does) would hang the replica instead.
@Suite(.timeLimit(.minutes(1))) struct TransportDeadlineTests {
    @Test func aConnectThatGetsNoAnswerEndsAtTheDeadline() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let endpoint = try await PostgresCluster.shared.endpoint()
        let proxy = try FaultProxy(upstreamPort: UInt16(endpoint.port))
        defer { proxy.stop() }
        try await withInstalled(schema) { _ in
            // Accepted, but nothing is forwarded either way: the startup never completes.
            proxy.faults = .init(stallToServer: true, stallToClient: true)
            let transport = try await testTransport(schema: schema.schemaName, port: Int(proxy.port), timeout: .milliseconds(500))
            for _ in 0..<3 {
                // Our deadline or NIO's connect timeout ends it, whichever comes first.
                let failure = await #expect(throws: SyncTransportError.self) { _ = try await transport.lastMutationId(client: UUID()) }
                switch failure {
                case .timedOut?, .unreachable?: break
                default: Issue.record("expected a timeout, got \(String(describing: failure))")
                }
            }
            proxy.faults = .init()
            // Healed: the transport connects again. A loaded machine can miss the short
            // deadline once, so a few attempts are allowed; a transport that never recovers fails.
            #expect(try await answersAfterHealing(transport))
            await transport.close()
        }
    }

    @Test func aCallOnAConnectionWhosePeerWentAwayEnds() async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let endpoint = try await PostgresCluster.shared.endpoint()
        let proxy = try FaultProxy(upstreamPort: UInt16(endpoint.port))
        defer { proxy.stop() }
        try await withInstalled(schema) { _ in
            let transport = try await testTransport(schema: schema.schemaName, port: Int(proxy.port), timeout: .seconds(1))
            for _ in 0..<5 {
                #expect(try await answersAfterHealing(transport))
                proxy.resetAll()
                // Either the transport notices and retries on a new connection, or the call
                // ends at its deadline; it never hangs.
                do {
                    #expect(try await transport.lastMutationId(client: UUID()) == 0)
                } catch let error as SyncTransportError {
                    guard case .timedOut = error else {
                        Issue.record("expected an answer or a timeout, got \(error)")
                        return
                    }
                }
            }
            await transport.close()
        }
    }
}

/// True once a call through `transport` answers (at most 5 attempts; a timeout is retried).
private func answersAfterHealing(_ transport: PostgresTransport) async throws -> Bool {
    for _ in 0..<5 {
        do {
            return try await transport.lastMutationId(client: UUID()) == 0
        } catch SyncTransportError.timedOut {
            continue
        }
    }
    return false
}
