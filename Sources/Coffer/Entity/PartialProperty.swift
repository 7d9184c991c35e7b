/// A property of `Root` whose value type is not known: lets one list hold properties of
/// different value types, as `QueryController`'s `updatable` does.
///
/// ```swift
/// let watched: [any PartialProperty<Message>] = [Message.isUnread, Message.position]
/// let controller = try QueryController(query, window: -25, updatable: watched)
/// ```
public protocol PartialProperty<Root>: Sendable {
    /// The entity the property belongs to.
    associatedtype Root: Entity

    /// The position of the property in `Root._cofferSchema.properties`.
    ///
    /// ```swift
    /// (Message.position as any PartialProperty<Message>).index
    /// ```
    var index: Int { get }
}

extension Property: PartialProperty {
    /// The entity the property belongs to.
    ///
    /// ```swift
    /// let root: Person.Type = Property<Person, Int>.Root.self
    /// ```
    public typealias Root = E
}
