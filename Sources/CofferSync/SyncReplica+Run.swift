@_spi(CofferSync) import Coffer
import Foundation

extension SyncReplica {
    /// Syncs until ``stop()`` or until the calling task is cancelled: a pass
    /// (``syncNow()``), then a wait that a server notification or a local change of a synced
    /// entity ends at once, else a poll whose interval doubles (with jitter) after each quiet
    /// pass up to ``Options/poll``'s longest. A failed pass is reported in ``status`` and
    /// retried after a wait that doubles (with jitter) up to ``Options/retry``'s longest;
    /// nothing ends the loop but stopping. Returns once stopped (promptly: a call in flight is
    /// abandoned, its work done again by the next pass). A second call while one runs returns
    /// at once. After a ``stop()`` made while no run was in progress, the next call returns at
    /// once (the stop wins over a run that had not begun), and the one after it runs.
    ///
    /// ```swift
    /// let syncing = Task { await replica.run() }
    /// ...
    /// replica.stop()          // or syncing.cancel()
    /// await syncing.value
    /// ```
    public func run() async {
        enum Start { case started(Task<Void, Never>), alreadyRunning, stopped }
        let start = state.withLock { state -> Start in
            guard state.running == nil else { return .alreadyRunning }
            // A stop made before this run began (say, right after the task calling run() was
            // created) ends it before its first pass, and is spent.
            guard !state.stopRequested else {
                state.stopRequested = false
                return .stopped
            }
            let loop = Task { await self.loop() }
            state.running = loop
            return .started(loop)
        }
        switch start {
        case .alreadyRunning:
            return
        case .stopped:
            channel.update { $0.phase = .stopped }
        case .started(let loop):
            await withTaskCancellationHandler {
                await loop.value
            } onCancel: {
                loop.cancel()
            }
            // The stop that ended this run (or one that came as it ended) is spent with it.
            state.withLock { state in
                state.running = nil
                state.stopRequested = false
            }
            channel.update { $0.phase = .stopped }
        }
    }

    /// Ends ``run()`` promptly: the wait or the call in flight is abandoned (what was
    /// acknowledged or applied stays; the rest is done by the next pass). Each stop ends one
    /// run: the one in progress or, when none is, the next one to begin, which then returns
    /// at once without a pass, so a stop never loses a race with a `run()` that is just
    /// starting. ``syncNow()`` is not affected.
    ///
    /// ```swift
    /// let syncing = Task { await replica.run() }
    /// replica.stop()            // even if the task has not begun: run() returns at once
    /// await syncing.value
    /// let again = Task { await replica.run() }   // runs until the next stop
    /// ```
    public func stop() {
        let loop = state.withLock { state -> Task<Void, Never>? in
            state.stopRequested = true
            return state.running
        }
        loop?.cancel()
        localWake.signal()
    }

    private func loop() async {
        let observers = entityTypes.map { observeLocalChanges(of: $0) }
        defer { for observer in observers { observer.cancel() } }
        var poll = Backoff(first: options.poll.first, longest: options.poll.longest)
        var retry = Backoff(first: options.retry.first, longest: options.retry.longest)
        var lastCounts = (pushed: -1, pulled: -1)
        let clock = ContinuousClock()
        var lastPass = clock.now
        var passFailed = false
        var passDue = true
        while !Task.isCancelled && !state.withLock({ $0.stopRequested }) {
            let wait: Duration
            if passDue {
                do {
                    localWake.clear()
                    lastPass = clock.now
                    let status = try await pass(skippingBackedOff: true)
                    retry.reset()
                    passFailed = false
                    if (status.pushed, status.pulled) != lastCounts { poll.reset() }
                    lastCounts = (status.pushed, status.pulled)
                    // With a transport that wakes the replica, a poll is only a safety net.
                    wait = transport.notifiesChanges ? options.poll.longest : poll.next()
                    channel.update { $0.phase = .waiting }
                } catch {
                    if Task.isCancelled { break }
                    passFailed = true
                    wait = retry.next()
                    channel.update { $0.phase = .backingOff }
                }
            } else {
                // A notifying transport's wait ended with nothing changed (the server holds a
                // wait shorter than the safety net): wait on until the safety net's pass.
                wait = max(options.poll.longest - (clock.now - lastPass), .milliseconds(1))
            }
            let woken = await waitForWakeUp(timeout: wait)
            if woken { poll.reset() }
            // Without wake-ups every wait ends in a pass (a poll); with them, only a wake-up,
            // a failed pass's retry or the safety net's interval does, so a thousand quiet
            // replicas do not pull every time the server ends their waits.
            passDue = woken || passFailed || !transport.notifiesChanges || clock.now - lastPass >= options.poll.longest
        }
    }

    /// Waits for a server notification, a local change or `timeout`; true when woken.
    private func waitForWakeUp(timeout: Duration) async -> Bool {
        let (transport, localWake, keys) = (transport, localWake, wakeKeys())
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    return try await transport.waitForChanges(timeout: timeout, keys: keys)
                } catch {
                    // No wake-ups from this transport now (closed): wait out the time.
                    do { try await Task.sleep(for: timeout) } catch {}
                    return false
                }
            }
            group.addTask { await localWake.wait(timeout: timeout) }
            let woken = await group.next() ?? false
            group.cancelAll()
            return woken
        }
    }

    /// The wake keys of every stream this replica pulls (the whole table or each
    /// subscription of each entity), as their last pages gave them; nil, to wake for any
    /// change, while one is unknown (not pulled yet in this run, or a server that gives none).
    func wakeKeys() -> Set<String>? {
        let known = state.withLock { $0.wakeKeys }
        var keys = Set<String>()
        for entity in entityNames {
            let entries: [ScopeState.Entry]
            do {
                entries = try subscriptionEntries(of: entity)
            } catch {
                return nil   // the next pass reports the damaged state; until then, wake for all
            }
            for entry in entries {
                let stream = entry.key.isEmpty ? transport.stream : scopeStream(entry.key)
                guard let key = known[Self.wakeKeyIndex(entity, stream: stream)] else { return nil }
                keys.insert(key)
            }
        }
        return keys
    }

    /// Where the wake key of `entity`'s pull from `stream` is kept.
    static func wakeKeyIndex(_ entity: String, stream: String) -> String { entity + "\n" + stream }

    /// Signals a wake-up after each local commit that leaves outbox changes to push.
    private func observeLocalChanges<E: Entity>(of type: E.Type) -> Task<Void, Never> {
        let (store, localWake) = (store, localWake)
        return Task {
            for await _ in store.box(for: type).changes() {
                let pending: Int
                do {
                    pending = try store.pendingSyncCount()
                } catch {
                    pending = 1   // the pass will find out and report it
                }
                if pending > 0 { localWake.signal() }
            }
        }
    }
}
