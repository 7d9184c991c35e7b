import Coffer
import Foundation

enum Mood: String, Sendable {
    case happy, grumpy
}

enum Level: Int32, Sendable {
    case low = 1, high = 99
}

/// One property of every supported type, plain and optional.
struct Everything: Entity {
    var id: Id = 0
    var bool = false
    var int: Int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var float: Float = 0
    var double: Double = 0
    var string: String = ""
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var data = Data()
    var uuid = UUID()
    var strings: [String] = []
    var ints: [Int] = []
    var doubles: [Double] = []
    var mood: Mood = .happy
    var level: Level = .low

    var optBool: Bool?
    var optInt: Int?
    var optInt8: Int8?
    var optInt16: Int16?
    var optInt32: Int32?
    var optInt64: Int64?
    var optUInt8: UInt8?
    var optUInt16: UInt16?
    var optUInt32: UInt32?
    var optUInt64: UInt64?
    var optFloat: Float?
    var optDouble: Double?
    var optString: String?
    var optDate: Date?
    var optData: Data?
    var optUUID: UUID?
    var optStrings: [String]?
    var optInts: [Int]?
    var optDoubles: [Double]?
    var optMood: Mood?
    var optLevel: Optional<Level> = nil

    @Transient var scratch = 42
}

struct Note: Entity {
    var id: Id = 0
    var title: String
    @Name("body_text") var body: String = ""
    var rank: Int = 0
}

/// Later versions of `Note`, deliberately stored as the same entity.
enum Later {
    /// One property renamed, one removed, two added.
    @StoredAs("Note")
    struct Note: Entity {
        var id: Id = 0
        @Renamed(from: "title") var heading: String
        @Name("body_text") var body: String = ""
        var pinned: Bool = false
        var rating: Double?
    }
}

enum Incompatible {
    /// `title` changed from String to Int.
    @StoredAs("Note")
    struct Note: Entity {
        var id: Id = 0
        var title: Int = 0
    }
}

/// Indexes of every indexable kind, a unique external key, and timestamps.
struct Contact: Entity {
    var id: Id = 0
    @Unique var email: String?
    @Index var externalId: String?
    @Index var city: String = ""
    @Index var age: Int = 0
    @Index var score: Double = 0
    @Index var born: Date?
    @Index var level: Level?
    @Index var active: Bool = true
    @Index var token: UUID?
    var note: String = ""
    @CreatedAt var created: Date = .distantPast
    @UpdatedAt var modified: Date = .distantPast
}

struct Account: Entity {
    var id: Id = 0
    @Unique(onConflict: .replace) var handle: String
    var balance: Int = 0
}

struct Profile: Entity {
    var id: Id = 0
    @Unique(onConflict: .update) var key: String
    var value: String = ""
}

/// `Note` with an index added on `title` and `rank` widened (Int stays Int).
enum Indexed {
    @StoredAs("Note")
    struct Note: Entity {
        var id: Id = 0
        @Index var title: String
        @Name("body_text") var body: String = ""
        @Unique var rank: Int = 0
    }
}

/// The same person twice: every queried property indexed, and none indexed, so that index
/// and scan paths can be compared on the same data.
protocol PersonLike: Entity {
    static var id: Property<Self, Id> { get }
    static var name: Property<Self, String> { get }
    static var age: Property<Self, Int> { get }
    static var score: Property<Self, Double> { get }
    static var nick: Property<Self, String?> { get }
    static var tags: Property<Self, [String]> { get }
    static var born: Property<Self, Date> { get }
    static var level: Property<Self, Level?> { get }
    var name: String { get }
    var age: Int { get }
    var score: Double { get }
    var nick: String? { get }
    var tags: [String] { get }
    var born: Date { get }
    var level: Level? { get }
    init(id: Id, name: String, age: Int, score: Double, nick: String?, tags: [String], born: Date, level: Level?)
}

struct IndexedPerson: Entity, PersonLike {
    var id: Id = 0
    @Index var name: String
    @Index var age: Int
    @Index var score: Double
    @Index var nick: String?
    var tags: [String]
    @Index var born: Date
    @Index var level: Level?
}

struct PlainPerson: Entity, PersonLike {
    var id: Id = 0
    var name: String
    var age: Int
    var score: Double
    var nick: String?
    var tags: [String]
    var born: Date
    var level: Level?
}

