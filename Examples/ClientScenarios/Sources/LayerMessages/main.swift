import Coffer
import Foundation

// Layer's LYRQueryController scenarios, checked: the program exits with status 1 when an
// expectation fails. Usage: LayerMessages [store-directory]

let directory = CommandLine.arguments.dropFirst().first
    ?? NSTemporaryDirectory() + "layer-messages-\(ProcessInfo.processInfo.processIdentifier).coffer"
var failures = 0

@MainActor func check(_ condition: Bool, _ what: String) {
    print("  \(condition ? "ok  " : "FAIL") \(what)")
    if !condition { failures += 1 }
}

/// Seeds two conversations (synchronous code, so the synchronous `write`).
func seed(_ store: Store) throws -> (Conversation, Box<Message>) {
    let conversations = store.box(for: Conversation.self)
    let messages = store.box(for: Message.self)
    var general = Conversation(identifier: "layer:///conversations/general", title: "General")
    var random = Conversation(identifier: "layer:///conversations/random", title: "Random")
    try store.write {
        try conversations.put(&general)
        try conversations.put(&random)
        for position in 1...40 {
            var message = Message(position: position, sender: position % 2 == 0 ? "ada" : "grace", text: "message \(position)")
            message.conversation = ToOne(general)
            try messages.put(&message)
        }
        var elsewhere = Message(position: 1, sender: "linus", text: "other conversation")
        elsewhere.conversation = ToOne(random)
        try messages.put(&elsewhere)
    }
    return (general, messages)
}

func put(_ message: inout Message, in box: Box<Message>) throws {
    try box.put(&message)
}

@MainActor func scenarios() async throws {
    let store = try Store(directory: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (general, messages) = try seed(store)

    print("The latest 20 messages of a conversation")
    let latest = try messages.query { Message.conversation == general.id }
        .ordered(by: Message.position, flags: .descending)
        .build()
    let page = try latest.find(offset: 0, limit: 20)
    check(page.map(\.position) == Array((21...40).reversed()), "positions 40 down to 21")
    var live = latest.results(limit: 20).makeAsyncIterator()
    check(try await live.next()?.first?.position == 40, "query.results() starts with the current 20")

    print("A controller with a window of -25 and updatable isUnread and position")
    let conversation = try messages.query { Message.conversation == general.id }
        .ordered(by: Message.position)
        .build()
    let controller = try QueryController(conversation, window: -25, updatable: [Message.isUnread, Message.position])
    check(controller.count == 25 && controller.totalCount == 40, "25 of 40 messages in the window")
    check(controller.object(at: 0)?.position == 16 && controller.object(at: 24)?.position == 40, "the last 25, oldest first")
    var changes = controller.changes().makeAsyncIterator()

    var incoming = Message(position: 41, sender: "ada", text: "a new message")
    incoming.conversation = ToOne(general)
    try put(&incoming, in: messages)
    var change = try await changes.next()
    check(change?.inserted == [24] && change?.deleted == [0], "a new message: inserted at 24, the oldest deleted at 0")
    check(try await live.next()?.first?.id == incoming.id, "query.results() re-emits after the commit")

    var bumped = try messages.get(try requireValue(controller.object(at: 2)).id)
    bumped?.position = 99
    if var bumped { try put(&bumped, in: messages) }
    change = try await changes.next()
    check(change?.moved.map(\.from) == [2] && change?.moved.map(\.to) == [24] && change?.inserted == [] && change?.deleted == [],
          "a message moved to the end: one move 2 -> 24")

    var read = try requireValue(controller.object(at: 10))
    read.isUnread = false
    try put(&read, in: messages)
    change = try await changes.next()
    check(change?.updated == [10] && change?.moved == [], "marked read: updated at 10")

    var edited = try requireValue(controller.object(at: 11))
    edited.text = "edited, which no list shows"
    try put(&edited, in: messages)   // text is not updatable: no event
    let removed = try requireValue(controller.object(at: 12))
    try messages.remove(removed.id)
    change = try await changes.next()
    check(change?.deleted == [12] && change?.updated == [] && change?.inserted == [0],
          "the edit of a property outside updatable emitted nothing; the removal deleted row 12 and row 0 came in")

    print("A controller over the unread messages: marking one read deletes its row")
    let unread = try QueryController(messages.query { Message.conversation == general.id && Message.isUnread == true }
        .ordered(by: Message.position).build(), window: -25, updatable: [Message.isUnread, Message.position])
    var unreadChanges = unread.changes().makeAsyncIterator()
    var newest = try requireValue(unread.objects.last)
    newest.isUnread = false
    try put(&newest, in: messages)
    change = try await unreadChanges.next()
    check(change?.deleted == [24] && change?.inserted == [0], "deleted at 24 (and the window took one more from the top)")

    print("Load more: the window grows to -35")
    controller.window = -35
    change = try await changes.next()
    check(change?.inserted == Array(0..<10) && controller.count == 35, "10 earlier messages inserted at the top")

    try store.close()
}

/// `value` or an error naming what was missing.
func requireValue<T>(_ value: T?, _ what: String = "a value") throws -> T {
    guard let value else { throw NSError(domain: "LayerMessages", code: 1, userInfo: [NSLocalizedDescriptionKey: "missing \(what)"]) }
    return value
}

do {
    try await scenarios()
} catch {
    print("error: \(error)")
    exit(1)
}
print(failures == 0 ? "All Layer scenarios passed." : "\(failures) expectation(s) failed.")
exit(failures == 0 ? 0 : 1)
