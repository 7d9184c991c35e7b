// The Live Queries article's examples: change sets, a list controller driving a table view,
// and observable objects in SwiftUI views. SwiftUI and UIKit are not on Linux: the stand-ins
// in UIStandIns.swift have the same shapes, so the code compiles there too. The loops that
// follow the store forever are compiled, not run; the live objects are checked.
import Coffer
import DocSupport
import Foundation
#if canImport(SwiftUI)
import SwiftUI
#endif
#if canImport(UIKit)
import UIKit
#endif

struct Message: Entity {
    var id: Id = 0
    @Index var conversation: Id
    var position: Int
    var text: String
    var isUnread = true
}

/// What the first example updates: a badge with a count.
final class Badge { var count = 0 }

/// The first example: follows the store until the task is cancelled.
func followChanges(_ messages: Box<Message>, badge: Badge) async throws {
    // Ids put and removed, one value per commit that touched the entity.
    for await change in messages.changes() {
        print(change.inserted, change.updated, change.removed)
    }

    // A query's result now, then again after each commit that changes it (a commit that does
    // not change it yields nothing). Ordering, offset/limit, links and projections work.
    let unread = try messages.query { Message.isUnread == true }.ordered(by: Message.position).build()
    for try await list in unread.results() { badge.count = list.count }
    for try await rows in unread.select(Message.text).results() { print(rows) }
}

/// The second example: a controller driving a table view.
@MainActor func driveTable(_ messages: Box<Message>, id: Id, tableView: UITableView) async throws {
    let conversation = try messages.query { Message.conversation == id }
        .ordered(by: Message.position)
        .build()
    let controller = try QueryController(conversation, window: -25, updatable: [Message.isUnread, Message.text])

    // Data source: ready as soon as the controller exists.
    let rows = controller.count               // rows in the window
    let fourth = controller.object(at: 3)      // nil outside the window
    let shown = controller.objects             // the window, in the query's order
    let all = controller.totalCount            // all matches ("load earlier messages" when larger)

    for try await change in controller.changes() {
        tableView.performBatchUpdates {
            tableView.deleteRows(at: change.deleted.map { IndexPath(row: $0, section: 0) }, with: .fade)
            tableView.insertRows(at: change.inserted.map { IndexPath(row: $0, section: 0) }, with: .fade)
            tableView.reloadRows(at: change.updated.map { IndexPath(row: $0, section: 0) }, with: .none)
            for move in change.moved {
                tableView.moveRow(at: IndexPath(row: move.from, section: 0), to: IndexPath(row: move.to, section: 0))
            }
        }
    }

    controller.window = -50           // load more: the next change inserts rows 0..<25
    _ = (rows, fourth, shown, all)
}

try enterWorkplace("Live")
let store = try Store(directory: "messages.coffer")
var thread = [Message(conversation: 1, position: 1, text: "Hi"), Message(conversation: 1, position: 2, text: "Hello", isUnread: false)]
try store.box(for: Message.self).put(&thread)

// Made once, where the app keeps its model (the objects are Sendable; views just read them):
let messages = store.box(for: Message.self)
let inbox = LiveResults(try messages.query().ordered(by: Message.position).build())
let unread = LiveValue(count: try messages.query { Message.isUnread == true }.build())

struct InboxView: View {
    let messages: Box<Message>
    let inbox: LiveResults<Message>
    let unread: LiveValue<Message, Int>

    var body: some View {
        List(inbox.objects, id: \.id) { message in
            NavigationLink(message.text) { MessageView(detail: LiveObject(messages, id: message.id)) }
        }
        .navigationTitle("Inbox (\(unread.value ?? 0))")
        .overlay { if let error = inbox.error { Text(String(describing: error)) } }
    }
}

struct MessageView: View {
    @State var detail: LiveObject<Message>
    var body: some View { Text(detail.object?.text ?? "Deleted") }
}

check(inbox.objects.map(\.text) == ["Hi", "Hello"] && unread.value == 1, "the live objects are loaded at once")
let view = InboxView(messages: messages, inbox: inbox, unread: unread)
_ = view
try store.close()
try leaveWorkplace()
