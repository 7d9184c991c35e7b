import Foundation

/// Applies the changes of one pulled page to one entity, inside the page's write
/// transaction, in remote mode (the write path keeps indexes, unique constraints, full
/// text, relations and observation; capture records no outbox entry).
///
/// Rules (the README's "Applying pulled changes"):
/// - Read-your-writes: a field with an unacknowledged local change (taken by a pusher or
///   not) whose (clock, this replica's client id) is at or above the pulled field's
///   (clock, origin) keeps its local value.
/// - Deletes win: a pulled upsert of an object with an unacknowledged local delete is
///   skipped; a pulled delete removes the object and drops its untaken outbox entries.
/// - Fields the change lacks, or that the catalog does not list, keep their stored value;
///   `null` stores no value (refused for a property that must have one).
/// - A `ToOne` arrives as its target's sync id: stored as the target's local id, or as no
///   link plus a pending link when the target is not here yet. A to-many relation arrives as
///   an array of target sync ids (`null`: left as it is).
/// - An upsert that changes no stored value writes nothing (observers see no change).
/// - A local record that cannot be read is replaced only by a change that sets every field;
///   any other change throws ``CofferError/damagedRecord(entity:id:reason:)``.
struct PulledPageApplier {
    let transaction: Transaction
    let schema: EntitySchema
    let binding: EntityBinding
    let tables: SyncIdTables
    let clientId: UUID
    private var local: [UUID: Transaction.UnacknowledgedChanges]
    /// Schema positions of the properties a change may set, by stored name.
    private let positions: [String: Int]
    /// Stored names of retired properties (no build declares them: they may be absent).
    private let retired: Set<String>
    /// The identity tables of link targets by stored entity name (nil: the target is not synced).
    private var targets: [String: SyncIdTables?] = [:]
    private let scratch = RecordBuffer(capacity: 1024)

    private(set) var upserted = 0
    private(set) var deleted = 0
    /// Objects removed because they left the replica's scope (``leave(_:)``).
    private(set) var left = 0
    /// The identity tables and unacknowledged changes of the entities owning links into
    /// objects that leave, read once per entity.
    private var ownerChanges: [UInt32: (tables: SyncIdTables, changes: [UUID: Transaction.UnacknowledgedChanges])] = [:]
    private(set) var unchanged = 0
    private(set) var skipped = 0
    private(set) var fieldsKeptLocal = 0
    private(set) var conflicts = 0
    /// Whether the store holds parked conflicts (each upsert and delete then drops its object's).
    private var hasParkedConflicts: Bool
    /// The app's merge for the entity, if it registered one.
    private let merge: SyncMergeRegistry.Merge?
    private(set) var merged = 0

    init(entity: String, clientId: UUID, in transaction: Transaction) throws {
        let store = transaction.store
        let stored = try store.catalogEntity(named: entity, in: transaction)
        guard stored.synced == true else { throw CofferError.misuse(.notSynced(entity: entity)) }
        let schema = EntitySchema(catalog: stored, includingRetired: true)
        guard let binding = try store.makeCatalogBinding(schema, in: transaction), let tables = binding.syncTables else {
            throw CofferError.misuse(.notSynced(entity: entity))
        }
        self.transaction = transaction
        self.schema = schema
        self.binding = binding
        self.tables = tables
        self.clientId = clientId
        var positions: [String: Int] = [:]
        for (position, property) in schema.properties.enumerated() where property.flags.isDisjoint(with: [.id, .backlink]) {
            positions[property.storedName] = position
        }
        self.positions = positions
        retired = Set(stored.properties.filter(\.isRetired).map(\.name))
        local = try transaction.unacknowledgedChanges(entityId: binding.entityId)
        hasParkedConflicts = try !transaction.parkedSyncConflicts().isEmpty
        merge = store.syncMerges.merge(for: schema.storedName)
    }

    private func refuse(_ field: String?, _ reason: String) -> CofferError {
        CofferError.invalidSyncPage(entity: schema.name, field: field, reason: reason)
    }

    mutating func apply(_ change: PulledPage.Change) throws {
        // A later change of a parked object replaces its conflict (and may park it again).
        if hasParkedConflicts { try transaction.dropSyncConflict(entityId: binding.entityId, syncId: change.syncId) }
        switch change.operation {
        case .delete: try delete(change.syncId)
        case .upsert: try upsert(change)
        }
    }

