@_spi(CofferSync) @testable import Coffer
import CofferTestSupport
import Foundation
import Observation
import Testing

/// The `@Observable` live objects, observed the way SwiftUI observes them
/// (`withObservationTracking`), on the main actor.
@MainActor @Suite struct LiveObjectTests {
    /// Every kind of commit reaches the live objects once per commit, with the state the
    /// commit left: puts, a batch, a removal, a query's removal, an upsert, a unique replace,
    /// a relation change, an import, a pulled sync page. Each step checks the objects against
    /// the store; the delivery counts show that no commit was delivered twice (a second
    /// delivery of one commit would show the old state at the next step).
    @Test func everyKindOfCommitReachesTheLiveObjectsOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        try register(Synced.Task.self, in: store)
        let messages = store.box(for: Message.self)
        let accounts = store.box(for: Account.self)
        let contacts = store.box(for: Contact.self)
        let students = store.box(for: Student.self)
        let teachers = store.box(for: Teacher.self)
        let tasks = store.box(for: Synced.Task.self)

        let ordered = try messages.query().ordered(by: Message.position).build()
        let list = LiveResults(ordered)
        let unread = LiveValue(count: try messages.query { Message.isUnread == true }.build())
        let accountList = LiveResults(try accounts.query().ordered(by: Account.handle).build())
        let contactList = LiveResults(try contacts.query().ordered(by: Contact.age).build())
        let links = LiveValue(try students.query().build()) { try $0.find().map(\.teachers.count) }
        let taskCount = LiveValue(count: try tasks.query().build())
        #expect(list.objects.isEmpty && unread.value == 0 && links.value == [])

        let first = try await changing(list.objects) { try messages.put(Message(conversation: 1, position: 1)) }
        #expect(list.objects == (try ordered.find()))
        try await until { unread.value == 1 }
        let detail = LiveObject(messages, id: first)
        #expect(detail.object?.position == 1)
        try await changing(list.objects) { _ = try messages.put([Message(conversation: 1, position: 3), Message(conversation: 1, position: 2)]) }
        #expect(list.objects.map(\.position) == [1, 2, 3])
        try await until { unread.value == 3 }
        try await changing(detail.object) {
            var read = try #require(try messages.get(first))
            read.text = "edited"
            try messages.put(read)
        }
        #expect(detail.object?.text == "edited")
        try await until { list.objects.first?.text == "edited" }
        try await changing(unread.value) {
            var read = try #require(try messages.get(first))
            read.isUnread = false
            try messages.put(read)
        }
        #expect(unread.value == 2)
        try await until { list.objects.first?.isUnread == false && detail.object?.isUnread == false }
        try await changing(detail.object) { try messages.remove(first) }
        #expect(detail.object == nil)
        try await until { list.objects.map(\.position) == [2, 3] }
        try await changing(list.objects) { _ = try messages.query { Message.position == 2 }.build().remove() }
        #expect(list.objects.map(\.position) == [3])
        try await until { unread.value == 1 }

        let replaced = try await changing(accountList.objects) { try accounts.put(Account(handle: "ada", balance: 1)) }
        try await changing(accountList.objects) { _ = try accounts.put(Account(handle: "ada", balance: 2)) }   // replaces
        #expect(accountList.objects.map(\.balance) == [2] && accountList.objects.first?.id != replaced)

