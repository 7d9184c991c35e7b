@_spi(CofferSync) import Coffer
import Foundation

/// Partial replication: the subscriptions a replica pulls, each from its own cursor, and
/// the comparison of the ids it holds with the server's that removes objects that left and
/// fetches objects that entered without a change of their own.
extension SyncReplica {
    /// The most ids one `coffer_scope_ids` call returns.
    static let scopeIdsPageSize = 10_000

    /// What the replica keeps per server (in the store, as JSON): the subscriptions of each
    /// entity it was told about (an entity not listed is pulled whole, from the stream's own
    /// cursor), and the entities whose ids must be compared with the server's.
    struct ScopeState: Codable, Equatable {
        /// A subscription and the name of its cursor: empty for the whole table (the
        /// stream's cursor, shared with replicas that never subscribed), a UUID otherwise, new
        /// for each subscribe, so a scope subscribed again starts from the beginning.
        struct Entry: Codable, Equatable {
            var subscription: SyncSubscription
            var key: String
        }

        var entities: [String: [Entry]] = [:]
        var reconcile: Set<String> = []
    }

    /// Subscribes to `subscription`: its rows are pulled, from the beginning, by the next
    /// pass (``run()`` starts one at once). The first subscription of an entity replaces its
    /// whole table: objects outside every subscription are removed by the next pass (the
    /// server keeps them; objects with unpushed changes stay until the server acknowledges
    /// them). Subscribing to the whole table (``SyncSubscription/wholeTable(_:)``) brings it
    /// back. Subscriptions are stored in the store, per server, and last across restarts.
    /// Waits for a pass under way to end.
    ///
    /// ```swift
    /// try await replica.subscribe(SyncSubscription(Message.self, scope: "conversation",
    ///                                              parameters: ["id": conversation.uuidString]))
    /// ```
    ///
    /// - Throws: ``SyncReplicaError/unknownEntity(_:)`` for an entity this replica does not
    ///   sync, ``SyncReplicaError/invalidSubscription(_:reason:)`` for a parameter holding NUL.
    public func subscribe(_ subscription: SyncSubscription) async throws {
        try check(subscription)
        try await gate.run {
            var state = try scopeState()
            var dropped: [(entity: String, stream: String)] = []
            var entries: [ScopeState.Entry]
            if let listed = state.entities[subscription.entity] {
                entries = listed
            } else {
                // The implicit whole table ends, unless that is what is subscribed.
                entries = []
                if !subscription.isWholeTable {
                    dropped.append((subscription.entity, transport.stream))
                    state.reconcile.insert(subscription.entity)
                }
            }
            guard !entries.contains(where: { $0.subscription == subscription }) else { return }
            entries.append(ScopeState.Entry(subscription: subscription,
                                            key: subscription.isWholeTable ? "" : UUID().uuidString.lowercased()))
            state.entities[subscription.entity] = entries
            try store.setSyncScopeState(try Self.encode(state), stream: transport.stream, droppingCursors: dropped)
        }
        localWake.signal()
    }

    /// Ends `subscription`: the next pass removes its objects that no other subscription of
    /// the entity holds (objects with unpushed changes stay until the server acknowledges
    /// them). An entity whose last subscription ends holds nothing. Nothing when it was not
    /// subscribed. Waits for a pass under way to end.
    ///
    /// ```swift
    /// try await replica.unsubscribe(SyncSubscription(Message.self, scope: "conversation", parameters: ["id": old]))
    /// ```
    ///
    /// - Throws: ``SyncReplicaError/unknownEntity(_:)`` for an entity this replica does not sync.
    public func unsubscribe(_ subscription: SyncSubscription) async throws {
        guard entityNames.contains(subscription.entity) else { throw SyncReplicaError.unknownEntity(subscription.entity) }
        try await gate.run {
            var state = try scopeState()
            let entries = state.entities[subscription.entity] ?? [ScopeState.Entry(subscription: subscription.wholeTableOfEntity, key: "")]
            guard let ended = entries.first(where: { $0.subscription == subscription }) else { return }
            state.entities[subscription.entity] = entries.filter { $0 != ended }
            state.reconcile.insert(subscription.entity)
            try store.setSyncScopeState(try Self.encode(state), stream: transport.stream,
                                        droppingCursors: [(subscription.entity, ended.key.isEmpty ? transport.stream : scopeStream(ended.key))])
        }
        localWake.signal()
    }

    /// The subscriptions in effect, entity by entity in pull order: the whole table of each
    /// entity never subscribed to anything else.
    ///
    /// ```swift
    /// for subscription in try replica.subscriptions() { print(subscription) }
    /// ```
    public func subscriptions() throws -> [SyncSubscription] {
        try entityNames.flatMap { try subscriptionEntries(of: $0).map(\.subscription) }
    }

