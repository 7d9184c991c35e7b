@_spi(CofferSync) @testable import Coffer
import Foundation
import Testing

@Suite struct SyncClockTests {
    @Test func ticksFollowTimeAndNeverGoBack() throws {
        let base = HybridClock.value(milliseconds: 5_000)
        #expect(try HybridClock.tick(after: 0, now: 5_000) == base)
        #expect(try HybridClock.tick(after: base, now: 5_000) == base + 1)
        #expect(try HybridClock.tick(after: base + 1, now: 4_000) == base + 2, "a clock gone backwards")
        #expect(try HybridClock.tick(after: base + 2, now: 6_000) == HybridClock.value(milliseconds: 6_000))
        // The counter's overflow carries into the milliseconds.
        let full = base | 0xFFFF
        #expect(try HybridClock.tick(after: full, now: 5_000) == HybridClock.value(milliseconds: 5_001))
        #expect(try HybridClock.receive(full, after: base, now: 1) == HybridClock.value(milliseconds: 5_001))
        #expect(try HybridClock.receive(base, after: full, now: 1) == HybridClock.value(milliseconds: 5_001))
        // A physical time past the 48-bit range is clamped; the last value is an error.
        #expect(HybridClock.value(milliseconds: .max) == HybridClock.maximumMilliseconds << 16)
        #expect(throws: CofferError.self) { try HybridClock.tick(after: .max, now: 0) }
        #expect(throws: CofferError.self) { try HybridClock.receive(.max, after: .max, now: 0) }
    }

    @Test func aReceivedClockFarAheadIsHeldToTheSkewLimit() throws {
        let now: UInt64 = 1_000_000
        let limit = HybridClock.value(milliseconds: now + HybridClock.maximumSkewMilliseconds) | 0xFFFF
        // Within the limit a remote value is followed exactly.
        let near = HybridClock.value(milliseconds: now + 60_000) + 7
        #expect(try HybridClock.receive(near, after: 0, now: now) == near + 1)
        // Beyond it (an hour ahead, or the last value) it counts as the limit only.
        for far in [HybridClock.value(milliseconds: now + 3_600_000), UInt64.max] {
            #expect(try HybridClock.receive(far, after: 0, now: now) == limit + 1)
        }
        // A physical time at the end of the range neither traps nor wraps the limit.
        #expect(try HybridClock.receive(HybridClock.value(milliseconds: 9), after: 0, now: .max) == HybridClock.value(milliseconds: .max))
        // A clock already past the limit (persisted earlier) still only moves forward.
        #expect(try HybridClock.receive(.max - 5, after: limit + 10, now: now) == limit + 11)
    }

    @Test func theServersClockIsTakenAndAnchorsTheSkewLimit() throws {
        let now: UInt64 = 1_000_000                       // this machine, an hour slow
        let server = HybridClock.value(milliseconds: now + 3_600_000)
        // The server's own clock is taken as it is: the next tick orders after it.
        #expect(try HybridClock.receive(0, after: 0, now: now, serverClock: server) == server + 1)
        // A pulled clock up to five minutes past the server's time is followed exactly.
        let clamped = HybridClock.value(milliseconds: now + 3_600_000 + HybridClock.maximumSkewMilliseconds) | 0xFFFF
        #expect(try HybridClock.receive(clamped, after: 0, now: now, serverClock: server) == clamped + 1)
        // Beyond that it counts as that far only.
        #expect(try HybridClock.receive(.max, after: 0, now: now, serverClock: server) == clamped + 1)
        // Without the server's clock, this machine's time is the anchor, as before.
        #expect(try HybridClock.receive(server, after: 0, now: now)
                == (HybridClock.value(milliseconds: now + HybridClock.maximumSkewMilliseconds) | 0xFFFF) + 1)
        // A server clock behind this machine changes nothing.
        #expect(try HybridClock.receive(0, after: 0, now: now, serverClock: HybridClock.value(milliseconds: 5)) == HybridClock.value(milliseconds: now))
    }

    @Test func oneTickPerTransactionMonotonicUnderABackwardClockAndAcrossReopen() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let clock = ManualClock(10_000)
        var values: [UInt64] = []
        do {
            let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
            defer { try? store.close() }
            clock.install(in: store)
            let tasks = store.box(for: Synced.Task.self)
            try store.write {
                for title in ["a", "b", "c"] { try tasks.put(Synced.Task(title: title)) }
            }
            values.append(try store.syncClockValue())
            #expect(Set(try SyncProbe.snapshot(store).outbox.map(\.entry.clock)) == [values[0]], "one tick for the whole transaction")
            for step in 0..<20 {
                clock.now = step.isMultiple(of: 2) ? 9_000 : 10_000 - UInt64(step)   // backwards and stuck
                try tasks.put(Synced.Task(title: "t\(step)"))
                values.append(try store.syncClockValue())
            }
            try store.receiveSyncClock(HybridClock.value(milliseconds: 50_000))
            values.append(try store.syncClockValue())
        }
        clock.now = 1_000   // far behind after a restart
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        clock.install(in: store)
        try store.box(for: Synced.Task.self).put(Synced.Task(title: "after reopen"))
        values.append(try store.syncClockValue())
        #expect(values == values.sorted() && Set(values).count == values.count, "\(values)")
        #expect(values.last == HybridClock.value(milliseconds: 50_000) + 2)
        let clocks = try SyncProbe.snapshot(store).outbox.map(\.entry.clock)
        #expect(clocks == clocks.sorted())
    }
}