        var contact = Contact(externalId: "x", age: 1)
        try await changing(contactList.objects) { _ = try contacts.upsert(&contact, by: Contact.externalId) }
        var again = Contact(externalId: "x", age: 5)
        try await changing(contactList.objects) { _ = try contacts.upsert(&again, by: Contact.externalId) }
        #expect(contactList.objects.map(\.age) == [5])
        try await changing(contactList.objects) {
            try store.importObjects(entity: "Contact", jsonLines: Data(#"{"externalId": "y", "age": 9}"#.utf8 + [10] + #"{"externalId": "z", "age": 7}"#.utf8))
        }
        #expect(contactList.objects.map(\.age) == [5, 7, 9])

        var student = Student(name: "s")
        try await changing(links.value) { try students.put(&student) }
        var teacher = Teacher(name: "t")
        try teachers.put(&teacher)
        try await changing(links.value) {
            student.teachers.append(teacher)
            try students.put(&student)
        }
        #expect(links.value == [1])
        try await changing(links.value) { try teachers.remove(teacher.id) }
        #expect(links.value == [0])

        var page = PageBuilder()
        page.upsert(UUID(), clock: HybridClock.value(milliseconds: HybridClock.systemMilliseconds()), origin: UUID(),
                    fields: [("title", "\"pulled\"")])
        try await changing(taskCount.value) { _ = try store.applyPulledPage(page.page(), entity: "Task", stream: PageBuilder.stream) }
        #expect(taskCount.value == 1)

        // One more commit for each: a commit delivered twice before it would have been counted.
        try await changing(list.objects) { try messages.put(Message(conversation: 2, position: 9)) }
        try await until { unread.value == 2 }
        try await changing(accountList.objects) { try accounts.put(Account(handle: "bob")) }
        try await changing(contactList.objects) { try contacts.put(Contact(externalId: "w", age: 11)) }
        try await changing(links.value) { try students.put(Student(name: "other")) }
        try await changing(taskCount.value) { try tasks.put(Synced.Task(title: "local")) }
        #expect(list.driver.deliveries == 7 && detail.driver.deliveries == 3 && unread.driver.deliveries == 5)
        #expect(accountList.driver.deliveries == 3 && contactList.driver.deliveries == 4)
        #expect(links.driver.deliveries == 4 && taskCount.driver.deliveries == 2)
        #expect([list.error, detail.error, unread.error, links.error, taskCount.error].allSatisfy { $0 == nil })
    }

    /// A window follows its controller: inserts at the end push the oldest out, and growing
    /// the window brings rows back, each reported in `lastChange`.
    @Test func aLiveWindowReportsTheControllersChanges() async throws {
        try await withStoreAsync { store in
            let messages = store.box(for: Message.self)
            try messages.put((1...5).map { Message(conversation: 1, position: $0) })
            let chat = LiveWindow(try messages.query().ordered(by: Message.position).build(), window: -3)
            #expect(chat.objects.map(\.position) == [3, 4, 5] && chat.totalCount == 5 && chat.lastChange == nil)
            try await changing(chat.objects) { try messages.put(Message(conversation: 1, position: 6)) }
            #expect(chat.objects.map(\.position) == [4, 5, 6] && chat.totalCount == 6)
            #expect(chat.lastChange?.inserted == [2] && chat.lastChange?.deleted == [0])
            try await changing(chat.objects) { chat.window = -5 }
            #expect(chat.objects.map(\.position) == [2, 3, 4, 5, 6] && chat.lastChange?.inserted == [0, 1])
        }
    }

    /// Setting the query, the page or the id re-targets at once, and commits that concern only
    /// the old target change nothing.
    @Test func changingTheQueryOrTheIdRetargets() async throws {
        try await withStoreAsync { store in
            let messages = store.box(for: Message.self)
            let ids = try messages.put((1...6).map { Message(conversation: $0 % 2, position: $0) })
            let odd = try messages.query { Message.conversation == 1 }.ordered(by: Message.position).build()
            let even = try messages.query { Message.conversation == 0 }.ordered(by: Message.position).build()
            let list = LiveResults(odd)
            let detail = LiveObject(messages, id: ids[0])
            let count = LiveValue(count: odd)
            #expect(list.objects.map(\.position) == [1, 3, 5] && count.value == 3)
            list.query = even
            count.query = even
            detail.id = ids[1]
            #expect(list.objects.map(\.position) == [2, 4, 6] && detail.object?.position == 2 && count.value == 3)
            list.limit = 2
            #expect(list.objects.map(\.position) == [2, 4])
            list.offset = 1
            #expect(list.objects.map(\.position) == [4, 6])
            // Only the new targets: a change of an odd message, then one of an even one.
            try messages.put(Message(conversation: 1, position: 7))
            try await changing(list.objects) { try messages.put(Message(conversation: 0, position: 5)) }
            #expect(list.objects.map(\.position) == [4, 5] && list.driver.deliveries == 1)
            try await until { count.value == 4 }
            #expect(detail.driver.deliveries == 0 && count.driver.deliveries == 1)
        }
    }

    /// A failure is kept in `error`, not thrown; observation stops, and re-targeting starts
    /// it again.
    @Test func aFailureIsKeptInErrorAndRetargetingRecovers() async throws {
        try await withStoreAsync { store in
            let messages = store.box(for: Message.self)
            try messages.put(Message(conversation: 1, position: 1))
            let list = LiveResults(try messages.query().build(), offset: -1)
            #expect(list.error as? CofferError == .invalidPaging(entity: "Message", offset: -1, limit: nil))
            list.offset = 0
            #expect(list.error == nil && list.objects.count == 1)
            let failing = LiveValue(try messages.query().build()) { query -> Int in
                if try query.count() > 1 { throw CofferError.misuse(.observeInsideTransaction(path: "test")) }
                return try query.count()
            }
            try await changing(failing.error.map { "\($0)" }) { try messages.put(Message(conversation: 1, position: 2)) }
            #expect(failing.value == 1 && failing.error != nil)
        }
    }

    /// While the main actor is busy, commits coalesce: 50 commits made without yielding
    /// reach the list in at most two deliveries, the last with the final state.
    @Test func aBusyMainActorGetsCoalescedUpdates() async throws {
        try await withStoreAsync { store in
            let messages = store.box(for: Message.self)
            let list = LiveResults(try messages.query().ordered(by: Message.position).build())
            for position in 1...50 { try messages.put(Message(conversation: 1, position: position)) }
            try await until { list.objects.count == 50 }
            #expect(list.driver.deliveries <= 2)
            #expect(list.objects.map(\.position) == Array(1...50))
        }
    }

    /// Dropping a live object stops its observation: nothing keeps it alive (no cycle through
    /// its task) and the store forgets its handler.
    @Test func droppingALiveObjectStopsObserving() async throws {
        try await withStoreAsync { store in
            let messages = store.box(for: Message.self)
            weak var dropped: LiveResults<Message>?
            weak var droppedWindow: LiveWindow<Message>?
            do {
                let list = LiveResults(try messages.query().build())
                let window = LiveWindow(try messages.query().build(), window: 5)
                try await changing(list.objects) { try messages.put(Message(conversation: 1, position: 1)) }
                dropped = list
                droppedWindow = window
                #expect(store.changeHandlerCount == 2)
            }
            #expect(dropped == nil && droppedWindow == nil)
            try await until { store.changeHandlerCount == 0 }
        }
    }

    /// Closing the store ends observation; the last objects stay.
    @Test func closingTheStoreKeepsTheLastObjects() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let messages = store.box(for: Message.self)
        try messages.put(Message(conversation: 1, position: 1))
        let list = LiveResults(try messages.query().build())
        try store.close()
        try await until { store.changeHandlerCount == 0 }
        #expect(list.objects.count == 1 && list.error == nil)
    }