    private mutating func delete(_ syncId: UUID) throws {
        _ = try transaction.takePendingLinks(to: syncId)  // links to a deleted object never resolve
        if let id = try transaction.localId(of: syncId, in: tables), try transaction.removeObject(id, binding: binding) {
            deleted += 1
        }
        if let mine = local[syncId] {
            try transaction.dropUntakenEntries(mine.untakenMids, of: syncId)
            local[syncId]?.untakenMids = []
        }
    }

    /// Removes the object `syncId` because it left the replica's scope, not because it was
    /// deleted: the server still has it. An object with unacknowledged local changes stays
    /// (returns true: it leaves at a later reconciliation, once they are acknowledged).
    /// Otherwise the links synced objects hold into it are parked as pending, so they come back
    /// when it enters again, the links it waits for are dropped, and it is removed as a pulled
    /// delete removes (nothing is sent).
    mutating func leave(_ syncId: UUID) throws -> Bool {
        if local[syncId] != nil { return true }
        guard let id = try transaction.localId(of: syncId, in: tables) else { return false }
        let links = try transaction.syncedLinks(into: id, syncId: syncId, targetName: schema.storedName)
        // An owner of a link into it with changes the server has not acknowledged would push
        // its values as they are when the pusher reads them, the link cleared: the object stays
        // until those changes are acknowledged.
        for link in links where try ownerHasUnacknowledgedChanges(link) { return true }
        if hasParkedConflicts { _ = try transaction.dropSyncConflict(entityId: binding.entityId, syncId: syncId) }
        for link in links { try transaction.park(link.link) }
        for (position, property) in schema.properties.enumerated() where property.flags.contains(.relation) {
            try transaction.dropPendingLinks(ownerEntityId: binding.entityId, owner: id, field: binding.storedIds[position])
        }
        if try transaction.removeObject(id, binding: binding) { left += 1 }
        return false
    }

    /// Whether the owner of `link` has changes the server has not acknowledged.
    private mutating func ownerHasUnacknowledgedChanges(_ link: Transaction.SyncedLink) throws -> Bool {
        let entityId = link.link.ownerEntityId
        if ownerChanges[entityId] == nil {
            guard try transaction.databaseExists(SyncIdTables.names(entity: entityId).syncIds) else { return false }
            let tables = try SyncIdTables.listed(entityId: entityId, entity: link.ownerName, in: transaction)
            ownerChanges[entityId] = (tables, try transaction.unacknowledgedChanges(entityId: entityId))
        }
        guard let (tables, changes) = ownerChanges[entityId], !changes.isEmpty,
              let ownerSyncId = try transaction.syncId(of: link.link.owner, in: tables) else { return false }
        return changes[ownerSyncId] != nil
    }

    /// What a change sets a property to.
    private enum Decision {
        /// A value, or nil for none.
        case value(ImportedObject.Value?)
        /// A to-many relation's targets that are here, and those that are not yet.
        case relation(targets: [Id], waiting: [UUID])
        /// A link whose target is not here yet: no link for now.
        case waitingLink(UUID)
    }

