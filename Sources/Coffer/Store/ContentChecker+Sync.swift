import CLMDB
import Foundation

/// The sync checks of `Store.verify()`: a synced entity's identity tables are one mapping
/// in both directions covering exactly its stored objects; every outbox entry reads and
/// agrees with the counters, and every untaken entry a sync id names is an update of it.
extension ContentChecker {
    mutating func checkSyncIds(of entity: CatalogEntity, storedIds: Set<Id>) throws {
        guard entity.synced == true else { return }
        let names = SyncIdTables.names(entity: entity.id)
        guard let forward = store.storedDatabase(names.syncIds), let reverse = store.storedDatabase(names.localIds) else {
            report("\(entity.name) is synced but has no sync id tables")
            return
        }
        var syncIds: [Id: UUID] = [:]
        var forwardCount = 0
        var problems: [String] = []
        try transaction.withCursor(forward, "checking the sync ids of \(entity.name)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                forwardCount += 1
                if let id = IdKey(entry.key)?.id, entry.value.count == SyncIdTables.syncIdValueSize,
                   let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: entry.value[0..<16])) {
                    syncIds[id] = syncId
                    if !storedIds.contains(id) { problems.append("\(entity.name): the sync id table lists \(id), which is not stored") }
                } else {
                    problems.append("\(entity.name): a sync id entry of \(entry.key.count) + \(entry.value.count) bytes")
                }
                current = try cursor.next()
            }
        }
        var reverseCount = 0
        try transaction.withCursor(reverse, "checking the sync ids of \(entity.name)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                reverseCount += 1
                if let syncId = UUID(syncBytes: entry.key), let id = IdKey(entry.value)?.id {
                    if syncIds[id] != syncId { problems.append("\(entity.name): the sync id \(syncId) maps to \(id), which does not map back") }
                } else {
                    problems.append("\(entity.name): a reverse sync id entry of \(entry.key.count) + \(entry.value.count) bytes")
                }
                current = try cursor.next()
            }
        }
        // Derived sync ids have no reverse entry, whether or not a `syncIds` entry names their
        // newest outbox entry.
        var derived: [Id: UUID] = [:]
        for id in storedIds.sorted() {
            do {
                if let identity = try transaction.derivedIdentity(of: id, entityId: entity.id) { derived[id] = identity.syncId }
            } catch {
                problems.append("\(entity.name): \(error)")
            }
        }
        // Every other entry (a damaged one too) needs its reverse entry.
        let derivedEntries = syncIds.filter { derived[$0.key] == $0.value }.count
        if reverseCount != forwardCount - derivedEntries {
            problems.append("\(entity.name): \(forwardCount - derivedEntries) sync ids but \(reverseCount) reverse entries")
        }
        let missing = storedIds.filter { syncIds[$0] == nil && derived[$0] == nil }.count
        if missing > 0 { problems.append("\(entity.name): \(missing) stored object(s) without a sync id") }
        for problem in problems { report(problem) }
    }

    mutating func checkOutbox(entities: [CatalogEntity]) throws {
        guard let outbox = store.storedDatabase(SyncIdTables.outboxName), let catalog = store.catalogDatabase else { return }
        var state = SyncState()
        do {
            if let bytes = try Catalog.raw(key: SyncState.catalogKey, dbi: catalog, in: transaction) { state = try SyncState(decoding: bytes) }
        } catch {
            report("\(error)")
        }
        let synced = Set(entities.filter { $0.synced == true }.map(\.id))
        var entries: [UInt64: OutboxEntry] = [:]
        var problems: [String] = []
        try transaction.withCursor(outbox, "checking the sync outbox") { cursor in
            var current = try cursor.first()
            while let stored = current {
                guard stored.key.count == 8 else {
                    problems.append("the sync outbox holds a key of \(stored.key.count) bytes")
                    current = try cursor.next()
                    continue
                }
                let mid = UInt64(bigEndian: stored.key.loadUnaligned(as: UInt64.self))
                do {
                    let entry = try OutboxEntry(decoding: stored.value, mid: mid)
                    entries[mid] = entry
                    if mid > state.lastMid { problems.append("the outbox entry \(mid) is above the last mutation id \(state.lastMid)") }
                    if !synced.contains(entry.entityId) { problems.append("the outbox entry \(mid) names the entity id \(entry.entityId), which is not synced") }
                } catch {
                    problems.append("\(error)")
                }
                current = try cursor.next()
            }
        }
        // The newest entry each object names must be one its next change can merge into,
        // while no pusher took it.
        for entity in entities where entity.synced == true {
            guard let forward = store.storedDatabase(SyncIdTables.names(entity: entity.id).syncIds) else { continue }
            // Objects with a derived id and no `syncIds` entry: their creation entry, while
            // no pusher took it.
            do {
                let tables = try SyncIdTables.listed(entityId: entity.id, entity: entity.name, in: transaction)
                for object in try transaction.syncIdentities(in: tables, entity: entity.name) where object.mid > state.sendFloor {
                    guard try transaction.syncIdEntry(of: object.id, in: tables) == nil else { continue }
                    if let entry = entries[object.mid] {
                        if entry.syncId != object.syncId || entry.operation != .upsert || entry.entityId != entity.id || !entry.isCreation {
                            problems.append("\(entity.name): the derived sync id \(object.syncId) names the outbox entry \(object.mid), which is not its creation")
                        }
                    } else {
                        problems.append("\(entity.name): the derived sync id \(object.syncId) names the outbox entry \(object.mid), which is not stored")
                    }
                }
            } catch {
                problems.append("\(entity.name): \(error)")
            }
            try transaction.withCursor(forward, "checking the sync ids of \(entity.name)") { cursor in
                var current = try cursor.first()
                while let stored = current {
                    current = try cursor.next()
                    guard stored.value.count == SyncIdTables.syncIdValueSize,
                          let syncId = UUID(syncBytes: UnsafeRawBufferPointer(rebasing: stored.value[0..<16])) else { continue }  // reported with the identity tables
                    let mid = UInt64(bigEndian: stored.value.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
                    guard mid > state.sendFloor else { continue }
                    if let entry = entries[mid] {
                        if entry.syncId != syncId || entry.operation != .upsert || entry.entityId != entity.id {
                            problems.append("\(entity.name): the sync id \(syncId) names the outbox entry \(mid), which it cannot merge into")
                        }
                    } else {
                        problems.append("\(entity.name): the sync id \(syncId) names the outbox entry \(mid), which is not stored")
                    }
                }
            }
        }
        for problem in problems { report(problem) }
    }
}
