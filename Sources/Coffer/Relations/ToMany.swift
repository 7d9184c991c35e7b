import Foundation

/// The objects of `Target` whose `ToOne` points at this object: the read side of a link,
/// declared with `@Backlink`.
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
/// The elements are loaded from the store the owner was read from, once, on first access,
/// through the link's index. Change the relation through the `ToOne` side.
public struct ToMany<Target: Entity>: Sendable, ExpressibleByArrayLiteral, RandomAccessCollection, CustomStringConvertible {
    let storage: ToManyStorage<Target>

    /// A fixed list, for building objects (a stored owner's backlink is read from the store).
    ///
    /// ```swift
    /// var orders: ToMany<Order> = []
    /// ```
    public init(arrayLiteral elements: Target...) {
        storage = ToManyStorage(elements: elements)
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

    /// The first position. ```swift customer.orders.startIndex ```
    public var startIndex: Int { 0 }
    /// One past the last position. ```swift customer.orders.endIndex ```
    public var endIndex: Int { ((try? storage.load()) ?? []).count }
    /// The element at `position`. ```swift customer.orders[0] ```
    public subscript(position: Int) -> Target { ((try? storage.load()) ?? [])[position] }

    /// `ToMany<Order>(3 elements)`, or `(not loaded)` before first use.
    /// ```swift print(customer.orders) ```
    public var description: String {
        storage.isLoaded ? "ToMany<\(Target.self)>(\(count) elements)" : "ToMany<\(Target.self)>(not loaded)"
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
    public static func cofferBacklink<Owner: Entity>(_ link: Property<Target, ToOne<Owner>>, from reader: RecordReader) -> ToMany {
        let store = reader.binding.takeUnretainedValue().store
        let ownerId = reader.id
        let position = link.index
        return ToMany {
            try store.box(for: Target.self).query { QueryCondition(position, .compare(.equal), [.unsigned(ownerId)]) }.build().find()
        }
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
        let box = store.box(for: Source.self)
        let inner = Query(box: box, condition: source, orders: [])
        let ids: [QueryValue] = try box.reading(empty: []) { transaction, binding in
            var owners = Set<Id>()
            let storedId = binding.storedIds[linkPosition]
            for match in try inner.matches(in: transaction, binding: binding, offset: 0, limit: nil, needsOrder: false) {
                if let field = RecordFields(bytes: match.record).field(storedId),
                   let owner = FieldValue.unsigned(field.kind, field.payload) { owners.insert(owner) }
            }
            return owners.sorted().map { .unsigned($0) }
        }
        return .leaf(ConditionLeaf(position: 0, op: .inList, values: ids, caseSensitive: true))
    }

    var summary: String {
        let condition = source.map { Describe.node($0, schema: Source.cofferSchema) } ?? "any"
        return "link \(propertyName) <- \(Source.cofferSchema.name).\(linkName) where \(condition) (their \(linkName) ids looked up in the table)"
    }

    var invalid: String? { source?.firstInvalid }
}

extension QueryBuilder {
    /// Keeps the objects that at least one object matching `condition` links to, following
    /// a `@Backlink` (the `ToOne` it names, through the table of the other side).
    ///
    /// ```swift
    /// let big = try customers.query().link(Customer.orders) { Order.total > 100 }.build()
    /// ```
    public func link<Source: Entity>(_ property: Property<E, ToMany<Source>>, _ condition: () -> QueryCondition<Source>) -> QueryBuilder<E> {
        var copy = self
        guard let linkName = property.schema.backlinkProperty,
              let linkPosition = Source.cofferSchema.properties.firstIndex(where: { $0.name == linkName }) else {
            copy.condition = (copy.condition.map { $0.and(.invalid("\(property) is not a backlink")) }) ?? .invalid("\(property) is not a backlink")
            return copy
        }
        copy.links.append(BacklinkLink<Source, E>(propertyName: property.name, linkPosition: linkPosition,
                                                  linkName: linkName, source: condition().node))
        return copy
    }
}
