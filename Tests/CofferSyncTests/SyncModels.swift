import Coffer
import Foundation

/// One property of every type the sync schema maps.
struct Sample: Entity {
    var id: Id = 0
    var flag = false
    var int: Int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var uint: UInt = 0
    var float: Float = 0
    var double: Double = 0
    var string = ""
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var data = Data()
    var bytes: [UInt8] = []
    var uuid = UUID()
    var strings: [String] = []
    var ints: [Int] = []
    var int8s: [Int8] = []
    var uint64s: [UInt64] = []
    var doubles: [Double] = []
    var floats: [Float] = []
    var dates: [Date] = []
    var bools: [Bool] = []
    var uuids: [UUID] = []
    var document: JSONValue = [:]
    var counts: [String: Int] = [:]
    var optionalText: String?
    var home: Place?
    var owner: ToOne<Owner> = nil
    var friends: ToMany<Owner> = []
}

struct Place: Embedded, Equatable {
    var city = ""
    var zip: String?
}

struct Owner: Entity {
    var id: Id = 0
    var name = ""
    @Backlink(\Sample.owner) var samples: ToMany<Sample> = []
}

/// `Note` as an older build declared it (no `pinned`), and as a newer one does.
enum NoteV1 {
    @StoredAs("Note")
    struct Note: Entity {
        var id: Id = 0
        var title = ""
    }
}

enum NoteV2 {
    @StoredAs("Note")
    struct Note: Entity {
        var id: Id = 0
        var title = ""
        var pinned = false
    }
}

/// An entity with a unique property: the server gives `code` a unique index.
enum Tagged {
    @StoredAs("Tag")
    struct Tag: Entity {
        var id: Id = 0
        @Unique var code: String?
        var label = ""
    }
}

/// A small typical object for measuring push throughput.
struct BenchItem: Entity {
    var id: Id = 0
    var title = ""
    var count = 0
    var score = 0.0
    var done = false
}

/// A synced entity: `coffer sync install` builds its table from the store's catalog.
@Sync
struct Chore: Entity {
    var id: Id = 0
    var title = ""
    @Unique var code: String?
    var done = false
}

/// A property stored under a name the server's pull function uses for its own columns.
struct WorkingColumnClash: Entity {
    var id: Id = 0
    @Name("_coffer_bytes") var size: Int = 0
}
