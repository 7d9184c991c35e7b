@testable import Coffer
import Foundation
import Testing

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
