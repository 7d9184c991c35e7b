import Coffer
import Foundation

enum Genre: String, Sendable {
    case fiction, science, history
}

/// A place, stored inside the entities that use it (see `Embedded`).
struct Place: Embedded {
    @Index var city: String
    var country: String
}

struct Author: Entity {
    var id: Id = 0
    @Index var name: String
    var born: Int
    var country: String?
    var birthplace: Place? = nil
}

struct Book: Entity {
    var id: Id = 0
    @Index var title: String
    var authorName: String
    var genre: Genre
    var pages: Int32
    var rating: Double
    var published: Date
    var tags: [String] = []
    @FullText(.porter) var summary: String = ""
    /// Free-form details, queried by key: `Book.details["format"] == "paperback"`.
    var details: [String: String] = [:]
    @Unique var isbn: UUID = UUID()
    @CreatedAt var added: Date = .distantPast
    @UpdatedAt var changed: Date = .distantPast
    @Transient var selected = false
}
