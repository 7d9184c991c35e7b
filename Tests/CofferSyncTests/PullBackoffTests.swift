@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// An entity whose pull keeps failing backs off on its own in `run()`: the passes before its
/// retry time leave it out (no round trip) while the other entities pull on every pass; each
/// failure in a row doubles the wait; a success resets it. The backoff reads a clock the
/// test moves, so nothing here depends on how fast the machine is: passes are counted.
@Suite(.timeLimit(.minutes(2))) struct PullBackoffTests {
    /// A moved clock: now is the real start plus what the test added.
    final class MovedClock: Sendable {
        let start = ContinuousClock.now
        let added = LockedState(Duration.zero)

        func now() -> ContinuousClock.Instant { start + added.withLock { $0 } }
        func advance(by duration: Duration) { added.withLock { $0 += duration } }
    }

    @Test func aFailingEntityBacksOffAloneAndASuccessResetsIt() async throws {
        typealias Ledger = PullFailureModels.Ledger
        typealias Badge = PullFailureModels.Badge
        try await PullFailureModels.withFixture { fixture in
            let (temporary, scripted) = (fixture.temporary, ScriptedTransport(fixture.transport))
            let (ledgerTable, badgeTable) = (fixture.ledgerTable, fixture.badgeTable)
            // The entity's retries an hour apart at first (two at most): a real clock never
            // reaches them in this test, the moved one does when told. Passes come every few ms.
            let replica = try SyncReplica(store: temporary.store, entities: [Ledger.self, Badge.self], transport: scripted,
                                          options: .init(poll: (.milliseconds(5), .milliseconds(10)),
                                                         retry: (.milliseconds(5), .milliseconds(10)),
                                                         entityRetry: (.seconds(3600), .seconds(7200))))
            let clock = MovedClock()
            replica.state.withLock { $0.clock = { clock.now() } }
            // Every ledger page says there is more without moving its cursor: an error.
            let failing = LockedState(true)
            scripted.script.withLock { script in
                script.rewrite = { entity, cursor, page in
                    guard entity == ledgerTable, failing.withLock({ $0 }) else { return page }
                    return Data(#"{"changes": [], "cursor": "\#(cursor)", "more": true}"#.utf8)
                }
            }
            func pulls(_ entity: String) -> Int { scripted.script.withLock { $0.pulls.filter { $0.entity == entity }.count } }
            /// Waits until the badge was pulled `passes` more times (each pass pulls it once).
            func passes(_ passes: Int) async throws -> Bool {
                let target = pulls(badgeTable) + passes
                return try await eventually(attempts: 600, seconds: 60) { pulls(badgeTable) >= target }
            }

            let running = Task { await replica.run() }
            #expect(try await passes(10))
            #expect(pulls(ledgerTable) == 1, "the failing entity was tried once, then left out while it backs off")
            let first = try #require(replica.currentStatus.pullFailures.first)
            #expect(first.entity == ledgerTable && first.attempts == 1)
            #expect(first.retryAt.timeIntervalSinceNow > 1000, "status says when it is tried again: \(first.retryAt)")
            #expect(replica.currentStatus.lastError != nil, "it is still failing")

            // Its time comes: tried once more, then a longer wait.
            clock.advance(by: .seconds(3601))
            #expect(try await passes(10))
            #expect(pulls(ledgerTable) == 2)
            let second = try #require(replica.currentStatus.pullFailures.first)
            #expect(second.attempts == 2 && second.retryAt > first.retryAt)
            // (The second wait is at least half of twice the first: 3600 s.)
            clock.advance(by: .seconds(3599))
            #expect(try await passes(10))
            #expect(pulls(ledgerTable) == 2, "the second wait is longer than the first")

            // Fixed: the next attempt succeeds and the backoff is forgotten, so a new failure
            // starts from the first wait, tried at once.
            failing.withLock { $0 = false }
            clock.advance(by: .seconds(7201))
            #expect(try await eventually(attempts: 600, seconds: 60) { replica.currentStatus.pullFailures.isEmpty })
            let afterSuccess = pulls(ledgerTable)
            #expect(try await passes(3))
            #expect(pulls(ledgerTable) > afterSuccess, "an entity in step is pulled by every pass")
            failing.withLock { $0 = true }
            #expect(try await eventually(attempts: 600, seconds: 60) { replica.currentStatus.pullFailures.first?.attempts == 1 })
            let again = pulls(ledgerTable)
            #expect(try await passes(10))
            #expect(pulls(ledgerTable) == again, "backing off again after the first new failure")
            replica.stop()
            await running.value

            // An explicit pass tries every entity at once.
            await #expect(throws: SyncTransportError.self) { try await replica.syncNow() }
            #expect(pulls(ledgerTable) == again + 1)
            await scripted.close()
        }
    }
}
