import Coffer
import CofferSync
import Foundation

/// The model of the scope tests: posts in rooms (the scope "room" of `Post`, with a wake key
/// per room), and topics a post links to (the scope "named" of `Topic`, without one).
enum Scoped {
    @Sync
    struct Topic: Entity {
        var id: Id = 0
        var name = ""
    }

    @Sync
    struct Post: Entity {
        var id: Id = 0
        var room = ""
        var body = ""
        var topic: ToOne<Scoped.Topic> = nil
    }

    static let scopes = [
        SyncScope(Post.self, name: "room", where: "r.room = scope.parameters ->> 'room'", watching: ["room"],
                  wake: .init(row: "r.room", parameters: "scope.parameters ->> 'room'")),
        SyncScope(Topic.self, name: "named", where: "r.name = scope.parameters ->> 'name'"),
    ]

    static func room(_ name: String) -> SyncSubscription { SyncSubscription(Post.self, scope: "room", parameters: ["room": name]) }
    static func topic(_ name: String) -> SyncSubscription { SyncSubscription(Topic.self, scope: "named", parameters: ["name": name]) }
}