    private mutating func upsert(_ change: PulledPage.Change) throws {
        let mine = local[change.syncId]
        if mine?.isDeleted == true {
            skipped += 1
            return
        }
        let existingId = try transaction.localId(of: change.syncId, in: tables)
        let existing = try existingId.flatMap { try transaction.record($0, table: binding.table, entity: schema.name) }.map { Array($0) }
        // The fields an unacknowledged whole creation of the object sends (see
        // `UnacknowledgedChanges.clock(of:sentWhole:)`); nil when there is none.
        let sentWhole = try mine.flatMap { $0.wholeClock == 0 ? nil : try sentByWholeCreation(existingId, existing) }
        var decisions: [Int: Decision] = [:]
        // For the app's merge: the pulled decisions of fields kept local, and the positions
        // of every field both the change and an unacknowledged local change set.
        var overridden: [Int: Decision] = [:]
        var collided: [Int] = []
        for member in change.fields {
            guard let position = positions[member.key] else { continue }  // unknown here: left as it is
            let property = schema.properties[position]
            // Local changes count while the object is here (a pulled delete earlier in the
            // page removed it: the server's values are the object's now).
            let storedId = binding.storedIds[position]
            let localClock = existing == nil ? nil : mine?.clock(of: storedId, sentWhole: sentWhole?.contains(storedId) ?? false)
            let pulled = change.stamp(of: member.key)
            // This replica's own earlier write coming back (pushed before the unacknowledged
            // change, or pushed and not yet acknowledged) is not another replica's change:
            // the local change supersedes it, and the merge is not asked.
            if merge != nil, localClock != nil, pulled.origin != clientId { collided.append(position) }
            if let localClock, PulledPage.Stamp(clock: localClock, origin: clientId) >= pulled {
                fieldsKeptLocal += 1
                if merge != nil, let decision = try decide(member.value, property: property, syncId: change.syncId) {
                    overridden[position] = decision
                }
                continue
            }
            if let decision = try decide(member.value, property: property, syncId: change.syncId) {
                decisions[position] = decision
            }
        }
        var views: (local: [UInt8], remote: [UInt8])?
        // Relations are not in records: the merge's views get each side's targets of the
        // colliding to-many relations, read before the change replaces them.
        var relations: SyncMergeRegistry.RelationViews = ([:], [:])
        if let existingId, existing != nil {
            for position in collided where schema.properties[position].flags.contains(.toMany) {
                guard let relation = binding.relationTables[position] else { continue }
                let stored = try transaction.relatedIds(relation.forward, of: existingId, owner: relation.owner)
                relations.local[position] = stored
                if case .relation(let targets, _)? = decisions[position] ?? overridden[position] {
                    relations.remote[position] = targets
                } else {
                    relations.remote[position] = stored
                }
            }
        }
        try (existing ?? []).withUnsafeBytes { raw in
            var stored: [UInt16: RecordFields.Field] = [:]
            if let existingId, existing != nil {
                do {
                    try RecordFields(bytes: raw, layout: binding, id: existingId).forEach { id, field in
                        if stored[id] == nil { stored[id] = field }
                    }
                } catch CofferError.damagedRecord(let entity, let id, let reason) {
                    // The fields after the damage are lost: only a change that sets every
                    // field may replace the record, which then keeps nothing of it.
                    try checkSetsEveryField(decisions, damagedId: id, entity: entity, reason: reason, syncId: change.syncId)
                    stored = [:]
                }
            }
            try checkRequiredValues(decisions, stored: stored, isInsert: existing == nil, syncId: change.syncId)
            if !collided.isEmpty, existing != nil {
                var local = decisions
                for position in collided { local[position] = nil }
                views = (Self.record(schema: schema, binding: binding, decisions: local, stored: stored),
                         Self.record(schema: schema, binding: binding, decisions: decisions.merging(overridden) { $1 }, stored: stored))
            }
            let (schema, binding, isInsert) = (self.schema, self.binding, existing == nil)
            let encode = { (writer: inout RecordWriter, stamps: PutStamps?) in
                Self.encode(to: &writer, schema: schema, binding: binding, decisions: decisions, stored: stored,
                            stamps: isInsert ? stamps : nil)
            }
            var id = existingId ?? 0
            if existing != nil, try isUnchanged(decisions: decisions, stored: stored, id: id, encode: encode) {
                unchanged += 1
                return
            }
            if try !takeUniqueValues(id: id, encode: encode, change: change) {
                conflicts += 1
                views = nil  // parked: nothing to merge
                return
            }
            if existing == nil { transaction.sync.arrivingSyncId = (binding.entityId, change.syncId) }
            defer { transaction.sync.arrivingSyncId = nil }
            try transaction.storeObject(id: &id, binding: binding, encode: encode)
            try applyRelationsAndLinks(decisions, owner: id, change: change)
            if existing == nil { try transaction.resolvePendingLinks(to: change.syncId, targetId: id) }
            upserted += 1
        }
        if let merge, let views, let existingId {
            try callMerge(merge, id: existingId, views: views, relations: relations, collided: collided, syncId: change.syncId)
        }
    }

    /// The stored ids of the fields a whole creation of the local object `id` sends as it
    /// stands (as `SyncChangeReader` reads it): those its record holds, and its to-many
    /// relations that hold targets, here or pending. Empty when the object is not here.
    private func sentByWholeCreation(_ id: Id?, _ record: [UInt8]?) throws -> Set<UInt16> {
        guard let id, let record else { return [] }
        var sent = Set<UInt16>()
        do {
            try record.withUnsafeBytes { raw in
                try RecordFields(bytes: raw, layout: binding, id: id).forEach { storedId, _ in sent.insert(storedId) }
            }
        } catch CofferError.damagedRecord {
            // The record cannot be sent as it stands: nothing of it is protected, and the
            // change is applied (or refused) as for any damaged record below.
            return []
        }
        for (position, property) in schema.properties.enumerated() where property.flags.contains(.toMany) {
            guard let relation = binding.relationTables[position] else { continue }
            let storedId = binding.storedIds[position]
            if try !transaction.relatedIds(relation.forward, of: id, owner: relation.owner).isEmpty
                || !transaction.pendingTargets(ownerEntityId: binding.entityId, owner: id, field: storedId).isEmpty {
                sent.insert(storedId)
            }
        }
        return sent
    }

