@_spi(CofferSync) import Coffer
@testable import CofferSync
import Foundation
import PostgresNIO
import Testing

/// The entity of the U+0000 tests: every shape a string can take in a synced object.
@Sync
struct NulNote: Entity {
    var id: Id = 0
    var title = ""
    var label: String?
    var tags: [String] = []
    var body: JSONValue = [:]
    var counts: [String: Int] = [:]
    var place: NulPlace?
}

/// The embedded value of ``NulNote``.
struct NulPlace: Embedded, Equatable {
    var city = ""
    var zip: String?
}

/// PostgreSQL's `text` and `jsonb` cannot hold U+0000, so a change holding it anywhere (a
/// text field, an optional, an array element, a document's string or key, a dictionary key,
/// an embedded value's leaf) can never be stored on the server. Each such change must end
/// as a rejection like any other: recorded with its values, reported, the server's state of
/// its object taken, and the rest of the queue pushed. Before, the batch's jsonb cast failed
/// (SQLSTATE 22P05) and the outbox never drained.
@Suite(.timeLimit(.minutes(2))) struct NulValueTests {
    /// One note per shape, each holding U+0000 at a different place in the string.
    static func poisoned() -> [(shape: String, field: String, note: NulNote)] {
        var shapes: [(String, String, NulNote)] = []
        var note = NulNote()
        note.title = "in\u{0}side"
        shapes.append(("text", "title", note))
        note = NulNote()
        note.title = "\u{0}"
        shapes.append(("text that is only NUL", "title", note))
        note = NulNote()
        note.label = "trailing\u{0}"
        shapes.append(("optional text", "label", note))
        note = NulNote()
        note.tags = ["fine", "\u{0}leading"]
        shapes.append(("array element", "tags", note))
        note = NulNote()
        note.body = ["outer": ["inner": .string("deep\u{0}down")]]
        shapes.append(("document string", "body", note))
        note = NulNote()
        note.body = ["k\u{0}ey": 1]
        shapes.append(("document key", "body", note))
        note = NulNote()
        note.body = [["list", .string("x\u{0}")]]
        shapes.append(("document array string", "body", note))
        note = NulNote()
        note.counts = ["a\u{0}": 2]
        shapes.append(("dictionary key", "counts", note))
        note = NulNote()
        note.place = NulPlace(city: "Pa\u{0}ris", zip: nil)
        shapes.append(("embedded leaf", "place.city", note))
        note = NulNote()
        note.place = NulPlace(city: "Paris", zip: "75\u{0}001")
        shapes.append(("embedded optional leaf", "place.zip", note))
        return shapes.map { (shape: $0.0, field: $0.1, note: $0.2) }
    }

    @Test func aStringHoldingNULAnywhereIsARejectionAndTheQueueGoesOn() async throws {
        let schema = try SyncSchema([NulNote.self], schema: uniqueSchemaName())
        let s = schema.schemaName
        try await withInstalled(schema) { connection in
            let (a, b) = (try TemporaryStore(), try TemporaryStore())
            defer { a.cleanUp(); b.cleanUp() }
            let replica = (a: try SyncReplica(store: a.store, entities: [NulNote.self], transport: try await testTransport(schema: s)),
                           b: try SyncReplica(store: b.store, entities: [NulNote.self], transport: try await testTransport(schema: s)))
            let notes = (a: a.store.box(for: NulNote.self), b: b.store.box(for: NulNote.self))

            // An object the server has; then an edit of it that puts NUL in a field.
            var known = NulNote()
            known.title = "known"
            known.tags = ["t"]
            try notes.a.put(&known)
            try await replica.a.syncNow()

            var creations: [(shape: String, field: String, id: Id)] = []
            for (shape, field, note) in Self.poisoned() {
                var note = note
                try notes.a.put(&note)
                creations.append((shape, field, note.id))
            }
            known.title = "known, now with \u{0}"
            known.tags = ["edited"]
            try notes.a.put(&known)
            var after = NulNote()
            after.title = "after"
            try notes.a.put(&after)

            let status = try await replica.a.syncNow()
            #expect(try a.store.pendingSyncCount() == 0, "the outbox drains")
            #expect(status.rejectedCount == creations.count + 1)
            #expect(status.rejections.allSatisfy { $0.reason.contains("U+0000") }, "\(status.rejections)")

            // Each refusal is kept, with its kind and a reason naming the field.
            let rejections = try a.store.syncRejections()
            #expect(rejections.count == creations.count + 1)
            for (shape, field, id) in creations {
                #expect(try notes.a.get(id) == nil, "\(shape): the refused creation is removed, as the server has no such object")
                let rejected = rejections.filter { $0.kind == .creation && $0.reason.contains("\"\(field)\"") && $0.reason.contains("U+0000") }
                #expect(!rejected.isEmpty, "\(shape): no rejection names \(field): \(rejections.map(\.reason))")
            }
            let edit = try #require(rejections.first { $0.kind == .update })
            #expect(edit.reason.contains("\"title\"") && edit.reason.contains("U+0000"), "\(edit.reason)")
            // The refused edit is undone: the server's state of the object is taken.
            let restored = try #require(try notes.a.get(known.id))
            #expect(restored.title == "known" && restored.tags == ["t"])
            #expect(try a.store.syncObjectsAwaitingServerState(entity: "NulNote").isEmpty)

            // The server holds only what could be stored; the other replica gets it.
            #expect(try await connection.value("SELECT string_agg(title, ',' ORDER BY title) FROM \(s).\"NulNote\"") == "after,known")
            #expect(try await eventually {
                try await replica.b.syncNow()
                return try notes.b.all().map(\.title).sorted() == ["after", "known"]
            })

            // And the queue goes on.
            var later = NulNote()
            later.title = "later"
            try notes.a.put(&later)
            try await replica.a.syncNow()
            #expect(try await eventually {
                try await replica.b.syncNow()
                return try notes.b.all().map(\.title).sorted() == ["after", "known", "later"]
            })
            #expect(try a.store.pendingSyncCount() == 0)
            await replica.a.transport.close()
            await replica.b.transport.close()
        }
    }
}
