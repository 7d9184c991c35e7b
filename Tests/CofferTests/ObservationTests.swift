@testable import Coffer
import Foundation
import Testing

/// Waits for the controller's next change; fails (instead of hanging) after a generous
/// safety limit. Not a timing assertion: a correct controller answers at once.
func nextChange<E>(_ controller: QueryController<E>) async throws -> QueryChange<E> {
    try await withThrowingTaskGroup(of: QueryChange<E>?.self) { group in
        group.addTask {
            var iterator = controller.changes().makeAsyncIterator()
            return try await iterator.next()
        }
        group.addTask {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return try #require(first, "the controller emitted no change")
    }
}

/// Applies a change set to the previous window the way a list view does (see
/// `QueryChange`) and returns the rows it ends with.
func apply<E: Entity>(_ change: QueryChange<E>, to old: [E]) -> [E] {
    var rows = old
    for index in (change.deleted + change.moved.map(\.from)).sorted(by: >) { rows.remove(at: index) }
    let insertions = change.inserted.map { ($0, change.objects[$0]) }
        + change.moved.map { ($0.to, $0.isUpdated ? change.objects[$0.to] : old[$0.from]) }
    for (index, row) in insertions.sorted(by: { $0.0 < $1.0 }) { rows.insert(row, at: index) }
    for index in change.updated {
        if let now = rows.firstIndex(where: { $0.id == old[index].id }) { rows[now] = change.objects[now] }
    }
    return rows
}

@Suite struct CommitNotificationTests {
    @Test func everyKindOfWritePublishesItsIdsOnce() throws {
        try withStore { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let messages = store.box(for: Message.self)
            let accounts = store.box(for: Account.self)
            let profiles = store.box(for: Profile.self)
            let contacts = store.box(for: Contact.self)
            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)

            func last(_ name: String) -> ChangeSet.EntityChanges { recorded.last.entities[name] ?? .init() }

            let a = try messages.put(Message(conversation: 1, position: 1))
            #expect(last("Message").inserted == [a] && recorded.count == 1)
            let batch = try messages.put([Message(conversation: 1, position: 2), Message(conversation: 1, position: 3)])
            #expect(last("Message").inserted == Set(batch) && recorded.count == 2)
            try messages.remove(a)
            #expect(last("Message").removed == [a])
            #expect(try messages.query { Message.position == 2 }.build().remove() == 1)
            #expect(last("Message").removed == [batch[0]])
            try messages.removeAll()
            #expect(last("Message").removed == [batch[1]])
            let countBefore = recorded.count
            try messages.removeAll()   // nothing to remove: nothing published
            #expect(recorded.count == countBefore)

            let first = try accounts.put(Account(handle: "ada"))
            let second = try accounts.put(Account(handle: "ada"))   // .replace: first is removed
            #expect(last("Account").removed == [first] && last("Account").inserted == [second])
            let profile = try profiles.put(Profile(key: "k"))
            _ = try profiles.put(Profile(key: "k"))                 // .update: same object
            #expect(last("Profile").put == [profile] && last("Profile").inserted.isEmpty)
            var contact = Contact(externalId: "x")
            let contactId = try contacts.upsert(&contact, by: Contact.externalId)
            var again = Contact(externalId: "x", age: 3)
            _ = try contacts.upsert(&again, by: Contact.externalId)
            #expect(last("Contact").put == [contactId] && last("Contact").inserted.isEmpty)

            var order = Order(date: Date(), total: 5)
            order.customer.targetId = try customers.put(Customer(name: "Joe"))
            let orderId = try orders.put(&order)
            try customers.remove(try #require(order.customer.targetId))
            #expect(last("Customer").removed == [order.customer.targetId])
            #expect(last("Order").put == [orderId], "the rewrite that cleared the link is published")

            var student = Student(name: "s")
            let studentId = try students.put(&student)
            var teacher = Teacher(name: "t")
            let teacherId = try teachers.put(&teacher)
            student.teachers.append(teacher)
            _ = try students.put(&student)
            #expect(last("Student").put == [studentId])
            try teachers.remove(teacherId)
            #expect(last("Teacher").removed == [teacherId])
            #expect(last("Student").put == [studentId], "the many-to-many row removed with the teacher")
        }
    }

    @Test func rolledBackAndRetriedWritesPublishOnlyWhatCommitted() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let messages = store.box(for: Message.self)
            #expect(throws: Boom.self) {
                try store.write {
                    try messages.put(Message(conversation: 1, position: 1))
                    throw Boom()
                }
            }
            #expect(recorded.count == 0)
            // About 8 MB in one transaction: the 1 MiB map grows several times and the
            // closure runs again each time; one change set is published, for the last run.
            let text = String(repeating: "x", count: 2_000)
            var runs = 0
            let ids = try store.write { () throws -> [Id] in
                runs += 1
                return try messages.put((0..<4_000).map { Message(conversation: 2, position: $0, text: text) })
            }
            #expect(runs > 1)
            #expect(recorded.count == 1)
            #expect(recorded.last.entities["Message"]?.inserted == Set(ids))
        }
    }

    @Test func oneWriteWithManyOperationsIsOneChangeSet() throws {
        try withStore { (store: Store) throws in
            let recorded = Recorder()
            let token = store.addChangeHandler { recorded.append($0) }
            defer { store.removeChangeHandler(token) }
            let messages = store.box(for: Message.self)
            let notes = store.box(for: Note.self)
            try store.write {
                let a = try messages.put(Message(conversation: 1, position: 1))
                try messages.put(Message(conversation: 1, position: 2))
                try messages.remove(a)   // inserted and removed: in neither list
                try notes.put(Note(title: "n"))
            }
            #expect(recorded.count == 1)
            #expect(recorded.last.entities["Message"]?.inserted.count == 1)
            #expect(recorded.last.entities["Message"]?.removed.isEmpty == true)
            #expect(recorded.last.entities["Note"]?.inserted.count == 1)
        }
    }

    @Test func writeThatBeganBeforeTheFirstObserverPublishesAnUnknownChange() throws {
        try withStore { (store: Store) throws in
            let messages = store.box(for: Message.self)
            let recorded = Recorder()
            var token = 0
            try store.write {
                try messages.put(Message(conversation: 1, position: 1))
                // Subscribes while a transaction that records nothing is running.
                token = store.addChangeHandler { recorded.append($0) }
            }
            defer { store.removeChangeHandler(token) }
            #expect(recorded.count == 1)
            #expect(recorded.last.isComplete == false)
        }
    }
}

