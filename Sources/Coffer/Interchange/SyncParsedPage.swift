/// A pulled page parsed and checked, not applied yet (``Store/parsePulledPage(_:entity:)``).
///
/// ```swift
/// let parsed = try store.parsePulledPage(page, entity: "Task")
/// if parsed.more { print("next page from", parsed.cursor) }
/// ```
@_spi(CofferSync)
public struct SyncParsedPage {
    let page: PulledPage
    let entity: String

    /// The cursor to pull the next page from (stored when the page is applied).
    ///
    /// ```swift
    /// let next = try await transport.pull(entity: "Task", cursor: parsed.cursor, limit: 1000)
    /// ```
    public var cursor: String { page.cursor }

    /// Whether the server has more changes after this page.
    ///
    /// ```swift
    /// if !parsed.more { print("in step after this page") }
    /// ```
    public var more: Bool { page.more }

    /// Whether rows may have moved into or out of the pulled scope without changing (a
    /// membership the scope depends on changed): the replica compares its ids with the
    /// scope's after applying the page.
    ///
    /// ```swift
    /// if parsed.moved { needsReconciliation = true }
    /// ```
    public var moved: Bool { page.moved }

    /// The key of the server's wake-ups that concern this pull (nil when the server gives
    /// none): a replica that knows the key of everything it pulls waits for those alone.
    ///
    /// ```swift
    /// if let key = parsed.wake { keys[stream] = key }
    /// ```
    public var wake: String? { page.wake }
}
