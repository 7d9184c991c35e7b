@testable import Coffer
import Foundation
import Testing

@Suite struct ConcurrencySoakTests {
    /// Writers (threads and tasks) move balance between accounts and add notes that make the
    /// map grow; readers (threads and tasks) check in every snapshot that the total is
    /// unchanged, that every account is found through its unique index and that the notes
    /// counted through the table and through a query agree. `COFFER_SOAK_SECONDS` sets the
    /// duration (Scripts/soak.sh runs it for minutes).
    @Test func readersAndWritersKeepInvariants() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["COFFER_SOAK_SECONDS"] ?? "") ?? 1.5
        try await withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) async throws in
            let accounts = store.box(for: Account.self)
            let notes = store.box(for: Note.self)
            try accounts.put((0..<20).map { Account(handle: "@\($0)", balance: 100) })
            let deadline = Date().addingTimeInterval(seconds)
            let failures = Counter()
            let checks = Counter()
            @Sendable func check() throws {
                try store.read {
                    let all = try accounts.all()
                    if all.count != 20 || all.reduce(0, { $0 + $1.balance }) != 2_000 { failures.add() }
                    let handle = "@\(Int.random(in: 0..<20))"
                    let holders = try accounts.query({ Account.handle == handle }).build().count()
                    if holders != 1 { failures.add() }
                    let counted = try notes.query({ Note.rank >= 0 }).build().count()
                    if try notes.count() != counted { failures.add() }
                }
                checks.add()
            }
            @Sendable func transfer(_ seed: Int) throws {
                try store.write {
                    let from = Id.random(in: 1...20), to = Id.random(in: 1...20)
                    guard var a = try accounts.get(from), var b = try accounts.get(to), from != to else { return }
                    a.balance -= 7
                    b.balance += 7
                    try accounts.put(&a)
                    try accounts.put(&b)
                    if seed % 3 == 0 { try notes.put(Note(title: "n", body: String(repeating: "g", count: 2_000), rank: seed)) }
                }
            }
            let threads = (0..<4).map { number in
                Thread {
                    var seed = number
                    while Date() < deadline {
                        seed += 4
                        do { if number < 2 { try check() } else { try transfer(seed) } } catch { failures.add() }
                    }
                }
            }
            threads.forEach { $0.start() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<4 {
                    group.addTask {
                        var seed = number
                        while Date() < deadline {
                            seed += 4
                            if number % 2 == 0 {
                                try await store.read { try check() }
                            } else {
                                let current = seed
                                try await store.write { try transfer(current) }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            while threads.contains(where: { $0.isExecuting }) { try await Task.sleep(nanoseconds: 10_000_000) }
            #expect(failures.value == 0)
            #expect(checks.value > 0)
            #expect(try accounts.all().reduce(0, { $0 + $1.balance }) == 2_000)
            #expect(try IndexProbe.isConsistent(store, Account.self))
        }
    }
}
