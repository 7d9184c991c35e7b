import Foundation

/// A to-many relation: either a standalone many-to-many relation stored in its own tables
/// (`var teachers: ToMany<Teacher> = []`), or, with `@Backlink`, the read side of another
/// entity's `ToOne` or many-to-many `ToMany`.
///
/// ```swift
/// var ada = Student(name: "Ada")
/// ada.teachers.append(Teacher(name: "Grace"))   // unsaved: stored when the owner is put
/// try students.put(&ada)                        // stores Grace and the relation
/// try ada.teachers.remove(at: 0)
/// try students.put(&ada)                        // removes the relation (Grace stays)
/// ```
///
/// ```swift
/// struct Customer: Entity {
///     var id: Id = 0
///     @Index var name: String
///     @Backlink(\Order.customer) var orders: ToMany<Order> = []
/// }
///
/// let joe = try customers.get(joeId)
/// for order in joe?.orders ?? [] { print(order.total) }   // loaded on first use
/// ```
///
/// The elements are loaded from the store the owner was read from, once, on first access.
/// Changes (`append`, `remove(at:)`, `removeAll()`) are applied to a many-to-many relation
/// when the owner is put; on a `@Backlink` they only change this copy: change such a relation
/// through its owning side.
///
/// Changes are recorded as changes, not as a new list: `append` adds one pair and
/// `remove(at:)` removes one when the owner is put, whatever else is stored. So a collection
/// whose elements could not be loaded (the store was closed, a record is damaged) never
/// replaces the stored relation with what it happens to hold: `append` works without
/// loading, `remove(at:)` throws the load error, and iterating it gives no elements (use
/// ``load()`` to see the error).
public struct ToMany<Target: Entity>: Sendable, ExpressibleByArrayLiteral, RandomAccessCollection, CustomStringConvertible {
    var storage: ToManyStorage<Target>
    /// What changed since the collection was made: applied (again) whenever the owner is
    /// put, which is harmless because applying is idempotent, and makes a put after a
    /// rolled-back transaction apply them again.
    var changes: ToManyChanges<Target>?

    /// A fixed list, for building objects (a stored owner's backlink is read from the store).
    /// A non-empty list replaces the relation when the owner is put.
    ///
    /// ```swift
    /// var orders: ToMany<Order> = []
    /// ```
    public init(arrayLiteral elements: Target...) {
        storage = ToManyStorage(elements: elements)
        changes = elements.isEmpty ? nil : ToManyChanges(replacesAll: true, added: elements)
    }

    init(loader: @escaping @Sendable () throws -> [Target]) {
        storage = ToManyStorage(loader: loader)
    }

    /// The elements, loading them if needed; throws what loading throws (iteration gives an
    /// empty collection instead).
    ///
    /// ```swift
    /// let orders = try customer.orders.load()
    /// ```
    public func load() throws -> [Target] { try storage.load() }

    /// The first position.
    ///
    /// ```swift
    /// customer.orders.startIndex
    /// ```
    public var startIndex: Int { 0 }
    /// One past the last position.
    ///
    /// ```swift
    /// customer.orders.endIndex
    /// ```
    public var endIndex: Int { ((try? storage.load()) ?? []).count }
    /// The element at `position`.
    ///
    /// ```swift
    /// customer.orders[0]
    /// ```
    public subscript(position: Int) -> Target { ((try? storage.load()) ?? [])[position] }

    /// Adds an object (an unsaved one is stored when the owner is put). Needs no load.
    ///
    /// ```swift
    /// student.teachers.append(grace)
    /// ```
    public mutating func append(_ target: Target) {
        let previous = storage
        storage = ToManyStorage { try previous.load() + [target] }
        var recorded = changes ?? ToManyChanges()
        recorded.added.append(target)
        changes = recorded
    }

    /// Removes and returns the element at `position` (the object itself stays stored).
    ///
    /// ```swift
    /// let dropped = try student.teachers.remove(at: 0)
    /// ```
    ///
    /// - Throws: what loading the elements throws, or
    ///   ``CofferError/misuse(_:)`` (`.positionOutOfRange`) for a position outside the collection.
    @discardableResult
    public mutating func remove(at position: Int) throws -> Target {
        var elements = try storage.load()
        guard elements.indices.contains(position) else {
            throw CofferError.misuse(.positionOutOfRange(entity: Target._cofferSchema.name, position: position, count: elements.count))
        }
        let removed = elements.remove(at: position)
        storage = ToManyStorage(elements: elements)
        var recorded = changes ?? ToManyChanges()
        recorded.recordRemoval(removed)
        changes = recorded
        return removed
    }

