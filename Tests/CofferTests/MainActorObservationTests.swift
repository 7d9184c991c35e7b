@testable import Coffer
import Foundation
import Testing

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