    /// The child: commits one message to the store the parent observes and reports when.
    @Test func externalWriterChild() throws {
        guard ChildProcess.role == "live-writer", let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        try store.box(for: Message.self).put(Message(conversation: 7, position: 1, text: "from the child"))
        ChildProcess.report("committed \(DispatchTime.now().uptimeNanoseconds)")
        try store.close()
    }

    /// Another process's commit reaches the live objects and `box.changes()`: by the periodic
    /// check (a short interval here), and, with the check off, when the app asks. The time
    /// from the child's commit to the updated object is printed (not asserted).
    @Test(arguments: [Duration?.some(.milliseconds(50)), nil])
    func commitsOfAnotherProcessAreObserved(interval: Duration?) async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path,
                              options: StoreOptions(durability: .noSync, externalCommitCheckInterval: interval))
        defer { try? store.close() }
        let messages = store.box(for: Message.self)
        try messages.put(Message(conversation: 1, position: 1))
        let list = LiveResults(try messages.query().ordered(by: Message.conversation).build())
        let count = LiveValue(count: try messages.query().build())
        var changes = messages.changes().makeAsyncIterator()
        let (child, pipe) = try ChildProcess.start(filter: "externalWriterChild", role: "live-writer", directory: directory.path)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let committedAt = try #require(output.split(separator: "\n").compactMap { line in
            line.hasPrefix("committed ") ? UInt64(line.dropFirst("committed ".count)) : nil
        }.first)
        if interval == nil {
            #expect(list.objects.count == 1, "nothing checks by itself")
            try store.checkForExternalCommits()
        }
        try await until { list.objects.count == 2 }
        let latency = Double(DispatchTime.now().uptimeNanoseconds &- committedAt) / 1e6
        print("commit in another process -> live object updated: \(latency) ms (check interval \(String(describing: interval)))")
        #expect(list.objects.last?.text == "from the child")
        try await until { count.value == 2 }
        let change = await changes.next()
        #expect(change?.isComplete == false, "another process's ids are not known")
        #expect(list.driver.deliveries == 1 && count.driver.deliveries == 1)
    }

    /// The objects can live on an actor of the app's choosing: they change there.
    @Test func anotherActorReceivesTheUpdates() async throws {
        try await withStoreAsync { store in
            let messages = store.box(for: Message.self)
            let model = ModelActor()
            let list = LiveResults(try messages.query().build(), on: model)
            try messages.put(Message(conversation: 1, position: 1))
            try await until { await model.count(of: list) == 1 }
        }
    }
}

/// An actor that owns live objects, as an app's model actor would.
actor ModelActor {
    func count(of list: LiveResults<Message>) -> Int { list.objects.count }
}

/// Runs `action`, then waits until what `read` reads changes (observed with
/// `withObservationTracking`, as SwiftUI observes); returns the action's value. Fails after a
/// generous safety limit instead of hanging.
@MainActor @discardableResult
func changing<T, Observed>(_ read: @autoclosure @escaping () -> Observed, _ action: () throws -> T) async throws -> T {
    let signal = ObservationSignal()
    withObservationTracking { _ = read() } onChange: { signal.fire() }
    let value = try action()
    try await signal.wait()
    return value
}

/// Polls `condition` on the main actor until it holds; fails after a safety limit.
@MainActor
func until(_ condition: () async throws -> Bool) async throws {
    for _ in 0..<6000 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the condition never held")
}

/// A one-shot signal from an observation's `onChange` to a waiting test.
final class ObservationSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, Never>?

    func fire() {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            fired = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume()
    }

    func wait() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.lock.withLock { () -> Bool in
                        if self.fired { return true }
                        self.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return false
            }
            let fired = try await group.next() ?? false
            group.cancelAll()
            if !fired { self.fire() }
            #expect(fired, "the observed value never changed")
        }
    }
}

/// A store in a fresh directory for an async test body, closed afterwards.
@MainActor
func withStoreAsync(_ body: (Store) async throws -> Void) async throws {
    let directory = TemporaryDirectory()
    defer { directory.cleanUp() }
    let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
    defer { try? store.close() }
    try await body(store)
}
