@_spi(CofferGenerated) import Coffer
import Foundation

/// A part of an entity's rows that a replica holds: a scope the server defines (with
/// `coffer_define_scope`, or ``SyncScope`` at install) and the parameters of this
/// subscription, which the scope's predicate reads as `scope.parameters ->> 'name'`. The
/// server's row-level security applies on top: a subscription never shows more than the
/// caller may see.
///
/// The scope `""` is the whole table (as the caller's policies show it), which a replica
/// holds of every entity it was given until it subscribes to something else.
///
/// ```swift
/// try await replica.subscribe(SyncSubscription(Message.self, scope: "conversation",
///                                              parameters: ["id": conversation.uuidString]))
/// ```
public struct SyncSubscription: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The entity's stored name.
    ///
    /// ```swift
    /// subscription.entity   // "Message"
    /// ```
    public let entity: String
    /// The scope's name on the server; `""` for the whole table.
    ///
    /// ```swift
    /// subscription.scope   // "conversation"
    /// ```
    public let scope: String
    /// The values the scope's predicate reads (as text: cast them in SQL, for example
    /// `(scope.parameters ->> 'id')::uuid`).
    ///
    /// ```swift
    /// subscription.parameters["id"]
    /// ```
    public let parameters: [String: String]

    /// A subscription to `scope` of `type`'s rows with `parameters`.
    ///
    /// ```swift
    /// let mine = SyncSubscription(Message.self, scope: "conversation", parameters: ["id": id.uuidString])
    /// ```
    public init<E: Entity>(_ type: E.Type, scope: String, parameters: [String: String] = [:]) {
        self.init(entity: type._cofferSchema.storedName, scope: scope, parameters: parameters)
    }

    /// A subscription to `scope` of the entity stored as `entity`.
    ///
    /// ```swift
    /// let mine = SyncSubscription(entity: "Message", scope: "conversation", parameters: ["id": "c1"])
    /// ```
    public init(entity: String, scope: String, parameters: [String: String] = [:]) {
        self.entity = entity
        self.scope = scope
        self.parameters = parameters
    }

    /// The whole table of `type`, as the server's policies show it to the caller.
    ///
    /// ```swift
    /// try await replica.subscribe(.wholeTable(Folder.self))
    /// ```
    public static func wholeTable<E: Entity>(_ type: E.Type) -> SyncSubscription {
        SyncSubscription(type, scope: "")
    }

    /// Whether this is the whole table (scope `""`).
    ///
    /// ```swift
    /// SyncSubscription.wholeTable(Folder.self).isWholeTable   // true
    /// ```
    public var isWholeTable: Bool { scope.isEmpty }

    /// `Message/conversation{"id":"c1"}`.
    ///
    /// ```swift
    /// print(subscription)   // Message/conversation{"id":"c1"}
    /// ```
    public var description: String { "\(entity)/\(scope)\(parametersJSON)" }

    /// The parameters as a JSON object, keys sorted.
    var parametersJSON: String {
        "{" + parameters.sorted { $0.key < $1.key }.map { Self.jsonString($0.key) + ":" + Self.jsonString($0.value) }
            .joined(separator: ",") + "}"
    }

    /// The subscriptions as `coffer_scope_ids` takes them: `[{"scope": ..., "parameters": {...}}]`.
    static func wireJSON(_ subscriptions: [SyncSubscription]) -> String {
        "[" + subscriptions.map { subscription in
            "{\"scope\":" + jsonString(subscription.scope) + ",\"parameters\":" + subscription.parametersJSON + "}"
        }.joined(separator: ",") + "]"
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var json = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": json += "\\" + String(scalar)
            case _ where scalar.value < 0x20: json += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                + String(scalar.value, radix: 16)
            default: json.unicodeScalars.append(scalar)
            }
        }
        return json + "\""
    }
}