    /// Calls the app's merge and stores its result as a local change (recorded in the
    /// outbox, at this transaction's clock, which the page's clock moved past).
    private mutating func callMerge(_ merge: SyncMergeRegistry.Merge, id: Id, views: (local: [UInt8], remote: [UInt8]),
                                    relations: SyncMergeRegistry.RelationViews, collided: [Int], syncId: UUID) throws {
        transaction.sync.isApplyingRemote = false
        defer { transaction.sync.isApplyingRemote = true }
        let properties = collided.sorted().map { schema.properties[$0].storedName }
        try transaction.prepareSyncState()
        let lastMidBefore = transaction.sync.state.lastMid
        try views.local.withUnsafeBytes { local in
            try views.remote.withUnsafeBytes { remote in
                try merge(transaction, id, local, remote, properties, relations)
            }
        }
        merged += 1
        // The merge's put may have made a new entry for the object (its earlier one was taken
        // by a pusher): a pulled delete later in the page drops it with the others.
        let lastMidAfter = transaction.sync.state.lastMid
        if lastMidAfter > lastMidBefore {
            for mid in (lastMidBefore + 1)...lastMidAfter {
                if let entry = try transaction.outboxEntry(mid), entry.entityId == binding.entityId, entry.syncId == syncId {
                    local[syncId, default: .init()].untakenMids.append(mid)
                }
            }
        }
        // The merge's put may have made or extended the object's entry: later changes of
        // it in this page compare against the merged fields, which are newer than the page.
        let tick = transaction.sync.tick
        guard tick != 0 else { return }
        for position in collided { local[syncId, default: .init()].fieldClocks[binding.storedIds[position]] = tick }
    }

    /// A record of the object with `decisions` over its `stored` fields (for the app's merge).
    private static func record(schema: EntitySchema, binding: EntityBinding, decisions: [Int: Decision],
                               stored: [UInt16: RecordFields.Field]) -> [UInt8] {
        let buffer = RecordBuffer(capacity: 256)
        var writer = RecordWriter(buffer: buffer, storedIds: binding.storedIds)
        encode(to: &writer, schema: schema, binding: binding, decisions: decisions, stored: stored, stamps: nil)
        buffer.adopt(writer)
        return Array(writer.bytes)
    }

    /// Checks every unique value the change stores against the other local objects before
    /// anything is removed. The server's row wins a `.replace` value over a local holder the
    /// server has never seen (its creation is still untaken): the holder gives way as a local
    /// put would make it, and as its creation merges its delete, nothing is sent. A holder the
    /// server knows (acknowledged, or taken by a pusher) is never removed here: the server
    /// holds it under another value, so the local copy is stale or changed locally, and
    /// removing it would send a delete the server did not decide. That collision, and any on
    /// `.fail` or `.update` (which would merge two objects of different sync ids), parks the
    /// change as a conflict and returns false, with nothing removed.
    private mutating func takeUniqueValues(id: Id, encode: (inout RecordWriter, PutStamps?) -> Void, change: PulledPage.Change) throws -> Bool {
        guard binding.hasUniqueIndex else { return true }
        var writer = RecordWriter(buffer: scratch, storedIds: binding.storedIds)
        encode(&writer, nil)
        scratch.adopt(writer)
        let record = RecordFields(bytes: writer.bytes, layout: binding, id: id)
        var givingWay: [(id: Id, syncId: UUID)] = []
        for index in binding.indexes where index.isUnique {
            guard try record.field(index.storedId) != nil else { continue }
            let holders = try transaction.matchingIds(index, valueOf: record, table: binding.table, excluding: id)
            guard !holders.isEmpty else { continue }
            if index.property.onConflict == .replace, let localOnly = try localOnlyHolders(holders) {
                givingWay += localOnly
                continue
            }
            try transaction.parkSyncConflict(SyncConflict(entity: schema.name, syncId: change.syncId, property: index.property.name,
                                                          value: try record.describe(index), remoteRow: change.text),
                                             entityId: binding.entityId)
            hasParkedConflicts = true
            return false
        }
        guard !givingWay.isEmpty else { return true }
        // Removed as local deletes: each merges into the holder's untaken creation, which it
        // drops, and links to the holder are cleared (and captured) as a local remove clears them.
        transaction.sync.isApplyingRemote = false
        defer { transaction.sync.isApplyingRemote = true }
        for holder in givingWay where local[holder.syncId] != nil {
            _ = try transaction.removeObject(holder.id, binding: binding)
            local[holder.syncId] = nil
        }
        return true
    }

