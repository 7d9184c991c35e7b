@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

/// kill -9 of a process writing synced objects (and taking batches, as a pusher does) at
/// random moments: after each restart, every reported commit is in the outbox exactly as the
/// rules say, nothing is there twice, and nothing is there that was not committed.
@Suite(.serialized) struct SyncCrashTests {
    /// The child: transaction n inserts task "t<n>" and raises the priority of task n-2;
    /// every third commit it takes a batch of pending entries (never acknowledging), so that
    /// later changes start new entries. Reports each commit after it returns.
    @Test func syncCrashChildWriter() throws {
        guard ChildProcess.role == "sync-crash-writer", let directory = ChildProcess.directory else { return }
        // A small map, so that some transactions grow it and are rerun while being killed.
        let store = try Store(directory: directory, options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync))
        let tasks = store.box(for: Synced.Task.self)
        var n = try tasks.count()
        while true {
            n += 1
            let number = n
            try store.write {
                try tasks.put(Synced.Task(title: "t\(number)", note: String(repeating: "x", count: 100)))
                if number > 2, var older = try tasks.get(Id(number - 2)) {
                    older.priority += 1
                    try tasks.put(&older)
                }
            }
            if number.isMultiple(of: 3) { _ = try store.takeSyncChanges(limit: 4) }
            ChildProcess.report("committed \(number)")
        }
    }

    static func check(directory: String, reported: Set<Int>) throws {
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        let tasks = store.box(for: Synced.Task.self)
        let all = try tasks.all()
        let priority = try SyncProbe.fieldIds(Synced.Task.self, in: store)["priority"]!
        let snapshot = try SyncProbe.snapshot(store)
        var bySyncId: [UUID: [(mid: UInt64, entry: OutboxEntry)]] = [:]
        for item in snapshot.outbox { bySyncId[item.entry.syncId, default: []].append(item) }
        for number in reported { #expect(all.contains { $0.title == "t\(number)" }, "commit \(number) was reported but is missing") }
        var syncIds = Set<UUID>()
        for task in all {
            let syncId = try #require(try tasks.syncId(of: task.id), "\(task.title) has no sync id")
            #expect(try tasks.id(forSyncId: syncId) == task.id)
            syncIds.insert(syncId)
            let entries = bySyncId[syncId] ?? []
            // Nothing was acknowledged: the creation is there, exactly once.
            #expect(entries.filter(\.entry.isCreation).count == 1, "\(task.title): \(entries.map(\.mid))")
            #expect(entries.first?.entry.isCreation == true)
            // At most one entry no pusher has taken besides a whole creation (an earlier
            // process's: changes after it get an entry of their own), and the object names
            // the newest: its changes coalesce there.
            let untaken = entries.filter { $0.mid > snapshot.state.sendFloor }
            #expect(untaken.filter { !$0.entry.isWhole }.count <= 1, "\(task.title) has \(untaken.count) untaken entries")
            if let open = untaken.last { #expect(snapshot.pending[syncId] == open.mid) }
            // Every committed raise of the priority is in an entry: one listing it, or the
            // whole creation (which stands for every field a pusher reads).
            if task.priority > 0 {
                #expect(entries.contains { $0.entry.isWhole || $0.entry.fields.contains { $0.id == priority } }, "\(task.title)'s update is lost")
            }
        }
        #expect(Set(bySyncId.keys) == syncIds, "entries of objects that were never committed")
        #expect(snapshot.outbox.map(\.mid).allSatisfy { $0 <= snapshot.state.lastMid })
        #expect(snapshot.state.sendFloor <= snapshot.state.lastMid)
        #expect(try store.pendingSyncCount() == snapshot.outbox.count)
        let report = try store.verify()
        #expect(report.isIntact, "\(report)")
    }

    @Test func killedWriterLosesNoSyncedChangeAndDuplicatesNone() async throws {
        guard ChildProcess.role == nil else { return }
        let runs = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_RUNS"] ?? "") ?? 16
        var random = SplitMix64(state: 31)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var reported = Set<Int>()
        for _ in 0..<runs {
            reported.formUnion(try await ChildProcess.killAtRandomMoment(filter: "syncCrashChildWriter", role: "sync-crash-writer", directory: directory.path,
                                                                   using: &random))
            try Self.check(directory: directory.path, reported: reported)
        }
        #expect(!reported.isEmpty)
    }
}
