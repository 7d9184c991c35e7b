@testable import Coffer
import Foundation
import Testing

@Suite(.serialized) struct MultiProcessTests {
    /// The child: stores one note in a store the parent has open read-only.
    @Test func writerChild() throws {
        guard ChildProcess.role == "writer", let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        try store.box(for: Person.self).put(Person(firstName: "Grace", lastName: "Hopper", age: 85))
        try store.close()
    }

    @Test func readOnlyStoreSeesEntitiesCreatedByAnotherProcess() throws {
        guard ChildProcess.role == nil else { return }
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        // Created empty, then opened read-only before the entity exists.
        try Store(directory: directory.path).close()
        let reader = try Store(directory: directory.path, options: StoreOptions(readOnly: true))
        defer { try? reader.close() }
        let people = reader.box(for: Person.self)
        #expect(try people.count() == 0)
        let (child, _) = try ChildProcess.start(filter: "writerChild", role: "writer", directory: directory.path)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        #expect(try people.count() == 1)
        #expect(try people.query { Person.firstName == "Grace" }.build().find().map(\.age) == [85])
        #expect(try reader.info().entities.map(\.name).contains("Person"))
    }
}
