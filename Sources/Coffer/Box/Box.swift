import CLMDB

/// The objects of one entity type in a store: put, get and remove them.
///
/// Get a box from the store; it is a cheap `Sendable` value, so keep it or ask again.
/// Every call runs in its own transaction, or joins the `store.read { }` / `store.write { }`
/// the calling thread is inside.
///
/// ```swift
/// let people = store.box(for: Person.self)
/// var ada = Person(firstName: "Ada", age: 36)
/// try people.put(&ada)                 // ada.id is assigned
/// let same = try people.get(ada.id)
/// try people.remove(ada.id)
/// ```
public struct Box<E: Entity>: Sendable {
    /// The store the box belongs to.
    ///
    /// ```swift
    /// try people.store.write { ... }
    /// ```
    public let store: Store

    @usableFromInline
    init(store: Store) {
        self.store = store
    }

    /// Runs `body` in a read transaction with the entity's binding, or returns `empty`
    /// when the entity has no table in the snapshot.
    func reading<T>(empty: @autoclosure () -> T, _ body: (Transaction, EntityBinding) throws -> T) throws -> T {
        if let current = Transaction.current(for: store) {
            guard let binding = try store.binding(for: E.self, in: current) else { return empty() }
            return try body(current, binding)
        }
        try store.prepareForReading(E.self)
        return try store.performRead { transaction in
            guard let binding = try store.binding(for: E.self, in: transaction) else { return empty() }
            return try body(transaction, binding)
        }
    }

    /// Runs `body` in a write transaction with the entity's binding.
    func writing<T>(_ body: (Transaction, EntityBinding) throws -> T) throws -> T {
        try store.performWrite { transaction in
            try body(transaction, try store.writableBinding(for: E.self, in: transaction))
        }
    }
}