    /// Removes every element (the objects themselves stay stored). Needs no load.
    ///
    /// ```swift
    /// student.teachers.removeAll()
    /// ```
    public mutating func removeAll() {
        storage = ToManyStorage(elements: [])
        changes = ToManyChanges(replacesAll: true)
    }

    /// `ToMany<Order>(3 elements)`, or `(not loaded)` before first use.
    /// ```swift
    /// print(customer.orders)
    /// ```
    public var description: String {
        storage.isLoaded ? "ToMany<\(Target.self)>(\(count) elements)" : "ToMany<\(Target.self)>(not loaded)"
    }
}

/// The changes made to a `ToMany` since it was made or loaded.
struct ToManyChanges<Target: Entity>: Sendable {
    /// The relation becomes exactly `added` (a list literal, `removeAll()`).
    var replacesAll = false
    var added: [Target] = []
    var removedIds: [Id] = []

    /// Records a removal: an element added since undoes that addition, a stored one is
    /// removed from the relation.
    mutating func recordRemoval(_ target: Target) {
        if target.id == 0 {
            if let index = added.firstIndex(where: { $0.id == 0 }) { added.remove(at: index) }
            return
        }
        added.removeAll { $0.id == target.id }
        if !replacesAll { removedIds.append(target.id) }
    }
}

/// The lazily loaded elements of a `ToMany`, shared by its copies.
final class ToManyStorage<Target: Entity>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Target]?
    private let loader: (@Sendable () throws -> [Target])?

    init(elements: [Target]) {
        self.elements = elements
        loader = nil
    }

    init(loader: @escaping @Sendable () throws -> [Target]) {
        elements = nil
        self.loader = loader
    }

    var isLoaded: Bool {
        lock.lock(); defer { lock.unlock() }
        return elements != nil
    }


    func load() throws -> [Target] {
        lock.lock()
        if let elements {
            lock.unlock()
            return elements
        }
        lock.unlock()
        // Loading runs a query: not under the lock, so it may join a transaction of this thread.
        let loaded = try loader?() ?? []
        lock.lock(); defer { lock.unlock() }
        if elements == nil { elements = loaded }
        return elements ?? loaded
    }
}

extension ToMany {
    /// The backlink of `link` for the owner the reader is decoding; called by generated code.
    ///
    /// ```swift
    /// orders: ToMany.cofferBacklink(Order.customer, from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferBacklink<Owner: Entity>(_ link: Property<Target, ToOne<Owner>>, from reader: _RecordReader) -> ToMany {
        let store = reader.binding.store
        let ownerId = reader.id
        let position = link.index
        return ToMany {
            try store.box(for: Target.self).query { QueryCondition(position, .compare(.equal), [.unsigned(ownerId)]) }.build().find()
        }
    }
}

