import Synchronization

/// Fans the gateway's one LISTEN out to the requests waiting for changes (`/v1/wait`). Each
/// notification moves the generation on and wakes the waits it concerns (payloads as the
/// sync schema sends them):
/// - `<entity>/<hash>` (or `<entity>/`) wakes the waits that name that key;
/// - `<entity>` (anything of the entity may have changed) wakes every wait that names a
///   key of the entity;
/// - a re-established LISTEN (notifications sent while it was down are lost) wakes all;
/// - and every notification wakes the waits that name no keys.
///
/// A client passes the generation its last wait returned, so a change between two of its
/// waits is not missed: a wait returns at once when one of its keys changed after that
/// generation (any change, for a wait without keys), or when the generation belongs to
/// another run of the gateway. The hub remembers when each key last changed, up to
/// `keyLimit` keys; when it forgets the older half, a wait from before the forgotten
/// changes returns at once (a wake-up too many, never one too few). A wait ends with true
/// when woken, false at its timeout or when cancelled (the client went away), and nil at
/// once when `limit` requests wait already.
///
/// A wait may name its owner (a client's user and the id its transport sends) and its place
/// in the owner's sequence of waits: the owner's next wait ends it with false at once, and a
/// wait that arrives after a later one of its owner (on another connection) returns false at
/// once. A client that gave up on a wait (its replica had a
/// local change to push) cannot cancel the HTTP request safely on every platform, so the
/// request would otherwise hold a connection and a place in `limit` until it timed out.
final class GatewayWakeHub: Sendable {
    private struct Waiter {
        let continuation: CheckedContinuation<Bool, Never>
        /// The keys it waits for; nil: any change.
        let keys: Set<String>?
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextId: UInt64 = 0
        var generation: UInt64 = 0
        /// Waits that started and have not returned yet, registered or not.
        var live: Set<UInt64> = []
        /// Live waits that ended (timeout, cancellation) before they were registered. Only a
        /// live wait is recorded here, so a timer that fires after its wait returned (woken
        /// at the same moment) leaves nothing behind.
        var ended: Set<UInt64> = []
        /// The waits by the keys they name, by the entities of those keys, and those that
        /// name none.
        var byKey: [String: Set<UInt64>] = [:]
        var byEntity: [String: Set<UInt64>] = [:]
        var unkeyed: Set<UInt64> = []
        /// The live wait of each owner that named itself, and its place in the owner's sequence.
        var owned: [String: (id: UInt64, sequence: UInt64)] = [:]
        /// The generation at which each key (and each entity, under its bare name) last
        /// changed.
        var changed: [String: UInt64] = [:]
        /// Changes at or below this generation were forgotten: they may concern any key.
        var forgotten: UInt64 = 0
        /// The gateway stops: no wait is registered any more.
        var closed = false

        /// Whether anything a wait for `keys` concerns changed after generation `seen`.
        func changed(since seen: UInt64, keys: Set<String>?) -> Bool {
            guard generation > seen else { return false }
            guard let keys else { return true }
            if forgotten > seen { return true }
            return keys.contains { key in
                (changed[key] ?? 0) > seen || (changed[GatewayWakeHub.entity(of: key)] ?? 0) > seen
            }
        }

        mutating func register(_ id: UInt64, _ waiter: Waiter) {
            waiters[id] = waiter
            guard let keys = waiter.keys else {
                unkeyed.insert(id)
                return
            }
            for key in keys {
                byKey[key, default: []].insert(id)
                byEntity[GatewayWakeHub.entity(of: key), default: []].insert(id)
            }
        }

        mutating func remove(_ id: UInt64) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            guard let keys = waiter.keys else {
                unkeyed.remove(id)
                return waiter
            }
            for key in keys {
                Self.drop(id, from: &byKey, at: key)
                Self.drop(id, from: &byEntity, at: GatewayWakeHub.entity(of: key))
            }
            return waiter
        }

        /// Ends wait `id`: its waiter to resume with false if it is registered. Not registered
        /// yet: the registration ends it at once. Already returned: nothing.
        mutating func end(_ id: UInt64) -> Waiter? {
            if let waiter = remove(id) { return waiter }
            if live.contains(id) { ended.insert(id) }
            return nil
        }

        private static func drop(_ id: UInt64, from index: inout [String: Set<UInt64>], at key: String) {
            guard var ids = index[key] else { return }
            ids.remove(id)
            index[key] = ids.isEmpty ? nil : ids
        }