@Suite struct BoxChangesTests {
    @Test func deliversOneValuePerCommitAndUnsubscribesWhenTheLoopEnds() async throws {
        // Exact values, one commit at a time.
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            var iterator = messages.changes().makeAsyncIterator()
            let id = try messages.put(Message(conversation: 1, position: 1))
            #expect(await iterator.next() == ObjectChanges(inserted: [id], updated: [], removed: []))
            _ = try messages.put(Message(id: id, conversation: 1, position: 2))
            #expect(await iterator.next() == ObjectChanges(inserted: [], updated: [id], removed: []))
            try await store.write { try messages.remove(id) }   // async writes publish too
            #expect(await iterator.next() == ObjectChanges(inserted: [], updated: [], removed: [id]))
            // A dropped iterator (a loop that ended) unsubscribes.
            do {
                var loop = messages.changes().makeAsyncIterator()
                #expect(store.changeHandlerCount == 2)
                try messages.put(Message(conversation: 1, position: 3))
                _ = await loop.next()
            }
            #expect(store.changeHandlerCount == 1)
        }
    }

    @Test func slowConsumerGetsTheMissedCommitsCoalesced() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            var iterator = messages.changes().makeAsyncIterator()
            var ids: [Id] = []
            for position in 0..<500 { ids.append(try messages.put(Message(conversation: 1, position: position))) }
            try messages.remove(ids[0])
            _ = try messages.put(Message(id: ids[1], conversation: 1, position: -1))
            let change = await iterator.next()
            #expect(change == ObjectChanges(inserted: Array(ids.dropFirst()), updated: [], removed: []))
        }
    }

    @Test func cancellingTheTaskOrClosingTheStoreEndsTheSequence() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let messages = store.box(for: Message.self)
        let cancelled = Task {
            var count = 0
            for await _ in messages.changes() { count += 1 }
            return count
        }
        cancelled.cancel()
        #expect(await cancelled.value == 0)
        let closing = Task {
            var count = 0
            for await _ in messages.changes() { count += 1 }
            return count
        }
        while store.changeHandlerCount == 0 { await Task.yield() }
        try messages.put(Message(conversation: 1, position: 1))
        try store.close()
        let delivered = await closing.value
        #expect(delivered <= 1)
        #expect(store.changeHandlerCount == 0)
    }

    @Test func severalObserversOnDifferentEntities() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let notes = store.box(for: Note.self)
            var first = messages.changes().makeAsyncIterator()
            var second = messages.changes().makeAsyncIterator()
            var third = notes.changes().makeAsyncIterator()
            let (m, n) = try await store.write { (try messages.put(Message(conversation: 1, position: 1)), try notes.put(Note(title: "n"))) }
            #expect(await first.next()?.inserted == [m])
            #expect(await second.next()?.inserted == [m])
            #expect(await third.next()?.inserted == [n])
            #expect(store.changeHandlerCount == 3)
        }
    }
}