extension ToMany {
    /// The many-to-many relation at `position` of the owner the reader is decoding; called by
    /// generated code.
    ///
    /// ```swift
    /// teachers: ToMany.cofferManyToMany(position: 2, from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferManyToMany(position: Int, from reader: _RecordReader) -> ToMany {
        let binding = reader.binding
        let store = binding.store
        let ownerId = reader.id
        guard let tables = binding.relationTables[position] else { return [] }
        // An app's merge sees each side's targets of a relation both sides changed.
        if let view = Transaction.current(for: store)?.sync.mergeRelationViews?[position] {
            return ToMany { try store.box(for: Target.self).get(view) }
        }
        return ToMany {
            let ids = try store.performRead { transaction in try transaction.relatedIds(tables.forward, of: ownerId, owner: tables.owner) }
            return try store.box(for: Target.self).get(ids)
        }
    }

    /// The reverse side of `link`, a many-to-many relation of `Target`; called by generated
    /// code for `@Backlink(\Student.teachers)`.
    ///
    /// ```swift
    /// students: ToMany.cofferBacklink(Student.teachers, from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferBacklink<Owner: Entity>(_ link: Property<Target, ToMany<Owner>>, from reader: _RecordReader) -> ToMany {
        let store = reader.binding.store
        let ownerId = reader.id
        let position = link.index
        return ToMany {
            let ids: [Id] = try store.performRead { transaction in
                guard let binding = try store.binding(for: Target.self, in: transaction),
                      let tables = binding.relationTables[position] else { return [] }
                return try transaction.relatedIds(tables.reverse, of: ownerId, owner: tables.owner)
            }
            return try store.box(for: Target.self).get(ids)
        }
    }

    /// Makes the stored relation equal this collection, storing unsaved elements first;
    /// called by generated code after the owner is put.
    ///
    /// ```swift
    /// try entity.teachers.cofferApply(owner: Student.self, position: 2, ownerId: entity.id, in: store)
    /// ```
    @_spi(CofferGenerated)
    public mutating func cofferApply<Owner: Entity>(owner: Owner.Type, position: Int, ownerId: Id, in store: Store) throws {
        guard var recorded = changes else { return }
        var newlyStored: [Int] = []
        try store.performWrite { transaction in
            let binding = try store.writableBinding(for: Owner.self, in: transaction)
            guard let tables = binding.relationTables[position] else {
                throw CofferError.misuse(.notARelation(entity: Owner._cofferSchema.name, position: position))
            }
            let box = store.box(for: Target.self)
            // Unsaved elements, and elements whose first put was rolled back, are stored now.
            for index in recorded.added.indices where try recorded.added[index].id == 0 || !box.contains(recorded.added[index].id) {
                if recorded.added[index].id == 0 { newlyStored.append(index) }
                try box.put(&recorded.added[index])
            }
            let added = Set(recorded.added.map(\.id))
            let current = Set(try transaction.relatedIds(tables.forward, of: ownerId, owner: tables.owner))
            let removed = recorded.replacesAll ? current.subtracting(added) : Set(recorded.removedIds).intersection(current)
            let linked = added.subtracting(current)
            for target in linked.sorted() { try transaction.addRelation(tables, owner: ownerId, target: target) }
            for target in removed.sorted() { try transaction.removeRelation(tables, owner: ownerId, target: target) }
            if binding.syncTables != nil, !linked.isEmpty || !removed.isEmpty {
                try transaction.recordSyncedRelationChange(ownerId, field: tables.field, binding: binding)
            }
        }
        // The elements stored just now carry their new ids, in the view too (its unsaved
        // elements are the added ones that had no id, in the same order).
        if recorded.replacesAll {
            storage = ToManyStorage(elements: recorded.added)
        } else if !newlyStored.isEmpty {
            let stored = newlyStored.map { recorded.added[$0] }
            let previous = storage
            storage = ToManyStorage {
                var assigned = stored.makeIterator()
                return try previous.load().map { $0.id == 0 ? (assigned.next() ?? $0) : $0 }
            }
        }
        changes = recorded
    }
}

/// Follows a many-to-many relation forward (`link(Student.teachers)`: students with a
/// matching teacher) or backward (`link(Teacher.students)`: teachers with a matching student).
struct ManyToManyLink<Owner: Entity, Other: Entity>: QueryLink {
    let position = 0   // the result's id
    let propertyName: String
    /// The relation's owner entity and property position.
    let relationPosition: Int
    /// true: the query's entity owns the relation; false: it is the relation's target.
    let forward: Bool
    let other: ConditionNode?

    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode {
        var otherIds: [Id] = []
        try store.forEachMatch(of: Other.self, where: other) { match, _ in otherIds.append(match.id) }
        var ids = Set<Id>()
        try store.performRead { transaction in
            let ownerBinding: EntityBinding?
            if forward {
                ownerBinding = try store.binding(for: Owner.self, in: transaction)
            } else {
                ownerBinding = try store.binding(for: Other.self, in: transaction)
            }
            guard let tables = ownerBinding?.relationTables[relationPosition] else { return }
            for id in otherIds {
                // forward: other ids are targets -> owners via the reverse table; backward: owners -> targets.
                ids.formUnion(try transaction.relatedIds(forward ? tables.reverse : tables.forward, of: id, owner: tables.owner))
            }
        }
        return .leaf(ConditionLeaf(position: 0, op: .inList, values: ids.sorted().map { .unsigned($0) }, caseSensitive: true))
    }