    /// The holders with their sync ids when every one exists only on this replica (its
    /// creation is untaken), else nil.
    private func localOnlyHolders(_ holders: [Id]) throws -> [(id: Id, syncId: UUID)]? {
        var found: [(id: Id, syncId: UUID)] = []
        for holder in holders {
            guard let syncId = try transaction.syncId(of: holder, in: tables), local[syncId]?.isUntakenCreation == true else { return nil }
            found.append((holder, syncId))
        }
        return found
    }

    /// The decision for one field's wire value, or nil to leave the field as it is.
    private mutating func decide(_ node: JSONNode, property: PropertySchema, syncId: UUID) throws -> Decision? {
        let name = property.storedName
        if property.flags.contains(.toMany) {
            if case .null = node { return nil }  // to-many relations are not always sent: absent is unknown
            guard case .array(let elements) = node else {
                throw refuse(name, "\(syncId): a to-many relation needs an array of sync ids, not \(node.text.prefix(100))")
            }
            var found: [Id] = []
            var waiting: [UUID] = []
            for element in elements {
                guard case .string(let text) = element, let target = UUID(canonicalText: text) else {
                    throw refuse(name, "\(syncId): a to-many relation needs sync ids (UUID strings), not \(element.text.prefix(100))")
                }
                if let targetId = try localId(of: target, targetEntity: property.relationTarget) {
                    found.append(targetId)
                } else {
                    waiting.append(target)
                }
            }
            return .relation(targets: found, waiting: waiting)
        }
        if property.flags.contains(.relation) {
            if case .null = node { return .value(nil) }
            guard case .string(let text) = node, let target = UUID(canonicalText: text) else {
                throw refuse(name, "\(syncId): a link needs its target's sync id (a UUID string) or null, not \(node.text.prefix(100))")
            }
            guard let targetId = try localId(of: target, targetEntity: property.relationTarget) else { return .waitingLink(target) }
            return .value(.unsigned(targetId))
        }
        let converted = WireValue.importNode(node, type: property.type)
        // An embedded value's presence: a put of an absent value stores no field, not false.
        if property.flags.contains(.embedded), case .bool(false) = converted { return .value(nil) }
        if case .null = converted {
            if property.type == .json, ImportedObject.isJSONValue(property) { return .value(.node(.null)) }
            return .value(nil)
        }
        do throws(ImportProblem) {
            return .value(try ImportedObject.value(converted, of: property, schema: schema))
        } catch {
            throw refuse(name, "\(syncId): \(error.message)")
        }
    }

    /// The local id of the object with sync id `target` of the entity `entity`, or nil.
    private mutating func localId(of target: UUID, targetEntity entity: String?) throws -> Id? {
        guard let entity else { return nil }
        if targets[entity] == nil {
            let store = transaction.store
            let stored = try store.catalogEntity(named: entity, in: transaction)
            if stored.synced == true {
                targets[entity] = .some(try SyncIdTables.listed(entityId: stored.id, entity: entity, in: transaction))
            } else {
                targets[entity] = .some(nil)
            }
        }
        guard let tables = targets[entity] ?? nil else { return nil }
        return try transaction.localId(of: target, in: tables)
    }

    /// Refuses to apply a change to a damaged record unless the change decides every field
    /// the record holds: a field it leaves alone (absent from the row, or kept for a local
    /// change) would be read from the damaged bytes, which may have lost it, and the next push
    /// would send the loss as a value.
    private func checkSetsEveryField(_ decisions: [Int: Decision], damagedId: Id, entity: String, reason: String, syncId: UUID) throws {
        var undecided: [String] = []
        for (position, property) in schema.properties.enumerated() where property.flags.isDisjoint(with: [.id, .backlink, .toMany]) {
            if decisions[position] == nil, !retired.contains(property.storedName) { undecided.append(property.storedName) }
        }
        guard !undecided.isEmpty else { return }
        throw CofferError.damagedRecord(entity: entity, id: damagedId, reason: "\(reason); the pulled change of \(syncId) does not set "
            + "\(undecided.joined(separator: ", ")) (absent from the row, or kept for a local change), so it cannot be applied "
            + "without losing them: overwrite or remove the object to repair it (nothing of the page is applied)")
    }

