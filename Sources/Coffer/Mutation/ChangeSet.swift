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
        /// false when another process committed too: the ids it changed are not listed.
        var isComplete = true
    }

    var entities: [String: EntityChanges] = [:]
    /// false when the commit's transaction did not record ids (it began before anyone
    /// observed): the set names nothing, and observers must assume anything changed.
    var isComplete = true

    var isEmpty: Bool { isComplete && entities.values.allSatisfy { $0.put.isEmpty && $0.removed.isEmpty } }

    /// Whether another process committed (found by `Store.checkForExternalCommits()` or
    /// by a commit of this one): the set names nothing of what it changed.
    var isExternal = false

    /// A change set that names no ids: "anything may have changed".
    static let unknown: ChangeSet = { var set = ChangeSet(); set.isComplete = false; return set }()

    /// The commits of other processes: anything may have changed.
    static let external: ChangeSet = { var set = ChangeSet.unknown; set.isExternal = true; return set }()

    /// Appends the net effect of a later commit, so that one set stands for both (what a
    /// slow observer receives: pending change sets coalesce instead of queueing).
    mutating func append(_ later: ChangeSet) {
        let external = isExternal || later.isExternal
        defer { isExternal = external }
        guard isComplete else { return }
        guard later.isComplete else {
            self = .unknown
            return
        }
        for (entity, changes) in later.entities {
            entities[entity, default: EntityChanges()].append(changes)
        }
    }

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

    /// Appends a later commit's changes. Within one folded set `put` and `removed` are
    /// disjoint, so replaying the removals first and then the puts gives the net effect.
    mutating func append(_ later: ChangeSet.EntityChanges) {
        if !later.isComplete { isComplete = false }
        for id in later.removed { recordRemove(id) }
        for id in later.put { recordPut(id, isInsert: later.inserted.contains(id)) }
    }

    /// Whether the set names no change (and no other process's commit).
    var isEmpty: Bool { isComplete && put.isEmpty && removed.isEmpty }
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
    /// Whether the transaction changed anything, recorded or not: an observer that
    /// subscribed while a non-recording transaction ran learns that it must look again.
    private(set) var didChange = false

    init(isRecording: Bool = true) {
        self.isRecording = isRecording
    }

    var isEmpty: Bool { !didChange }

    /// Records that the record of `id` was written; `isInsert` when no record existed.
    @inline(__always)
    mutating func recordPut(_ entity: String, _ id: Id, isInsert: Bool) {
        didChange = true
        if isRecording { entries.append(Entry(entity: entity, id: id, kind: isInsert ? .insert : .update)) }
    }

    /// Records that the record of `id` was removed.
    @inline(__always)
    mutating func recordRemove(_ entity: String, _ id: Id) {
        didChange = true
        if isRecording { entries.append(Entry(entity: entity, id: id, kind: .remove)) }
    }

    /// Records a put of an object of `binding`'s entity; the entity's name is read only
    /// when recording (copying it out cost every put a retain and a release).
    @inline(__always)
    mutating func recordPut(_ binding: EntityBinding, _ id: Id, isInsert: Bool) {
        didChange = true
        if isRecording { entries.append(Entry(entity: binding.schema.storedName, id: id, kind: isInsert ? .insert : .update)) }
    }

    /// Records a removal of an object of `binding`'s entity (see the put above).
    @inline(__always)
    mutating func recordRemove(_ binding: EntityBinding, _ id: Id) {
        didChange = true
        if isRecording { entries.append(Entry(entity: binding.schema.storedName, id: id, kind: .remove)) }
    }

    /// Records a change whose ids were not listed because nobody was recording.
    mutating func recordUnlistedChange() {
        didChange = true
    }

    /// The net effect, as a change set; `ChangeSet.unknown` when ids were not recorded.
    func folded() -> ChangeSet {
        guard isRecording else { return didChange ? .unknown : ChangeSet() }
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
