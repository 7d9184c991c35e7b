import Foundation

/// A link from one object to one object of `Target`, stored as the target's id (indexed).
///
/// ```swift
/// struct Order: Entity {
///     var id: Id = 0
///     var total: Double
///     var customer: ToOne<Customer> = nil
/// }
///
/// var order = Order(total: 9.5)
/// order.customer.target = Customer(name: "Joe")   // not stored yet
/// try orders.put(&order)                            // stores Joe first, in the same transaction
/// let loaded = try orders.get(order.id)
/// loaded?.customer.target?.name                     // "Joe", loaded from the store on first use
/// ```
///
/// Removing the target clears every `ToOne` that pointed to it, in the same transaction, so a
/// stored link never dangles.
public struct ToOne<Target: Entity>: Sendable, ExpressibleByNilLiteral {
    /// The id of the linked object, or nil for no link.
    ///
    /// ```swift
    /// order.customer.targetId = joe.id
    /// ```
    public var targetId: Id? {
        didSet { if assigned?.id != targetId { assignedBox = nil } }
    }

    /// A target assigned through ``target``, boxed so that an entity can link to its own type
    /// (a struct cannot contain itself directly).
    var assignedBox: TargetBox<Target>?
    var assigned: Target? {
        get { assignedBox?.value }
        set { assignedBox = newValue.map(TargetBox.init) }
    }
    /// The store the owner was loaded from, for lazy loading.
    let store: Store?

    /// No link.
    ///
    /// ```swift
    /// var customer: ToOne<Customer> = nil
    /// ```
    public init(nilLiteral: ()) {
        targetId = nil
        assignedBox = nil
        store = nil
    }

    /// A link to `target`; an unsaved target (id 0) is stored when the owner is put.
    ///
    /// ```swift
    /// Order(total: 1, customer: ToOne(joe))
    /// ```
    public init(_ target: Target?) {
        targetId = target.flatMap { $0.id == 0 ? nil : $0.id }
        assignedBox = target.map(TargetBox.init)
        store = nil
    }

    /// A link to the object with `id`.
    ///
    /// ```swift
    /// Order(total: 1, customer: ToOne(id: 7))
    /// ```
    public init(id: Id?) {
        targetId = id == 0 ? nil : id
        assignedBox = nil
        store = nil
    }

    init(id: Id, store: Store) {
        targetId = id
        assignedBox = nil
        self.store = store
    }

    /// The linked object: the one assigned, or, for an owner read from a store, the one stored
    /// under ``targetId`` (loaded on each read; nil when it does not exist or cannot be read —
    /// use ``loadTarget()`` to see errors). Setting it links to that object.
    ///
    /// ```swift
    /// print(order.customer.target?.name ?? "none")
    /// order.customer.target = grace
    /// ```
    public var target: Target? {
        get { (try? loadTarget()) ?? nil }
        set {
            targetId = newValue.flatMap { $0.id == 0 ? nil : $0.id }
            assigned = newValue
        }
    }

    /// The linked object, throwing what reading it throws.
    ///
    /// ```swift
    /// let customer = try order.customer.loadTarget()
    /// ```
    public func loadTarget() throws -> Target? {
        if let assigned { return assigned }
        guard let targetId, let store else { return nil }
        return try store.box(for: Target.self).get(targetId)
    }

    /// Stores an assigned target that is not stored yet, in the owner's transaction; called
    /// by generated code before the owner is put. A target holding an id that no stored
    /// object has (its first put was rolled back) is stored under that id, as it would have
    /// been the first time.
    ///
    /// ```swift
    /// try entity.customer.cofferStoreTarget(in: store)
    /// ```
    @_spi(CofferGenerated)
    public mutating func cofferStoreTarget(in store: Store) throws {
        guard var pending = assigned else { return }
        let box = store.box(for: Target.self)
        if pending.id != 0, try box.contains(pending.id) { return }
        try box.put(&pending)
        assigned = pending
        targetId = pending.id
    }
}

extension ToOne: RecordValue {
    /// Writes the target id (nothing for no link).
    ///
    /// ```swift
    /// order.customer.cofferWrite(3, to: &writer)
    /// ```
    @_spi(CofferGenerated)
    public func cofferWrite(_ field: Int, to writer: inout RecordWriter) {
        if let targetId { writer.writeUnsigned(field, targetId) }
    }

    /// Reads a link bound to the store of the record.
    ///
    /// ```swift
    /// ToOne<Customer>.cofferRead(from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferRead(from reader: _RecordReader) -> ToOne? {
        guard let id = reader.unsignedValue else { return nil }
        return ToOne(id: id, store: reader.binding.store)
    }
}

extension ToOne: CustomStringConvertible {
    /// `ToOne<Customer>(7)` or `ToOne<Customer>(nil)`.
    /// ```swift
    /// print(order.customer)
    /// ```
    public var description: String { "ToOne<\(Target.self)>(\(targetId.map(String.init) ?? "nil"))" }
}

// MARK: Conditions on links

extension Property {
    /// The link points to the object with `id`.
    ///
    /// ```swift
    /// Order.customer == joe.id
    /// ```
    public static func == <T>(lhs: Property, rhs: Id) -> QueryCondition<E> where Value == ToOne<T> {
        QueryCondition(lhs.index, .compare(.equal), [.unsigned(rhs)])
    }
    /// The link does not point to `id` (no link counts as not pointing).
    ///
    /// ```swift
    /// Order.customer != joe.id
    /// ```
    public static func != <T>(lhs: Property, rhs: Id) -> QueryCondition<E> where Value == ToOne<T> {
        QueryCondition(lhs.index, .compare(.notEqual), [.unsigned(rhs)])
    }
    /// The link points to one of the ids.
    ///
    /// ```swift
    /// Order.customer.isIn([1, 2])
    /// ```
    public func isIn<T>(_ ids: [Id]) -> QueryCondition<E> where Value == ToOne<T> {
        QueryCondition(index, .inList, ids.map { .unsigned($0) })
    }
}

/// An immutable holder for an assigned link target.
final class TargetBox<Value: Sendable>: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