    /// Compares the ids of `entity` the replica holds with those of its `subscriptions` on the
    /// server (the rows the caller may see that match any of them): removes the objects no
    /// longer there (`Store.leaveSyncObjects(_:entity:)`: their links wait, they come back
    /// if they enter again) and fetches those that entered. Objects with unpushed changes
    /// stay, and the entity stays marked, so the next pass compares again once they are
    /// acknowledged.
    func reconcile(_ entity: String, _ subscriptions: [SyncSubscription]) async throws {
        var inScope = Set<UUID>()
        do {
            // At most 100 subscriptions per listing: each is a condition of its query.
            for start in stride(from: 0, to: subscriptions.count, by: 100) {
                let some = Array(subscriptions[start..<min(start + 100, subscriptions.count)])
                inScope.formUnion(try await listIds(entity, some))
            }
        } catch let error as SyncTransportError where error.isScopesUnsupported && subscriptions.allSatisfy(\.isWholeTable) {
            // A transport (or an older gateway) that cannot list ids: the whole table is
            // pulled again from the start instead, which removes what the user no longer sees.
            try store.beginSyncResync(entity: entity, stream: transport.stream)
            channel.update { $0.resyncs += 1 }
            try clearReconciliation(entity)
            return
        }
        let held = try store.syncIds(entity: entity)
        let heldSet = Set(held)
        let result = try store.leaveSyncObjects(held.filter { !inScope.contains($0) }, entity: entity)
        channel.update { $0.leftScope += result.left }
        try await fetchAndApply(entity, ids: inScope.filter { !heldSet.contains($0) }.sorted { $0.uuidString < $1.uuidString })
        if result.kept == 0 { try clearReconciliation(entity) }
    }

    /// The ids of `entity`'s rows in any of `subscriptions` on the server, page by page.
    private func listIds(_ entity: String, _ subscriptions: [SyncSubscription]) async throws -> Set<UUID> {
        var ids = Set<UUID>()
        var after: UUID?
        while true {
            try Task.checkCancellation()
            let reply = try await transport.scopeIds(entity: entity, subscriptions: subscriptions, after: after, limit: Self.scopeIdsPageSize)
            let listing = try Self.parseListing(reply, entity: entity)
            ids.formUnion(listing.ids)
            guard listing.more else { return ids }
            guard let last = listing.ids.last, last != after else {
                throw SyncTransportError.malformedReply(operation: "list the ids of \(entity)'s scopes",
                                                        detail: "the listing says there is more but did not move past \(after?.uuidString ?? "the start")")
            }
            after = last
        }
    }

    /// The comparison of `entity` is done.
    private func clearReconciliation(_ entity: String) throws {
        var state = try scopeState()
        guard state.reconcile.remove(entity) != nil else { return }
        try store.setSyncScopeState(try Self.encode(state), stream: transport.stream)
    }

    /// Marks `entity` for comparison with the server's ids (stored, so a restart still does it).
    func markForReconciliation(_ entity: String) throws {
        var state = try scopeState()
        guard !state.reconcile.contains(entity) else { return }
        state.reconcile.insert(entity)
        try store.setSyncScopeState(try Self.encode(state), stream: transport.stream)
    }

    /// The subscriptions of `entity` with their cursor names: the whole table when the
    /// replica was never told otherwise.
    func subscriptionEntries(of entity: String) throws -> [ScopeState.Entry] {
        try scopeState().entities[entity]
            ?? [ScopeState.Entry(subscription: SyncSubscription(entity: entity, scope: ""), key: "")]
    }

    /// The stream a scope's cursor is stored under.
    func scopeStream(_ key: String) -> String { transport.stream + "\nscope/" + key }

    /// The stored state, or an empty one.
    func scopeState() throws -> ScopeState {
        guard let data = try store.syncScopeState(stream: transport.stream) else { return ScopeState() }
        do {
            return try JSONDecoder().decode(ScopeState.self, from: data)
        } catch {
            throw CofferError.damagedStore(part: .sync, reason: "the sync subscriptions stored for \(transport.stream) cannot be read: \(error)")
        }
    }

    private static func encode(_ state: ScopeState) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(state)
    }

    private func check(_ subscription: SyncSubscription) throws {
        guard entityNames.contains(subscription.entity) else { throw SyncReplicaError.unknownEntity(subscription.entity) }
        // What the gateway takes (and far more than a scope needs).
        guard subscription.scope.utf8.count <= 200 else {
            throw SyncReplicaError.invalidSubscription(subscription.description, reason: "the scope's name is longer than 200 bytes")
        }
        guard subscription.parametersJSON.utf8.count <= 4096 else {
            throw SyncReplicaError.invalidSubscription(subscription.description, reason: "the parameters take more than 4096 bytes as JSON")
        }
        for (name, value) in subscription.parameters where name.contains("\0") || value.contains("\0") {
            throw SyncReplicaError.invalidSubscription(subscription.description, reason: "parameter \(name.debugDescription) holds NUL, which PostgreSQL's JSON cannot")
        }
        if subscription.scope.contains("\0") {
            throw SyncReplicaError.invalidSubscription(subscription.description, reason: "the scope's name holds NUL")
        }
    }

    private struct Listing: Decodable {
        let ids: [UUID]
        let more: Bool
    }

    private static func parseListing(_ reply: Data, entity: String) throws -> Listing {
        do {
            return try JSONDecoder().decode(Listing.self, from: reply)
        } catch {
            throw SyncTransportError.malformedReply(operation: "list the ids of \(entity)'s scopes",
                                                    detail: "not {\"ids\": [...], \"more\": ...}: \(error)")
        }
    }
}

extension SyncTransportError {
    /// The transport does not implement scopes (SQLSTATE 0A000).
    var isScopesUnsupported: Bool {
        if case .server(_, "0A000", _) = self { return true }
        return false
    }
}

extension SyncSubscription {
    /// The whole table of this subscription's entity.
    var wholeTableOfEntity: SyncSubscription { SyncSubscription(entity: entity, scope: "") }
}
