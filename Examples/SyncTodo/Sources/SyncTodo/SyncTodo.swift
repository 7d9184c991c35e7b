import Coffer
import CofferSync
import Foundation

// sync-todo STORE --port P add TITLE       adds a to-do, then syncs
// sync-todo STORE --port P done TITLE      marks the to-dos with that title done, then syncs
// sync-todo STORE --port P list            syncs, then prints the list
// sync-todo STORE --port P watch SECONDS   runs the replica, printing each change as it arrives
// sync-todo --port P check                 two replicas in temporary stores, every step
//                                          checked (exit status 1 when one fails)
// The server is PostgreSQL on 127.0.0.1:P, user and database `postgres` (as
// Scripts/local-postgres.sh starts it). Every command installs the server schema first
// (installing is idempotent).

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sync-todo: \(message)\n".utf8))
    exit(1)
}

/// A store and its replica.
struct Replica {
    let store: Store
    let todos: Box<Todo>
    let sync: SyncReplica

    init(directory: String, server: PostgresTransport.Configuration) async throws {
        store = try Store(directory: directory)
        todos = store.box(for: Todo.self)
        let transport = PostgresTransport(configuration: server)
        // Idempotent: creates the server's tables and functions the first time, then does nothing.
        try await transport.install([Todo.self])
        sync = try SyncReplica(store: store, entities: [Todo.self], transport: transport)
    }

    func add(_ title: String) throws {
        var todo = Todo(title: title)
        try todos.put(&todo)
    }

    func markDone(_ title: String) throws -> Int {
        try store.write {
            var marked = 0
            for var todo in try todos.query({ Todo.title == title }).build().find() {
                todo.done = true
                try todos.put(&todo)
                marked += 1
            }
            return marked
        }
    }

    func lines() throws -> [String] {
        try todos.query().ordered(by: Todo.title).build().find().map { "[\($0.done ? "x" : " ")] \($0.title)" }
    }

    func close() async throws {
        await sync.transport.close()
        try store.close()
    }
}

func runCommand(_ command: String, _ rest: [String], on replica: Replica) async throws {
    switch command {
    case "add":
        guard let title = rest.first else { fail("add needs a title") }
        try replica.add(title)
        try await replica.sync.syncNow()
    case "done":
        guard let title = rest.first else { fail("done needs a title") }
        print("marked \(try replica.markDone(title))")
        try await replica.sync.syncNow()
    case "list":
        try await replica.sync.syncNow()
        for line in try replica.lines() { print(line) }
    case "watch":
        let seconds = rest.first.flatMap(Int.init) ?? 30
        let running = Task { await replica.sync.run() }
        let printing = Task {
            for await _ in replica.todos.changes() {
                print("changed: " + (try replica.lines()).joined(separator: ", "))
            }
        }
        try await Task.sleep(for: .seconds(seconds))
        replica.sync.stop()
        await running.value
        printing.cancel()
    default:
        fail("unknown command \(command)")
    }
    let status = replica.sync.currentStatus
    print("synced: \(status.pushed) pushed, \(status.pulled) pulled, \(status.pending) pending"
          + (status.rejectedCount > 0 ? ", \(status.rejectedCount) rejected" : ""))
}

/// The walkthrough with two replicas in one process, each step checked.
func check(_ server: PostgresTransport.Configuration) async throws {
    let base = NSTemporaryDirectory() + "sync-todo-\(ProcessInfo.processInfo.processIdentifier)"
    let laptop = try await Replica(directory: base + "/laptop.coffer", server: server)
    let phone = try await Replica(directory: base + "/phone.coffer", server: server)
    var failures = 0
    func expect(_ condition: Bool, _ what: String) {
        print("  \(condition ? "ok  " : "FAIL") \(what)")
        if !condition { failures += 1 }
    }
    let title = "Buy milk \(UUID().uuidString.prefix(8))"
    try laptop.add(title)
    try await laptop.sync.syncNow()
    try await phone.sync.syncNow()
    expect(try phone.lines().contains("[ ] \(title)"), "a to-do added on the laptop reaches the phone")
    expect(try phone.markDone(title) == 1, "the phone marks it done")
    try await phone.sync.syncNow()
    try await laptop.sync.syncNow()
    expect(try laptop.lines().contains("[x] \(title)"), "the phone's change reaches the laptop")
    try await laptop.close()
    try await phone.close()
    try FileManager.default.removeItem(atPath: base)
    if failures > 0 { fail("\(failures) check(s) failed") }
}

@main
struct SyncTodo {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let index = arguments.firstIndex(of: "--port"), index + 1 < arguments.count,
              let port = Int(arguments[index + 1]) else {
            fail("usage: sync-todo STORE --port P add|done|list|watch ... (or: sync-todo --port P check)")
        }
        arguments.removeSubrange(index...index + 1)
        let server = PostgresTransport.Configuration(host: "127.0.0.1", port: port, username: "postgres", password: nil,
                                                     database: "postgres", tls: .disable)
        do {
            if arguments.first == "check" {
                try await check(server)
            } else {
                guard arguments.count >= 2 else { fail("usage: sync-todo STORE --port P add|done|list|watch ...") }
                let replica = try await Replica(directory: arguments[0], server: server)
                try await runCommand(arguments[1], Array(arguments.dropFirst(2)), on: replica)
                try await replica.close()
            }
        } catch {
            fail("\(error)")
        }
    }
}
