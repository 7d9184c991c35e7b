import Coffer
import Foundation

struct Conversation: Entity {
    var id: Id = 0
    @Unique var identifier: String
    var title: String
    @Backlink(\Message.conversation) var messages: ToMany<Message> = []
}

struct Message: Entity {
    var id: Id = 0
    var conversation: ToOne<Conversation> = nil
    @Index var position: Int
    var sender: String
    var text: String
    var isUnread: Bool = true
    @CreatedAt var sentAt: Date = .distantPast
}
