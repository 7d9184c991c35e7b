/// The entity bindings one transaction has looked up or created. Stored inline in
/// `Transaction`: repeated box calls inside one `read`/`write` skip the store's lock, and
/// a loop of calls on one box skips the hashing too.
///
/// Invariants: `cached` entries are never replaced (only all forgotten, when the
/// transaction changes the schema); `last` is one of them. `created` holds the bindings a
/// write transaction registered; they become the store's when it commits.
struct TransactionBindings {
    private var cached: [ObjectIdentifier: EntityBinding] = [:]
    private var last: (key: ObjectIdentifier, binding: EntityBinding)?
    /// Entity bindings created by this transaction; they become the store's on commit.
    private(set) var created: [ObjectIdentifier: EntityBinding] = [:]

    /// The binding of the entity type `key` this transaction already looked up.
    @inline(__always)
    mutating func cachedBinding(_ key: ObjectIdentifier) -> EntityBinding? {
        if let last, last.key == key { return last.binding }
        guard let known = cached[key] else { return nil }
        last = (key, known)
        return known
    }

    /// Remembers a binding looked up from the store.
    mutating func cache(_ binding: EntityBinding, for key: ObjectIdentifier) {
        cached[key] = binding
    }

    /// The binding this transaction created for `key`, if any.
    func createdBinding(_ key: ObjectIdentifier) -> EntityBinding? {
        created[key]
    }

    /// Remembers a binding this transaction registered.
    mutating func noteCreated(_ binding: EntityBinding, for key: ObjectIdentifier) {
        created[key] = binding
    }

    /// Forgets the looked-up bindings: the transaction changed the schema, so they bind
    /// again before their next use.
    mutating func forgetCached() {
        cached.removeAll()
        last = nil
    }
}