    /// Refuses a change that would leave a property without a value that must have one.
    private func checkRequiredValues(_ decisions: [Int: Decision], stored: [UInt16: RecordFields.Field], isInsert: Bool, syncId: UUID) throws {
        for (position, property) in schema.properties.enumerated() where property.flags.isDisjoint(with: [.id, .backlink, .toMany, .relation, .createdAt, .updatedAt]) {
            guard !property.isOptional, !property.hasDefault, !retired.contains(property.storedName) else { continue }
            let hasValue: Bool
            switch decisions[position] {
            case .value(let value)?: hasValue = value != nil
            default: hasValue = stored[binding.storedIds[position]] != nil
            }
            if !hasValue, isInsert || decisions[position] != nil {
                throw refuse(property.storedName, "\(syncId): \(schema.name).\(property.storedName) is \(property.swiftType), which is neither optional nor defaulted, so it needs a value")
            }
        }
    }

    /// Writes the record: each property's decided value, else its stored field, else (an
    /// insert) the timestamp a put would give it.
    private static func encode(to writer: inout RecordWriter, schema: EntitySchema, binding: EntityBinding, decisions: [Int: Decision],
                               stored: [UInt16: RecordFields.Field], stamps: PutStamps?) {
        for (position, property) in schema.properties.enumerated() where property.flags.isDisjoint(with: [.id, .backlink, .toMany]) {
            switch decisions[position] {
            case .value(let value)?:
                if let value { ImportedObject.write(value, position, to: &writer) }
            case .waitingLink?:
                break
            case .relation?, nil:
                if let field = stored[binding.storedIds[position]] {
                    writer.appendRaw(binding.storedIds[position], field)
                } else if let stamps, property.flags.contains(.createdAt), let created = stamps.createdAt {
                    writer.write(position, created)
                } else if let stamps, property.flags.contains(.updatedAt) {
                    writer.write(position, stamps.updatedAt)
                }
            }
        }
    }

    /// Whether the change would store exactly what is stored: every field and relation the same.
    private func isUnchanged(decisions: [Int: Decision], stored: [UInt16: RecordFields.Field], id: Id,
                             encode: (inout RecordWriter, PutStamps?) -> Void) throws -> Bool {
        var writer = RecordWriter(buffer: scratch, storedIds: binding.storedIds)
        encode(&writer, nil)
        scratch.adopt(writer)
        var count = 0
        var same = true
        try RecordFields(bytes: writer.bytes, layout: binding, id: id).forEach { fieldId, field in
            count += 1
            if same, !RecordFields.Field.sameStoredValue(stored[fieldId], field) { same = false }
        }
        let declaredStored = stored.keys.filter { binding.declares($0) }.count
        guard same, count == declaredStored else { return false }
        for (position, decision) in decisions {
            switch decision {
            case .relation(let targets, let waiting):
                guard waiting.isEmpty, let relation = binding.relationTables[position] else { return false }
                let current = try transaction.relatedIds(relation.forward, of: id, owner: relation.owner)
                if Set(current) != Set(targets) { return false }
            case .waitingLink:
                return false
            case .value:
                break
            }
        }
        return true
    }

    /// After the record is stored: to-many relations, and the links that wait for targets.
    private func applyRelationsAndLinks(_ decisions: [Int: Decision], owner: Id, change: PulledPage.Change) throws {
        for (position, decision) in decisions {
            let field = binding.storedIds[position]
            let stamp = change.stamp(of: schema.properties[position].storedName)
            switch decision {
            case .relation(let targets, let waiting):
                try transaction.dropPendingLinks(ownerEntityId: binding.entityId, owner: owner, field: field)
                if let relation = binding.relationTables[position] {
                    try transaction.replaceRelations(relation, owner: owner, targets: targets)
                }
                for target in waiting {
                    try transaction.addPendingLink(.init(ownerEntityId: binding.entityId, owner: owner, field: field, target: target),
                                                   clock: stamp.clock, origin: stamp.origin)
                }
            case .waitingLink(let target):
                try transaction.dropPendingLinks(ownerEntityId: binding.entityId, owner: owner, field: field)
                try transaction.addPendingLink(.init(ownerEntityId: binding.entityId, owner: owner, field: field, target: target),
                                               clock: stamp.clock, origin: stamp.origin)
            case .value:
                if schema.properties[position].flags.contains(.relation) {
                    try transaction.dropPendingLinks(ownerEntityId: binding.entityId, owner: owner, field: field)
                }
            }
        }
    }
}