    var summary: String {
        let condition = other.map { Describe.node($0, schema: Other._cofferSchema) } ?? "any"
        return "link \(propertyName) \(forward ? "->" : "<-") \(Other._cofferSchema.name) where \(condition) (through the relation's \(forward ? "reverse" : "forward") table)"
    }

    var invalid: String? { other?.firstInvalid }

    /// Relation rows are recorded as changes of their owner.
    var dependencies: Set<String> {
        Set([Owner._cofferSchema.storedName, Other._cofferSchema.storedName]).union(other?.linkDependencies ?? [])
    }
}

/// Follows a backlink: owners that some object matching the condition links to.
struct BacklinkLink<Source: Entity, Owner: Entity>: QueryLink {
    let position = 0   // the owner's id
    let propertyName: String
    let linkPosition: Int
    let linkName: String
    let source: ConditionNode?

    func condition(in transaction: Transaction, store: Store) throws -> ConditionNode {
        var owners = Set<Id>()
        try store.forEachMatch(of: Source.self, where: source) { match, binding in
            let record = RecordFields(bytes: match.record, entity: binding.schema.name, id: match.id)
            guard let field = try record.field(binding.storedIds[linkPosition]) else { return }
            guard let owner = FieldValue.unsigned(field.kind, field.payload) else {
                throw record.damage("the link \(linkName) holds a \(field.kind) value, not an id")
            }
            owners.insert(owner)
        }
        let ids: [QueryValue] = owners.sorted().map { .unsigned($0) }
        return .leaf(ConditionLeaf(position: 0, op: .inList, values: ids, caseSensitive: true))
    }

    var summary: String {
        let condition = source.map { Describe.node($0, schema: Source._cofferSchema) } ?? "any"
        return "link \(propertyName) <- \(Source._cofferSchema.name).\(linkName) where \(condition) (their \(linkName) ids looked up in the table)"
    }

    var invalid: String? { source?.firstInvalid }

    var dependencies: Set<String> {
        Set([Source._cofferSchema.storedName]).union(source?.linkDependencies ?? [])
    }
}

extension QueryBuilder {
    /// Keeps the objects related to at least one object matching `condition`: across a
    /// many-to-many `ToMany`, or a `@Backlink` of a `ToOne` or of a many-to-many relation.
    ///
    /// ```swift
    /// let big = try customers.query().link(Customer.orders) { Order.total > 100 }.build()
    /// let taughtByGrace = try students.query().link(Student.teachers) { Teacher.name == "Grace" }.build()
    /// ```
    public func link<Source: Entity>(_ property: Property<E, ToMany<Source>>, _ condition: () -> QueryCondition<Source>) -> QueryBuilder<E> {
        var copy = self
        let step = property.linked(condition).node
        copy.condition = copy.condition.map { $0.and(step) } ?? step
        return copy
    }
}

extension Property {
    /// A condition that holds for the objects related to at least one object matching
    /// `condition`, across a many-to-many `ToMany` or a `@Backlink`. Unlike the builder's
    /// `link(_:_:)`, it combines with other conditions in any way, `||` and `!` included.
    ///
    /// ```swift
    /// let query = try customers.query {
    ///     Customer.name.startsWith("J") || Customer.orders.linked { Order.total > 100 }
    /// }.build()
    /// ```
    public func linked<Source: Entity>(_ condition: () -> QueryCondition<Source>) -> QueryCondition<E> where Value == ToMany<Source> {
        if schema.flags.contains(.toMany) {
            return QueryCondition(.link(LinkStep(link: ManyToManyLink<E, Source>(
                propertyName: name, relationPosition: index, forward: true, other: condition().node))))
        }
        guard let linkName = schema.backlinkProperty,
              let linkPosition = Source._cofferSchema.properties.firstIndex(where: { $0.name == linkName }) else {
            return QueryCondition(.invalid("\(self) is not a backlink"))
        }
        if Source._cofferSchema.properties[linkPosition].flags.contains(.toMany) {
            return QueryCondition(.link(LinkStep(link: ManyToManyLink<Source, Source>(
                propertyName: name, relationPosition: linkPosition, forward: false, other: condition().node))))
        }
        return QueryCondition(.link(LinkStep(link: BacklinkLink<Source, E>(
            propertyName: name, linkPosition: linkPosition, linkName: linkName, source: condition().node))))
    }
}
