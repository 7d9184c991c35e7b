@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The server stopped as a crash would (`pg_ctl stop -m immediate`) while replicas push, then
/// started again on the same data directory: the replicas keep running through it, every
/// queue drains, each committed write is on the server once, and all replicas hold the
/// server's rows. On a private cluster (the shared one must not go away under other suites),
/// with synchronous commits: with them off, the server may lose a commit it reported, which
/// the replica has acknowledged and will not send again.
@Suite(.timeLimit(.minutes(3))) struct ServerCrashTests {
    @Test func replicasRideOutAServerCrashMidPush() async throws {
        let cluster = PostgresCluster(synchronousCommit: true)
        do {
            try await crashMidPush(cluster)
            try await cluster.destroy()
        } catch {
            try await cluster.destroy()
            throw error
        }
    }

    func crashMidPush(_ cluster: PostgresCluster) async throws {
        let endpoint = try await cluster.endpoint()
        let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        let installer = try await cluster.connect()
        try await schema.install(on: installer, logger: installer.logger)
        try await installer.close()

        // The first push once every replica has written a few cards stops the server, from
        // another task, while that push is on its way.
        let stopRequests = AsyncStream<Void>.makeStream()
        let armed = LockedState(false)
        var nodes: [(store: TemporaryStore, replica: SyncReplica)] = []
        defer { for node in nodes { node.store.cleanUp() } }
        for index in 0..<3 {
            let store = try TemporaryStore()
            let direct = PostgresTransport(configuration: .init(
                host: "127.0.0.1", port: endpoint.port, username: endpoint.user, password: nil, database: endpoint.database,
                tls: .disable, schema: s, requestTimeout: .seconds(3), connectTimeout: .seconds(3),
                listenRetry: (.milliseconds(50), .milliseconds(500))))
            let transport = InterceptingTransport(direct) { event in
                guard index == 0, case .beforePush = event else { return }
                if armed.withLock({ armed in defer { armed = false }; return armed }) { stopRequests.continuation.yield() }
            }
            let replica = try SyncReplica(store: store.store, entities: [Replicated.Card.self], transport: transport,
                                          options: .init(pushBatchSize: 5, pullPageSize: 7, poll: (.milliseconds(20), .milliseconds(200)),
                                                         retry: (.milliseconds(20), .milliseconds(200))))
            nodes.append((store, replica))
        }
        let runs = nodes.map { node in Task { await node.replica.run() } }
        do {
            try await writeThroughACrash(cluster, nodes: nodes, armed: armed, stopRequests: stopRequests, schema: s)
        } catch {
            for node in nodes { node.replica.stop() }
            for run in runs { await run.value }
            throw error
        }
        for node in nodes { node.replica.stop() }
        for run in runs { await run.value }
        for node in nodes { await node.replica.transport.close() }
    }

    /// Three writers, one card every 10 ms each; the stop comes from replica 0's first push after
    /// its 16th card, whenever that push runs. Then checks that nothing is lost or doubled.
    func writeThroughACrash(_ cluster: PostgresCluster, nodes: [(store: TemporaryStore, replica: SyncReplica)], armed: LockedState<Bool>,
                            stopRequests: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation),
                            schema s: String) async throws {
        let committed = LockedState<[String]>([])
        let crashes = Task {
            for await _ in stopRequests.stream {
                try await cluster.stopImmediately()
                try await Task.sleep(for: .milliseconds(300))
                try await cluster.restart()
                return true
            }
            return false
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, node) in nodes.enumerated() {
                group.addTask {
                    let cards = node.store.store.box(for: Replicated.Card.self)
                    for number in 0..<60 {
                        let title = "r\(index)-\(number)"
                        try cards.put(Replicated.Card(title: title, count: number))
                        committed.withLock { $0.append(title) }
                        if index == 0 && number == 15 { armed.withLock { $0 = true } }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
            }
            try await group.waitForAll()
        }
        // Replica 0 still has cards 16 to 59 to push, so a push after the arming comes, however
        // late a loaded machine runs it: wait for it rather than end the stream when the
        // writers finish (which could come first). The deadline only ends a wedged run.
        let deadline = Task {
            do { try await Task.sleep(for: .seconds(90)) } catch { return }  // cancelled: the crash came
            stopRequests.continuation.finish()
        }
        let crashed = try await crashes.value
        deadline.cancel()
        #expect(crashed, "the server was not stopped mid-push within 90 seconds")

        // Every queue drains and every replica reaches the server's rows.
        let connection = try await cluster.connect()
        var serverTitles: [String] = []
        let settled = try await eventually(attempts: 600, seconds: 60) {
            serverTitles = try await connection.rows("SELECT title FROM \(s).\"Card\"").compactMap { $0.first ?? nil }
            for node in nodes {
                guard try node.store.store.pendingSyncCount() == 0,
                      try Set(node.store.store.box(for: Replicated.Card.self).all().map(\.title)) == Set(serverTitles)
                else { return false }
            }
            return true
        }
        try await connection.close()
        #expect(settled, "the replicas did not drain and converge after the server came back")
        #expect(serverTitles.count == Set(serverTitles).count, "a write is on the server twice")
        #expect(Set(serverTitles) == Set(committed.withLock { $0 }), "a committed write is lost")
        for (index, node) in nodes.enumerated() {
            let titles = try node.store.store.box(for: Replicated.Card.self).all().map(\.title)
            #expect(titles.count == Set(titles).count, "replica \(index) holds an object twice")
            #expect(Set(titles) == Set(serverTitles), "replica \(index) differs from the server")
            #expect(try node.store.store.verify().isIntact)
        }
    }
}
