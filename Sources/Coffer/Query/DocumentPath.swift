/// Properties whose values are documents, queried by path: ``JSONValue``,
/// `[String: String]`, `[String: Int]`, `[String: Double]`, `[String: Bool]` and optionals.
///
/// ```swift
/// Conversation.metadata["backgroundColor"].isIn(["red", "blue"])
/// ```
public protocol DocumentProperty {}
extension JSONValue: DocumentProperty {}
extension Dictionary: DocumentProperty where Key == String, Value: DocumentScalar {}
extension Optional: DocumentProperty where Wrapped: DocumentProperty {}
extension Array: DocumentProperty where Element: EmbeddedDocument {}

extension Property where Value: DocumentProperty {
    /// The value under `key` in each object's document, for conditions.
    ///
    /// ```swift
    /// let query = try conversations.query { Conversation.metadata["first"]["second"]["third"] == "NestedResult" }.build()
    /// ```
    public subscript(key: String) -> DocumentPath<E> { DocumentPath(position: index, path: [key]) }
}

/// A path into a document property (`Conversation.metadata["first"]["second"]`): conditions
/// on the value found there.
///
/// Rules: a path that names nothing (a missing key, a step into a non-object, or `null`) is
/// nil, so `isNil()` holds and comparisons do not (`!=` does). A value compares with the
/// operand when both are numbers (integers and doubles alike), strings or booleans; an array
/// at the path matches `==`/`isIn` when one of its elements does, and `containsElement` and
/// `count` look at its elements. Document paths are not indexed: the condition is checked on
/// each record (combine it with an indexed condition to narrow the scan).
public struct DocumentPath<E: Entity>: Sendable {
    let position: Int
    let path: [String]

    /// The value under `key` one level deeper.
    ///
    /// ```swift
    /// Conversation.metadata["first"]["second"]
    /// ```
    public subscript(key: String) -> DocumentPath<E> { DocumentPath(position: position, path: path + [key]) }

    func condition(_ op: ConditionOp, _ values: [QueryValue]) -> QueryCondition<E> {
        var leaf = ConditionLeaf(position: position, op: op, values: values, caseSensitive: true)
        leaf.path = path
        return QueryCondition(.leaf(leaf))
    }

    /// Equal to `value`.
    ///
    /// ```swift
    /// Conversation.metadata["color"] == "red"
    /// ```
    public static func == <V: QueryableValue>(lhs: Self, rhs: V) -> QueryCondition<E> { lhs.condition(.compare(.equal), [rhs._queryValue]) }
    /// Not equal (also nil).
    ///
    /// ```swift
    /// Conversation.metadata["color"] != "red"
    /// ```
    public static func != <V: QueryableValue>(lhs: Self, rhs: V) -> QueryCondition<E> { lhs.condition(.compare(.notEqual), [rhs._queryValue]) }
    /// Less than.
    ///
    /// ```swift
    /// Conversation.metadata["priority"] < 3
    /// ```
    public static func < <V: QueryableValue>(lhs: Self, rhs: V) -> QueryCondition<E> { lhs.condition(.compare(.less), [rhs._queryValue]) }
    /// Less than or equal.
    ///
    /// ```swift
    /// Conversation.metadata["priority"] <= 3
    /// ```
    public static func <= <V: QueryableValue>(lhs: Self, rhs: V) -> QueryCondition<E> { lhs.condition(.compare(.lessOrEqual), [rhs._queryValue]) }
    /// Greater than.
    ///
    /// ```swift
    /// Conversation.metadata["priority"] > 3
    /// ```
    public static func > <V: QueryableValue>(lhs: Self, rhs: V) -> QueryCondition<E> { lhs.condition(.compare(.greater), [rhs._queryValue]) }
    /// Greater than or equal.
    ///
    /// ```swift
    /// Conversation.metadata["priority"] >= 3
    /// ```
    public static func >= <V: QueryableValue>(lhs: Self, rhs: V) -> QueryCondition<E> { lhs.condition(.compare(.greaterOrEqual), [rhs._queryValue]) }

    /// One of `values`.
    ///
    /// ```swift
    /// Conversation.metadata["backgroundColor"].isIn(["red", "blue"])
    /// ```
    public func isIn<V: QueryableValue>(_ values: [V]) -> QueryCondition<E> { condition(.inList, values.map(\._queryValue)) }

    /// The path names nothing.
    ///
    /// ```swift
    /// Conversation.metadata["archived"].isNil()
    /// ```
    public func isNil() -> QueryCondition<E> { condition(.isNil, []) }

    /// The path names a value.
    ///
    /// ```swift
    /// Conversation.metadata["archived"].isNotNil()
    /// ```
    public func isNotNil() -> QueryCondition<E> { condition(.isNotNil, []) }

    /// An array at the path holds `element`.
    ///
    /// ```swift
    /// Conversation.metadata["tags"].containsElement("ops")
    /// ```
    public func containsElement<V: QueryableValue>(_ element: V) -> QueryCondition<E> { condition(.containsElement, [element._queryValue]) }
}
