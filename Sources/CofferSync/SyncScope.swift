@_spi(CofferGenerated) import Coffer
import Foundation

/// A scope the server defines for partial replication: the rows of an entity a
/// subscription with parameters holds (``SyncSubscription``), on top of the caller's
/// row-level security. Installed with the schema (``SyncSchema/init(_:schema:scopes:)``),
/// or in SQL with `coffer_define_scope`.
///
/// The predicate is a SQL boolean expression over the row `r` (the entity's table, columns
/// named as the stored properties) and the subscription's parameters `scope.parameters`
/// (jsonb, every value text). Every role that syncs must be able to read what it reads.
///
/// A row that comes to match the predicate is pulled like any change. A row that stops
/// matching is not in the scope's pages any more, so nothing tells its replicas unless a
/// move is recorded: list every column of the entity the predicate reads in `watching` (a
/// change of one records a move), and every other table the predicate or a policy reads in
/// `tables` (any write to one records a move), such as a membership table. After a move,
/// each replica that pulls the entity compares the ids it holds with the server's.
///
/// A ``Wake`` key narrows the wake-ups: without one, every change of the entity wakes every
/// replica that subscribes to the scope, whatever its parameters; with one, only the
/// subscribers whose key matches a written row's.
///
/// ```swift
/// let byConversation = SyncScope(Message.self, name: "conversation",
///                                where: "r.conversation = (scope.parameters ->> 'id')::uuid",
///                                watching: ["conversation"], tables: ["public.members"],
///                                wake: .init(row: "r.conversation", parameters: "scope.parameters ->> 'id'"))
/// let schema = try SyncSchema([Message.self], scopes: [byConversation])
/// ```
public struct SyncScope: Sendable, Hashable {
    /// The entity's stored name.
    ///
    /// ```swift
    /// byConversation.entity   // "Message"
    /// ```
    public let entity: String
    /// The scope's name (`""`: the whole table).
    ///
    /// ```swift
    /// byConversation.name   // "conversation"
    /// ```
    public let name: String
    /// The SQL filter (nil for the whole table).
    ///
    /// ```swift
    /// byConversation.predicate   // "r.conversation = (scope.parameters ->> 'id')::uuid"
    /// ```
    public let predicate: String?
    /// Columns of the entity's table whose change moves a row into or out of the scope.
    ///
    /// ```swift
    /// byConversation.watchedColumns   // ["conversation"]
    /// ```
    public let watchedColumns: [String]
    /// Other tables (qualified names) whose change may move rows into or out of the scope.
    ///
    /// ```swift
    /// byConversation.watchedTables   // ["public.members"]
    /// ```
    public let watchedTables: [String]
    /// The key that ties a row to the subscriptions it concerns (nil: every subscriber wakes).
    ///
    /// ```swift
    /// byConversation.wake?.row   // "r.conversation"
    /// ```
    public let wake: Wake?

    /// The value, as text, that ties a row to a subscription, written twice: over the row
    /// `r` and over the subscription's `scope.parameters`. It must be equal for every row
    /// the scope's predicate lets through (NULL equals NULL); a row's write then wakes the
    /// subscribers of its value before and after the write. A key that breaks the rule
    /// delays changes until the replica's next poll (``SyncReplica/Options/poll``), never
    /// loses them.
    ///
    /// ```swift
    /// let wake = SyncScope.Wake(row: "r.conversation", parameters: "scope.parameters ->> 'id'")
    /// ```
    public struct Wake: Sendable, Hashable {
        /// The SQL expression over the row `r`.
        ///
        /// ```swift
        /// wake.row   // "r.conversation"
        /// ```
        public let row: String
        /// The SQL expression over `scope.parameters` (jsonb).
        ///
        /// ```swift
        /// wake.parameters   // "scope.parameters ->> 'id'"
        /// ```
        public let parameters: String

        /// A wake key from its two expressions.
        ///
        /// ```swift
        /// SyncScope.Wake(row: "r.room", parameters: "scope.parameters ->> 'room'")
        /// ```
        public init(row: String, parameters: String) {
            self.row = row
            self.parameters = parameters
        }
    }

    /// The scope `name` of `type`'s rows that match `predicate`.
    ///
    /// ```swift
    /// SyncScope(Message.self, name: "conversation", where: "r.conversation = (scope.parameters ->> 'id')::uuid",
    ///           watching: ["conversation"], wake: .init(row: "r.conversation", parameters: "scope.parameters ->> 'id'"))
    /// ```
    public init<E: Entity>(_ type: E.Type, name: String, where predicate: String, watching columns: [String] = [], tables: [String] = [],
                           wake: Wake? = nil) {
        self.init(entity: type._cofferSchema.storedName, name: name, predicate: predicate, watchedColumns: columns, watchedTables: tables,
                  wake: wake)
    }

    /// What moves rows of `type`'s whole table into or out of what a user may see: the
    /// columns and tables the row-level security policies read. Replicas that pull the whole
    /// table then remove the rows a user may no longer see.
    ///
    /// ```swift
    /// SyncScope.wholeTable(Note.self, watching: ["owner"], tables: ["public.shares"])
    /// ```
    public static func wholeTable<E: Entity>(_ type: E.Type, watching columns: [String] = [], tables: [String] = []) -> SyncScope {
        SyncScope(entity: type._cofferSchema.storedName, name: "", predicate: nil, watchedColumns: columns, watchedTables: tables)
    }

    /// A scope by stored names (as `coffer sync` tools, with no Swift types, use it).
    ///
    /// ```swift
    /// SyncScope(entity: "Message", name: "conversation", predicate: "r.conversation = (scope.parameters ->> 'id')::uuid")
    /// ```
    public init(entity: String, name: String, predicate: String?, watchedColumns: [String] = [], watchedTables: [String] = [],
                wake: Wake? = nil) {
        self.entity = entity
        self.wake = wake
        self.name = name
        self.predicate = predicate
        self.watchedColumns = watchedColumns
        self.watchedTables = watchedTables
    }

    /// The statement that defines this scope in `schema` (quoted identifier).
    func defineStatement(schema quoted: String) -> String {
        let array = { (items: [String]) in "ARRAY[" + items.map(SQLText.literal).joined(separator: ", ") + "]::text[]" }
        return "SELECT \(quoted).coffer_define_scope(\(SQLText.literal(entity)), \(SQLText.literal(name)), "
            + (predicate.map(SQLText.literal) ?? "NULL") + ", \(array(watchedColumns)), \(array(watchedTables)), "
            + (wake.map { SQLText.literal($0.row) + ", " + SQLText.literal($0.parameters) } ?? "NULL, NULL") + ")"
    }
}