@Suite struct QueryResultsTests {
    @Test func yieldsTheCurrentResultThenEveryChangedResult() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let unread = try messages.query { Message.isUnread == true }.ordered(by: Message.position).build()
            var results = unread.results().makeAsyncIterator()
            #expect(try await results.next()?.isEmpty == true)
            let a = try messages.put(Message(conversation: 1, position: 2))
            #expect(try await results.next()?.map(\.id) == [a])
            let read = try messages.put(Message(conversation: 1, position: 0, isUnread: false))   // outside the result
            let b = try messages.put(Message(conversation: 1, position: 1))                       // before a
            #expect(try await results.next()?.map(\.id) == [b, a], "the commit outside the result yielded nothing")
            _ = try messages.put(Message(id: read, conversation: 1, position: 9, isUnread: false))
            _ = try messages.put(Message(id: a, conversation: 1, position: 2, text: "edited"))
            #expect(try await results.next()?.map(\.text) == ["", "edited"])
            _ = try messages.put(Message(id: b, conversation: 1, position: 1))   // same values again
            _ = try messages.put(Message(id: b, conversation: 1, position: 1, isUnread: false))
            #expect(try await results.next()?.map(\.id) == [a])
        }
    }

    @Test func pagesAndLinksAndProjections() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let page = try messages.query().ordered(by: Message.position, flags: .descending).build()
            var latest = page.results(offset: 0, limit: 2).makeAsyncIterator()
            #expect(try await latest.next()?.isEmpty == true)
            for position in 0..<3 { try messages.put(Message(conversation: 1, position: position)) }
            #expect(try await latest.next()?.map(\.position) == [2, 1])
            try messages.put(Message(conversation: 1, position: -5))   // outside the page
            try messages.put(Message(conversation: 1, position: 7))
            #expect(try await latest.next()?.map(\.position) == [7, 2])

            let customers = store.box(for: Customer.self)
            let orders = store.box(for: Order.self)
            let joes = try orders.query { Order.customer.linked { Customer.name == "Joe" } }.build()
            var linked = joes.results().makeAsyncIterator()
            var order = Order(date: Date(), total: 3)
            order.customer.targetId = try customers.put(Customer(name: "Jim"))
            try orders.put(&order)
            #expect(try await linked.next()?.isEmpty == true)
            _ = try customers.put(Customer(id: try #require(order.customer.targetId), name: "Joe"))   // only the linked entity changes
            #expect(try await linked.next()?.map(\.id) == [order.id])

            let totals = try orders.query().build().select(Order.total)
            var rows = totals.results().makeAsyncIterator()
            #expect(try await rows.next()?.map { $0 } == [3])
            order.date = Date(timeIntervalSince1970: 0)   // not selected: no new rows
            try orders.put(&order)
            order.total = 4
            try orders.put(&order)
            #expect(try await rows.next()?.map { $0 } == [4])
        }
    }
}