/// The people of ObjectBox's query guide.
struct Person: Entity {
    var id: Id = 0
    @Index var firstName: String
    var lastName: String
    var age: Int
    var email: String?
    var birthday: Date?
}

struct CocoaPod: Entity {
    var id: Id = 0
    var name: String
    var rating: Double
}

struct Customer: Entity {
    var id: Id = 0
    @Index var name: String
    @Backlink(\Order.customer) var orders: ToMany<Order> = []
}

struct Order: Entity {
    var id: Id = 0
    var date: Date
    var total: Double
    var customer: ToOne<Customer> = nil
}

/// A self-relation, for cycles.
struct Node: Entity {
    var id: Id = 0
    var label: String
    var next: ToOne<Node> = nil
}

struct Student: Entity {
    var id: Id = 0
    @Index var name: String
    var teachers: ToMany<Teacher> = []
}

struct Teacher: Entity {
    var id: Id = 0
    @Index var name: String
    @Backlink(\Student.teachers) var students: ToMany<Student> = []
}

/// An enum written the way Swift developers write internal enums: no explicit `Sendable`.
enum Genre: String {
    case fiction, poetry
}

struct Poem: Entity {
    var id: Id = 0
    var title: String
    var genre: Genre = .poetry
    var maybe: Genre?
}

/// Two unrelated entities with one simple name: they must not share a stored entity.
enum Shop {
    struct Item: Entity {
        var id: Id = 0
        var price: Double = 0
    }
}

enum Inventory {
    struct Item: Entity {
        var id: Id = 0
        var sku: String = ""
    }

    @StoredAs("InventoryBin")
    struct Bin: Entity {
        var id: Id = 0
        var label: String = ""
        var item: ToOne<Inventory.Item> = nil
    }
}

/// Links to an entity whose stored name differs from its type name.
struct Shelf: Entity {
    var id: Id = 0
    var bin: ToOne<Inventory.Bin> = nil
}

/// A newer build of `Poem` with an indexed property the older build does not declare.
enum V2 {
    @StoredAs("Poem")
    struct Poem: Entity {
        var id: Id = 0
        var title: String
        var genre: Genre = .poetry
        var maybe: Genre?
        @Index var rating: Int = 0
    }
}

/// Layer's message list: conversation, position, unread flag.
struct Message: Entity, Equatable {
    var id: Id = 0
    @Index var conversation: Int
    var position: Int
    var isUnread: Bool = true
    var text: String = ""
}

/// Full-text search: a stemmed body and a simple title.
struct Article: Entity, Equatable {
    var id: Id = 0
    @FullText(.simple) var title: String?
    @FullText(.porter) var body: String = ""
    var year: Int = 2000
}

enum Unindexed {
    /// `Article` without full-text indexes.
    @StoredAs("Article")
    struct Article: Entity {
        var id: Id = 0
        var title: String?
        var body: String = ""
        var year: Int = 2000
    }
}

enum Resimple {
    /// `Article` with its body indexed by the simple tokenizer instead of porter.
    @StoredAs("Article")
    struct Article: Entity {
        var id: Id = 0
        @FullText(.simple) var title: String?
        @FullText(.simple) var body: String = ""
        var year: Int = 2000
    }
}

/// The documents of Cloudant Query's guide, flattened (the pet is a species string).
struct Pal: Entity, Equatable {
    var id: Id = 0
    var name: String
    var age: Int
    var pets: [String] = []
    var town: String?
    @FullText(.porter) var comment: String = ""
    var born: Date? = nil
}

/// Embedded values: nested, optional and not, with an indexed leaf, a renamed leaf and an
/// enum leaf.
struct GeoPoint: Embedded, Equatable {
    var latitude: Double
    var longitude: Double = 0
}

struct Address: Embedded, Equatable {
    @Index var city: String
    @Name("postcode") var zip: String?
    var location: GeoPoint? = nil
    var level: Level = .low
}

struct Resident: Entity, Equatable {
    var id: Id = 0
    var name: String
    var home: Address
    var work: Address?
    var origin: GeoPoint = GeoPoint(latitude: 0)
}

/// An older build of `Resident`: no `work`, no `origin`, and an `Address` without
/// `location` and `level`.
enum EmbeddedV1 {
    struct Address: Embedded {
        @Index var city: String
        @Name("postcode") var zip: String?
    }

