// CofferSync's articles: recording changes runs here; the examples that talk to a server
// are compiled, not run (Examples/SyncTodo and the sync tests run them against PostgreSQL).
// Only PulledPage.swift imports the store's sync hooks (@_spi(CofferSync)), as its article does.
import Coffer
import CofferSync
import Foundation
import PostgresNIO

@Sync
struct Person: Entity {
    var id: Id = 0
    var name: String
}

@Sync
struct Order: Entity {
    var id: Id = 0
    var total: Double
    var customer: ToOne<Person> = nil
}

@Sync
struct Post: Entity {
    var id: Id = 0
    @Index var room: String
    var text: String
}

/// Stands for the app's sign-in service, which hands out the tokens the gateway checks.
struct SignIn: Sendable {
    func currentToken() async throws -> String { "token" }
}

/// Replicating: the changes the server refused, shown and cleared.
func showRejections(store: Store) throws {
    let rejections = try store.syncRejections()        // SyncRejectedChange, in mid order
    for rejection in rejections {
        print(rejection.kind, rejection.entity, rejection.syncId, rejection.reason, rejection.values)
    }
    try store.clearSyncRejections(through: rejections.last?.mid ?? 0)   // the ones shown
}

/// The Server Side: installing.
func installServerSide(transport: PostgresTransport, connection: PostgresConnection, logger: Logger) async throws {
    try await transport.install([Person.self, Order.self])          // through a PostgresTransport, or:
    let schema = try SyncSchema([Person.self, Order.self])          // schema "coffer" by default
    try await schema.install(on: connection, logger: logger)        // on a postgres-nio connection
    print(schema.installSQL)                                        // or run this text in psql
    // SELECT coffer.coffer_push('<client uuid>', '[{"mid": 1, "entity": "Person", ...}]');
    // SELECT coffer.coffer_pull('Person', '0', 1000);
}

/// Replicating: a replica over a direct connection.
func replicate(store: Store) async throws {
    let transport = PostgresTransport(configuration: .init(
        host: "127.0.0.1", port: 5432, username: "app", password: nil, database: "app", tls: .disable))
    let replica = try SyncReplica(store: store, entities: [Todo.self], transport: transport)
    try await replica.syncNow()                    // one pass: push the outbox, pull to the horizon
    let syncing = Task { await replica.run() }     // or keep syncing until stopped
    let progress = Task { for await status in replica.status { print(status.phase, status.pending, status.rejections) } }
    // ... and when the app stops syncing:
    replica.stop()
    await syncing.value
    progress.cancel()
}

/// Sharing and Scopes: a scope on the server, a subscription in the app.
func shareByRoom(replica: SyncReplica, connection: PostgresConnection, logger: Logger) async throws {
    // Server side, installed with the tables (or in SQL, below):
    let byRoom = SyncScope(Post.self, name: "room", where: "r.room = scope.parameters ->> 'room'",
                           watching: ["room"],
                           wake: .init(row: "r.room", parameters: "scope.parameters ->> 'room'"))
    try await SyncSchema([Post.self], scopes: [byRoom, .wholeTable(Post.self, tables: ["public.members"])])
        .install(on: connection, logger: logger)

    // App side:
    try await replica.subscribe(SyncSubscription(Post.self, scope: "room", parameters: ["room": "general"]))
    try await replica.unsubscribe(SyncSubscription(Post.self, scope: "room", parameters: ["room": "general"]))
    let subscribed = try replica.subscriptions()   // [Post/room{"room":"general"}, ...]
    _ = subscribed
}

/// The Gateway: a replica of a public app.
func replicateThroughTheGateway(store: Store, auth: SignIn) throws {
    let transport = GatewayTransport(url: URL(string: "https://sync.example.com")!) { try await auth.currentToken() }
    let replica = try SyncReplica(store: store, entities: [Todo.self], transport: transport)
    _ = replica
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-articles-\(getpid())")
let store = try Store(directory: directory.path)

@Sync
struct Todo: Entity {
    var id: Id = 0
    var title: String
    var done = false
}

let todos = store.box(for: Todo.self)
let id = try todos.put(Todo(title: "Write"))
let global = try todos.syncId(of: id)          // a UUIDv7, the object's id on every replica
let local = try global.flatMap { try todos.id(forSyncId: $0) }   // == id
let pending = try store.pendingSyncCount()     // 1: the creation waits to be pushed

try showRejections(store: store)
try store.close()
try FileManager.default.removeItem(at: directory)
guard global != nil, local == id, pending == 1 else {
    FileHandle.standardError.write(Data("sync-articles: the outbox did not record the creation\n".utf8))
    exit(1)
}
print("sync-articles: all checks passed")
