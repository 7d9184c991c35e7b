@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A replica behind the fault proxy while another writes directly: requests held, replies
/// held, connections reset and chunks delayed, in the middle of a push and of a pull, with the
/// proxy in front of PostgreSQL or of a gateway. Once the network heals, every queue drains,
/// the replicas hold the server's rows and the winning writes, and nothing is there twice.
@Suite(.timeLimit(.minutes(3))) struct ReplicaFaultTests {
    enum Fault: CaseIterable {
        case stallToServer, stallToClient, reset, delay
    }

    enum Moment {
        case push, pull
    }

    @Test(arguments: [Moment.push, .pull], TransportMode.allCases)
    func faultsInTheMiddleHealWithoutLossOrDuplicates(at moment: Moment, through mode: TransportMode) async throws {
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            switch mode {
            case .direct:
                let endpoint = try await PostgresCluster.shared.endpoint()
                let proxy = try FaultProxy(upstreamPort: UInt16(endpoint.port))
                defer { proxy.stop() }
                let faulty: (WriteLog) async throws -> ReplicaNode = { log in try await ReplicaNode(index: 0, schema: s, log: log, port: Int(proxy.port), timeout: .milliseconds(700)) }
                try await Self.strike(moment, proxy: proxy, faulty: faulty, connection: connection, schema: s)
            case .gateway:
                try await TestGateway.with(connection, schema: s) { gateway in
                    let proxy = try FaultProxy(upstreamPort: UInt16(gateway.port))
                    defer { proxy.stop() }
                    let token = try await gateway.token(for: "faulty")
                    // Seconds, not the 700 ms of the direct case: with sub-second deadlines every call through
                    // URLSession on Linux timed out here, also with no fault.
                    let faulty: (WriteLog) async throws -> ReplicaNode = { log in
                        try ReplicaNode(index: 0, log: log, transport: GatewayTransport(
                            url: URL(string: "http://127.0.0.1:\(proxy.port)")!, requestTimeout: .seconds(3)) { token })
                    }
                    try await Self.strike(moment, proxy: proxy, faulty: faulty, connection: connection, schema: s)
                }
            }
        }
    }

    /// Each fault in turn at `moment` on the replica `faulty` makes, behind `proxy`, while
    /// another replica syncs directly.
    static func strike(_ moment: Moment, proxy: FaultProxy, faulty makeFaulty: (WriteLog) async throws -> ReplicaNode,
                       connection: PostgresConnection, schema s: String) async throws {
        do {
            let log = WriteLog()
            let faulty = try await makeFaulty(log)
            let direct = try await ReplicaNode(index: 1, schema: s, log: log)
            defer { faulty.temporary.cleanUp(); direct.temporary.cleanUp() }
            let nodes = [faulty, direct]
            var random = SplitMix64(state: moment == .push ? 0xFA17_0001 : 0xFA17_0002)

            for (round, fault) in Fault.allCases.enumerated() {
                // Enough changes for several batches and pages on the side the fault hits.
                let writer = moment == .push ? faulty : direct
                for number in 0..<20 { try writer.create(number: round * 100 + number) }
                try await faulty.writeRandomly(steps: 10, seed: random.next())
                try await direct.writeRandomly(steps: 10, seed: random.next())
                if moment == .pull { try await direct.replica.syncNow() }

                let baseline = proxy.bytesForwarded
                let pass = Task { try await faulty.replica.syncNow() }
                // Strike once the pass is under way: its first bytes went out (a push), or it
                // is pulling.
                _ = try await eventually(attempts: 400, seconds: 10) {
                    moment == .push ? proxy.bytesForwarded.toServer > baseline.toServer
                                    : faulty.replica.currentStatus.phase == .pulling
                }
                switch fault {
                case .stallToServer: proxy.faults = .init(stallToServer: true)
                case .stallToClient: proxy.faults = .init(stallToClient: true)
                case .reset: proxy.resetAll()
                case .delay: proxy.faults = .init(delay: .milliseconds(30))
                }
                // The pass ends either way: done, or failed at its deadline.
                _ = await pass.result
                if fault != .delay {
                    // Still broken: a second attempt fails too, or (delay, reset) gets through.
                    _ = await Task { try await faulty.replica.syncNow() }.result
                }
                proxy.faults = .init()

                let (server, agreed) = try await settle(nodes, connection: connection, schema: s, seconds: 60)
                #expect(agreed, "\(fault) during a \(moment): the replicas did not converge after healing: \(String(describing: faulty.replica.currentStatus.lastError))")
                #expect(server == log.winners(), "\(fault) during a \(moment): the server holds the winning writes")
                for node in nodes {
                    #expect(try node.snapshot() == server)
                    #expect(try node.cards.count() == server.count, "no object twice")
                    #expect(try node.temporary.store.pendingSyncCount() == 0)
                }
            }
            for node in nodes { await node.replica.transport.close() }
        }
    }
}
