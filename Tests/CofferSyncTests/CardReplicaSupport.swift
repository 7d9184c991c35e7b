@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// A replica of `Replicated.Card`s under test, synced and compared with the server's rows.
protocol CardReplica: Sendable {
    var replica: SyncReplica { get }
}

extension CardReplica {
    var cards: Box<Replicated.Card> { replica.store.box(for: Replicated.Card.self) }

    /// A pass, where a transient failure (concurrent pushes of the same rows can deadlock on
    /// the server, which aborts one) is left to the next pass, as `run()` would.
    func syncTolerantly() async throws {
        do {
            try await replica.syncNow()
        } catch let error as SyncTransportError where error.isTransient {
            return
        }
    }

    /// The store's cards by sync id.
    func snapshot() throws -> [UUID: CardState] {
        var rows: [UUID: CardState] = [:]
        for card in try cards.all() {
            let object = try #require(try cards.syncId(of: card.id))
            rows[object] = CardState(title: card.title, count: card.count, done: card.done, note: card.note)
        }
        return rows
    }
}

/// Syncs every replica in rounds until each holds the server's rows with nothing pending
/// (bounded in rounds and time: another test's open transaction holds the pull horizon back
/// meanwhile). Returns the server's rows at the last look.
func settle(_ nodes: [any CardReplica], connection: PostgresConnection, schema: String, attempts: Int = 100, seconds: Double)
    async throws -> (server: [UUID: CardState], agreed: Bool)
{
    var server: [UUID: CardState] = [:]
    let agreed = try await eventually(attempts: attempts, seconds: seconds) {
        for node in nodes { try await node.syncTolerantly() }
        server = try await CardState.serverRows(connection, schema: schema)
        for node in nodes {
            if try node.snapshot() != server || node.replica.store.pendingSyncCount() != 0 { return false }
        }
        return true
    }
    return (server, agreed)
}

/// Installs a fresh schema of cards, makes `count` replicas of it logging their writes to one
/// log, runs `body` with them, then closes their transports and removes their stores.
func withCardReplicas(_ count: Int, _ body: (_ connection: PostgresConnection, _ schema: String, _ log: WriteLog, _ nodes: [ReplicaNode]) async throws -> Void)
    async throws
{
    let schema = try SyncSchema([Replicated.Card.self], schema: uniqueSchemaName())
    try await withInstalled(schema) { connection in
        let log = WriteLog()
        var nodes: [ReplicaNode] = []
        defer { for node in nodes { node.temporary.cleanUp() } }
        for index in 0..<count {
            nodes.append(try await ReplicaNode(index: index, schema: schema.schemaName, log: log))
        }
        do {
            try await body(connection, schema.schemaName, log, nodes)
        } catch {
            for node in nodes { await node.replica.transport.close() }
            throw error
        }
        for node in nodes { await node.replica.transport.close() }
    }
}