        /// Records that `key` changed now, forgetting the older half of the changes when
        /// more than `limit` are kept.
        mutating func record(_ key: String, limit: Int) {
            changed[key] = generation
            guard changed.count > limit else { return }
            let generations = changed.values.sorted()
            let cut = generations[generations.count / 2]
            changed = changed.filter { $0.value > cut }
            forgotten = max(forgotten, cut)
        }
    }

    private let state = Mutex(State())
    let limit: Int
    let keyLimit: Int
    /// This run of the gateway, so that a generation of an earlier run never matches.
    let epoch = UInt64.random(in: 1...UInt64.max)

    init(limit: Int, keyLimit: Int = 100_000) {
        self.limit = limit
        self.keyLimit = max(2, keyLimit)
    }

    /// The entity a key belongs to: what precedes its first slash.
    static func entity(of key: String) -> String {
        key.firstIndex(of: "/").map { String(key[..<$0]) } ?? key
    }

    /// How many requests wait now (for the metrics).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// How many keys the hub remembers (for tests of its bound).
    var rememberedKeys: Int { state.withLock { $0.changed.count } }

    /// How many waits the hub keeps track of, registered or about to be (for tests that
    /// every wait's bookkeeping goes when it returns).
    var tracked: Int { state.withLock { $0.live.count + $0.ended.count + $0.waiters.count + $0.owned.count } }

    /// Wakes every waiting request (the LISTEN was re-established: anything may have changed).
    func signal() {
        signal(nil)
    }

    /// Wakes the requests a notification's `payload` concerns (nil: all).
    func signal(_ payload: String?) {
        let keyLimit = keyLimit
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.generation &+= 1
            var ids = state.unkeyed
            if let payload {
                if payload.contains("/") {
                    ids.formUnion(state.byKey[payload] ?? [])
                } else {
                    ids.formUnion(state.byEntity[payload] ?? [])
                }
                state.record(payload, limit: keyLimit)
            } else {
                ids = Set(state.waiters.keys)
                state.changed.removeAll()
                state.forgotten = state.generation
            }
            return ids.compactMap { state.remove($0)?.continuation }
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// Ends every wait as changed and answers every later one so at once: the gateway is
    /// stopping, and a waiting request must not hold its graceful shutdown for the rest of
    /// its timeout. Changed, not timed out: its client pulls (from another instance, if one
    /// serves), so nothing that came meanwhile waits for the client's next poll.
    func close() {
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            return Array(state.waiters.keys).compactMap { state.remove($0)?.continuation }
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// The generation as clients pass it back: `<epoch>-<count>`.
    var generation: String { "\(epoch)-\(state.withLock { $0.generation })" }

    /// Whether a change that concerns `keys` (nil: any) came after generation `after` (nil:
    /// the client has none yet), waiting for the next one at most `timeout`; and the
    /// generation to pass next time. A wait of `owner` ends the owner's earlier wait.
    func wait(after: String?, keys: Set<String>? = nil, timeout: Duration,
              owner: (name: String, sequence: UInt64)? = nil) async -> (changed: Bool, generation: String)? {
        let seen = state.withLock { $0.generation }
        // (A client without a generation of this run has no earlier wait here to end.)
        guard let after, let since = parse(after), since <= seen else { return (true, "\(epoch)-\(seen)") }
        guard let changed = await wait(timeout: timeout, since: since, keys: keys, owner: owner) else { return nil }
        return (changed, generation)
    }

    /// The count of a generation of this run of the gateway; nil for another run's.
    private func parse(_ generation: String) -> UInt64? {
        let parts = generation.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, UInt64(parts[0]) == epoch else { return nil }
        return UInt64(parts[1])
    }

    /// Waits for a change that concerns `keys` after generation `since`, at most `timeout`;
    /// nil at once when `limit` requests wait already.
    private func wait(timeout: Duration, since: UInt64, keys: Set<String>?,
                      owner: (name: String, sequence: UInt64)?) async -> Bool? {
        // The owner's earlier wait ends in the same step, so it never counts against `limit`
        // here and two waits of one owner never both stay.
        enum Start { case busy, stale, started(UInt64) }
        let (start, superseded) = state.withLock { state -> (Start, Waiter?) in
            var superseded: Waiter?
            if let owner, let current = state.owned[owner.name] {
                if current.sequence > owner.sequence { return (.stale, nil) }
                state.owned[owner.name] = nil
                superseded = state.end(current.id)
            }
            guard state.waiters.count < limit else { return (.busy, superseded) }
            state.nextId += 1
            state.live.insert(state.nextId)
            if let owner { state.owned[owner.name] = (state.nextId, owner.sequence) }
            return (.started(state.nextId), superseded)
        }
        superseded?.continuation.resume(returning: false)
        let id: UInt64
        switch start {
        case .busy: return nil
        case .stale: return false
        case .started(let started): id = started
        }
        defer {
            state.withLock { state in
                state.live.remove(id)
                state.ended.remove(id)
                if let owner, state.owned[owner.name]?.id == id { state.owned[owner.name] = nil }
            }
        }
        let timer = Task {
            // Cancelled when the wait ended otherwise: then there is nothing to end.
            do {
                try await Task.sleep(for: timeout)
                self.end(id)
            } catch {}
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> Bool? in
                    if state.ended.remove(id) != nil { return false }
                    if state.closed { return true }
                    // A change since the client's generation, or between reading it and now.
                    if state.changed(since: since, keys: keys) { return true }
                    state.register(id, Waiter(continuation: continuation, keys: keys))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.end(id)
        }
    }

    private func end(_ id: UInt64) {
        let waiter = state.withLock { $0.end(id) }
        waiter?.continuation.resume(returning: false)
    }
}