@Suite struct ObservationRandomizedTests {
    /// Change sets of consecutive commits, coalesced with `append`, equal the change set of
    /// all their operations in one transaction (what a slow observer relies on).
    @Test(arguments: [11, 12, 13] as [UInt64])
    func coalescedChangeSetsEqualOneTransaction(seed: UInt64) {
        var random = SplitMix64(state: seed)
        for _ in 0..<300 {
            var stored = Set<Id>((1...6).filter { _ in Bool.random(using: &random) })
            var whole = ChangeLog()
            var coalesced = ChangeSet()
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                var commit = ChangeLog()
                for _ in 0..<Int.random(in: 0...4, using: &random) {
                    let id = Id.random(in: 1...8, using: &random)
                    if Bool.random(using: &random) {
                        let isInsert = !stored.contains(id)
                        stored.insert(id)
                        commit.recordPut("E", id, isInsert: isInsert)
                        whole.recordPut("E", id, isInsert: isInsert)
                    } else if stored.remove(id) != nil {
                        commit.recordRemove("E", id)
                        whole.recordRemove("E", id)
                    }
                }
                coalesced.append(commit.folded())
            }
            let expected = whole.folded().entities["E"] ?? .init()
            let got = coalesced.entities["E"] ?? .init()
            #expect(got.put == expected.put && got.removed == expected.removed && got.inserted == expected.inserted)
        }
    }

    /// The list diff on random lists: applying it gives the new list, and it moves only the
    /// rows outside a longest increasing run.
    @Test func listDiffRebuildsTheNewListWithMinimalMoves() {
        var random = SplitMix64(state: 5)
        for _ in 0..<2_000 {
            let old = (1...Id(Int.random(in: 1...30, using: &random))).filter { _ in Int.random(in: 0..<4, using: &random) > 0 }.shuffled(using: &random)
            var new = old.filter { _ in Int.random(in: 0..<5, using: &random) > 0 }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                new.insert(Id.random(in: 100...200, using: &random), at: Int.random(in: 0...new.count, using: &random))
            }
            new = Array(NSOrderedSet(array: new).array as! [Id])
            if Bool.random(using: &random), new.count > 1 { new.swapAt(0, new.count - 1) }
            let diff = ListDiff(old: old, new: new)
            var rows = old
            for index in (diff.deleted + diff.moved.map(\.from)).sorted(by: >) { rows.remove(at: index) }
            let insertions = diff.inserted.map { ($0, new[$0]) } + diff.moved.map { ($0.to, old[$0.from]) }
            for (index, id) in insertions.sorted(by: { $0.0 < $1.0 }) { rows.insert(id, at: index) }
            #expect(rows == new)
            let common = new.compactMap { old.firstIndex(of: $0) }
            #expect(diff.moved.count == common.count - ListDiff.longestIncreasingRun(common).count)
            var increasing = 0
            var best: [Int] = []
            for value in common {   // quadratic check of the run's length
                var length = 1
                for (index, earlier) in common.prefix(increasing).enumerated() where earlier < value { length = max(length, best[index] + 1) }
                best.append(length)
                increasing += 1
            }
            #expect(ListDiff.longestIncreasingRun(common).count == (best.max() ?? 0))
        }
    }

    /// Several tasks write concurrently (async writes) while a controller follows: every
    /// change set applies to the previous window, and once the writers are done the window
    /// is the query's.
    @Test func concurrentWritersAndOneController() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            let query = try messages.query { Message.conversation == 1 }.ordered(by: Message.position).build()
            let controller = try QueryController(query, window: 20, updatable: [Message.position, Message.isUnread])
            let writers = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            var random = SplitMix64(state: UInt64(writer))
                            for step in 0..<150 {
                                let conversation = Int.random(in: 1...2, using: &random)
                                let position = Int.random(in: 1...1_000, using: &random)
                                let victim = Id.random(in: 1...600, using: &random)
                                try await store.write {
                                    try messages.put(Message(conversation: conversation, position: position, text: "\(writer)-\(step)"))
                                    if step % 3 == 0 { try messages.remove(victim) }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // A sentinel at the top of the window marks the end of the writes.
                try await store.write { try messages.put(Message(conversation: 1, position: 0, text: "last")) }
            }
            var shown = controller.objects
            var applied = 0
            while shown.first?.text != "last" {
                let change = try await nextChange(controller)
                applied += 1
                #expect(apply(change, to: shown).map(\.id) == change.objects.map(\.id))
                shown = change.objects
            }
            try await writers.value
            #expect(shown == (try query.find(offset: 0, limit: 20)))
            #expect(applied > 1)
        }
    }

    /// A write transaction that began before the controller existed and commits after its
    /// first snapshot is not lost (its change set names no ids: the controller runs again).
    @Test func writeBegunBeforeTheControllerIsSeen() async throws {
        try await withStore { (store: Store) async throws in
            let messages = store.box(for: Message.self)
            try messages.put(Message(conversation: 1, position: 5))
            let inside = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            let writer = Thread {
                do {
                    try store.write {
                        try messages.put(Message(conversation: 1, position: 1))
                        inside.signal()
                        proceed.wait()
                    }
                } catch {
                    Issue.record(error)
                }
            }
            writer.start()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { inside.wait(); continuation.resume() }
            }
            let controller = try QueryController(messages.query().ordered(by: Message.position).build())
            #expect(controller.count == 1)
            proceed.signal()
            let change = try await nextChange(controller)
            #expect(change.inserted == [0] && change.objects.map(\.position) == [1, 5])
        }
    }
}


/// The sequences are used from the main actor the way an app's view model would.
@MainActor @Suite struct MainActorObservationTests {
    @Test func iteratesFromTheMainActor() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        let messages = store.box(for: Message.self)
        let controller = try QueryController(messages.query().ordered(by: Message.position).build(), window: 5)
        var changes = controller.changes().makeAsyncIterator()
        var results = try messages.query().build().results().makeAsyncIterator()
        var ids = messages.changes().makeAsyncIterator()
        #expect(try await results.next()?.isEmpty == true)
        let id = try await store.write { try messages.put(Message(conversation: 1, position: 1)) }
        #expect(try await changes.next()?.inserted == [0])
        #expect(try await results.next()?.map(\.id) == [id])
        #expect(await ids.next()?.inserted == [id])
        try store.close()
    }
}
