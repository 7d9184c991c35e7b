@testable import Coffer
import Foundation
import Testing

@Suite(.serialized) struct SchemaAcrossProcessesTests {
    /// The child: a newer build that adds an indexed property and stores objects with it.
    @Test func newerBuildChild() throws {
        guard ChildProcess.role == "newer-build", let directory = ChildProcess.directory else { return }
        let store = try Store(directory: directory, options: StoreOptions(durability: .noSync))
        try store.box(for: V2.Poem.self).put((1...5).map { V2.Poem(title: "new \($0)", rating: $0) })
        try store.close()
    }

    /// Regression: a process that had bound an entity before another build changed its
    /// schema kept writing without maintaining that build's index.
    @Test func olderBuildKeepsTheNewerBuildsIndexMaintained() throws {
        guard ChildProcess.role == nil else { return }
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = try Store(directory: directory.path, options: StoreOptions(durability: .noSync))
        defer { try? store.close() }
        let poems = store.box(for: Poem.self)
        try poems.put(Poem(title: "old"))   // binds Poem before the newer build runs
        let (child, _) = try ChildProcess.start(filter: "newerBuildChild", role: "newer-build", directory: directory.path)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        // The older build inserts, updates and removes while the newer build's index exists.
        try poems.put(Poem(title: "older insert"))
        var second = try #require(try poems.get(2))
        second.title = "changed"
        try poems.put(&second)
        try poems.remove(3)
        #expect(try IndexProbe.isConsistent(store, V2.Poem.self))
        #expect(try store.verify().isIntact)
        let newer = store.box(for: V2.Poem.self)
        #expect(try newer.query { V2.Poem.rating >= 1 }.build().find().map(\.rating) == [1, 3, 4, 5])
    }
}
