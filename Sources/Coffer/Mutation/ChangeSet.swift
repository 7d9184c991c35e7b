/// The objects one write transaction changed, per entity: what commits publish.
///
/// Invariants (checked by the randomized tests against snapshots taken before and after):
/// - `removed` holds exactly the ids stored before the transaction and not after it.
/// - `put` holds every id stored after the transaction whose record it wrote (inserted or
///   updated, including records rewritten because a link target was removed or a relation
///   row changed), and no id that is not stored after it.
/// - An object inserted and removed in the same transaction appears in neither.
///
/// The mutation path (`Box.put`/`remove`, `removeAll`, link clearing, relation changes)
/// appends to a `ChangeLog` (an append costs a few nanoseconds, so writes stay fast when
/// nobody observes); the log is folded into a change set after the commit, only when a
/// handler wants it. A retried transaction (map growth) starts from an empty log.
struct ChangeSet: Sendable, Equatable {
    /// Changes to one entity, by stored entity name.
    struct EntityChanges: Sendable, Equatable {
        var put: Set<Id> = []
        var removed: Set<Id> = []
        /// Ids inserted by this transaction (not stored before it).
        var inserted: Set<Id> = []
    }

    var entities: [String: EntityChanges] = [:]

    var isEmpty: Bool { entities.values.allSatisfy { $0.put.isEmpty && $0.removed.isEmpty } }

    /// Records that the record of `id` was written; `isInsert` when no record existed.
    mutating func recordPut(_ entity: String, _ id: Id, isInsert: Bool) {
        entities[entity, default: EntityChanges()].recordPut(id, isInsert: isInsert)
    }

    /// Records that the record of `id` was removed.
    mutating func recordRemove(_ entity: String, _ id: Id) {
        entities[entity, default: EntityChanges()].recordRemove(id)
    }
}

extension ChangeSet.EntityChanges {
    mutating func recordPut(_ id: Id, isInsert: Bool) {
        // Removed, then stored again under the same id: it existed before, so an update.
        if removed.remove(id) == nil, isInsert { inserted.insert(id) }
        put.insert(id)
    }

    mutating func recordRemove(_ id: Id) {
        put.remove(id)
        // Inserted by this transaction: as if it never existed.
        if inserted.remove(id) == nil { removed.insert(id) }
    }
}

/// The changes of one transaction in the order they happened.
struct ChangeLog {
    enum Kind: UInt8 {
        case insert, update, remove
    }

    struct Entry {
        let entity: String
        let id: Id
        let kind: Kind
    }

    private(set) var entries: [Entry] = []
    /// Off when nobody listened as the transaction began: then recording costs one branch
    /// and no memory (a million-object batch would otherwise keep a million entries).
    let isRecording: Bool

    init(isRecording: Bool = true) {
        self.isRecording = isRecording
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Records that the record of `id` was written; `isInsert` when no record existed.
    @inline(__always)
    mutating func recordPut(_ entity: String, _ id: Id, isInsert: Bool) {
        if isRecording { entries.append(Entry(entity: entity, id: id, kind: isInsert ? .insert : .update)) }
    }

    /// Records that the record of `id` was removed.
    @inline(__always)
    mutating func recordRemove(_ entity: String, _ id: Id) {
        if isRecording { entries.append(Entry(entity: entity, id: id, kind: .remove)) }
    }

    /// The net effect, as a change set.
    func folded() -> ChangeSet {
        var set = ChangeSet()
        for entry in entries {
            switch entry.kind {
            case .insert: set.recordPut(entry.entity, entry.id, isInsert: true)
            case .update: set.recordPut(entry.entity, entry.id, isInsert: false)
            case .remove: set.recordRemove(entry.entity, entry.id)
            }
        }
        return set
    }
}