    @StoredAs("Resident")
    struct Resident: Entity {
        var id: Id = 0
        var name: String
        var home: Address
    }
}

/// Arrays of every element type.
struct Arrays: Entity, Equatable {
    var id: Id = 0
    var bools: [Bool] = []
    var int8s: [Int8] = []
    var int16s: [Int16] = []
    var int32s: [Int32] = []
    var int64s: [Int64] = []
    var uints: [UInt] = []
    var uint8s: [UInt8] = []
    var uint16s: [UInt16] = []
    var uint32s: [UInt32] = []
    var uint64s: [UInt64] = []
    var floats: [Float] = []
    var dates: [Date] = []
    var uuids: [UUID] = []
    var moods: [Mood] = []
    var levels: [Level]? = nil
}

/// Element indexes: `@Index` on arrays (one entry per distinct element).
struct Tagged: Entity, Equatable {
    var id: Id = 0
    var name: String = ""
    @Index var tags: [String] = []
    @Index var codes: [Int32]? = nil
    @Index var flags: [Bool] = []
    @Index var moods: [Mood] = []
}

/// An element index of floating-point values (where -0.0 and 0.0 are one value).
struct Weighed: Entity, Equatable {
    var id: Id = 0
    @Index var weights: [Double] = []
}

/// A unique floating-point value (where -0.0 and 0.0 are one value).
struct Measured: Entity, Equatable {
    var id: Id = 0
    @Unique var weight: Double
    var label: String = ""
}

/// `Tagged` as an older build declared it, without the indexes.
enum TaggedV1 {
    @StoredAs("Tagged")
    struct Tagged: Entity {
        var id: Id = 0
        var name: String = ""
        var tags: [String] = []
        var codes: [Int32]? = nil
        var flags: [Bool] = []
        var moods: [Mood] = []
    }
}

/// A user type stored through a converter: a color as its hex text.
struct Color: PropertyConvertible, Equatable, Comparable {
    typealias StoredValue = String
    var red: UInt8, green: UInt8, blue: UInt8

    struct NotHex: Error { let text: String }

    init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    init(storedValue hex: String) throws {
        guard hex.count == 7, hex.first == "#", let rgb = UInt32(hex.dropFirst(), radix: 16) else { throw NotHex(text: hex) }
        red = UInt8(rgb >> 16 & 0xFF)
        green = UInt8(rgb >> 8 & 0xFF)
        blue = UInt8(rgb & 0xFF)
    }

    var storedValue: String { "#" + [red, green, blue].map { String(format: "%02X", $0) }.joined() }

    static func < (a: Color, b: Color) -> Bool { a.storedValue < b.storedValue }
}

/// Converted properties: a user converter and the built-in URL and Decimal.
struct Swatch: Entity, Equatable {
    var id: Id = 0
    @Index var color: Color
    var accent: Color?
    var link: URL?
    @Index var price: Decimal = 0
}

/// Layer's conversations: nested JSON metadata and dictionaries, queried by path.
struct Conversation: Entity, Equatable {
    var id: Id = 0
    @Index var title: String
    var metadata: JSONValue = [:]
    var labels: [String: String] = [:]
    var counts: [String: Int]? = nil
    var scores: [String: Double] = [:]
    var flags: [String: Bool] = [:]
}

/// Arrays of embedded values (stored as documents, queried by path, any element matching).
struct Route: Entity, Equatable {
    var id: Id = 0
    var name: String
    var stops: [Address] = []
    var detours: [GeoPoint]? = nil
}

/// Builds that lack a property another build declares, stored as the same entity.
enum Lacking {
    /// `Student` without its `ToMany<Teacher>`: a build from before the relation existed.
    @StoredAs("Student")
    struct Student: Entity {
        var id: Id = 0
        @Index var name: String
    }

    /// `Article` without `body` (and its full-text index) at all.
    @StoredAs("Article")
    struct Article: Entity {
        var id: Id = 0
        var title: String?
        var year: Int = 2000
    }
}

/// Full-text properties, one stored under another name.
struct TextNote: Entity {
    var id: Id = 0
    @FullText(.simple) var heading: String = ""
    @FullText(.simple) @Name("body_text") var body: String = ""
}
