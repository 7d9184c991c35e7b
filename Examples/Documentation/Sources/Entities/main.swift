// The Defining Entities article's examples: arrays, converted types, documents and
// embedded structs.
import Coffer
import DocSupport
import Foundation

enum Mood: String, Sendable { case happy, grumpy }

try enterWorkplace("Entities")
let store = try Store(directory: "entities.coffer")
let photos = store.box(for: Photo.self)
let swatches = store.box(for: Swatch.self)
let conversations = store.box(for: Conversation.self)
let residents = store.box(for: Resident.self)
try photos.put(Photo(tags: ["beach", "sun"], sizes: [640, 1280]))
try swatches.put(Swatch(color: Color(red: 255, green: 136, blue: 0), price: 9.5))
try conversations.put(Conversation(title: "Ops", metadata: ["backgroundColor": "red", "first": ["second": ["third": "NestedResult"]]],
                                   labels: ["team": "infra"]))
try residents.put(Resident(name: "Kari", home: Address(city: "Oslo", location: GeoPoint(latitude: 59.9))))

struct Photo: Entity {
    var id: Id = 0
    @Index var tags: [String] = []       // one index entry per distinct tag
    var sizes: [UInt32] = []
    var taken: [Date] = []
    var moods: [Mood] = []
}

let beach = try photos.query { Photo.tags.containsElement("beach") && Photo.sizes.count >= 2 }.build()
let same = try photos.query(selector: #"{"tags": "beach", "sizes": {"$size": 2}}"#).build()

struct Color: PropertyConvertible, Equatable {
    typealias StoredValue = String          // the generator reads this line
    var red: UInt8, green: UInt8, blue: UInt8
}

extension Color {                           // in an extension, so the memberwise init stays
    init(storedValue hex: String) throws {  // throws for text that is not a color
        guard hex.count == 7, hex.hasPrefix("#"), let rgb = UInt32(hex.dropFirst(), radix: 16) else {
            throw CocoaError(.coderInvalidValue)
        }
        self.init(red: UInt8(rgb >> 16), green: UInt8(rgb >> 8 & 0xFF), blue: UInt8(rgb & 0xFF))
    }
    var storedValue: String { String(format: "#%02X%02X%02X", red, green, blue) }   // "#FF8800"
}

struct Swatch: Entity {
    var id: Id = 0
    @Index var color: Color
    var link: URL?              // built in: stored as its absolute string
    @Index var price: Decimal   // built in: exact, and ordered as numbers
}

let orange = try swatches.query { Swatch.color == Color(red: 255, green: 136, blue: 0) && Swatch.price < 10 }.build()

struct Conversation: Entity {
    var id: Id = 0
    @Index var title: String
    var metadata: JSONValue = [:]          // ["backgroundColor": "red", "first": ["second": ["third": "NestedResult"]]]
    var labels: [String: String] = [:]
}

let nested = try conversations.query { Conversation.metadata["first"]["second"]["third"] == "NestedResult" }.build()
let colored = try conversations.query { Conversation.metadata["backgroundColor"].isIn(["red", "blue"]) }.build()
let mine = try conversations.query { Conversation.title == "Ops" && Conversation.labels["team"].isNotNil() }.build()
let nestedBySelector = try conversations.query(selector: #"{"metadata.first.second.third": "NestedResult"}"#).build()

struct GeoPoint: Embedded { var latitude: Double; var longitude: Double = 0 }

struct Address: Embedded {
    @Index var city: String            // indexed wherever an Address is stored
    @Name("postcode") var zip: String?
    var location: GeoPoint? = nil
}

struct Resident: Entity {
    var id: Id = 0
    var name: String
    var home: Address
    var work: Address?
}

let query = try residents.query { Resident.home.city == "Oslo" && Resident.work.isNil() }
    .ordered(by: Resident.home.location.latitude)
    .build()
let sameThing = try residents.query(selector: #"{"home.city": "Oslo", "work": {"$exists": false}}"#).build()

check(try beach.count() == 1 && (try same.count()) == 1, "array conditions")
check(try orange.find().first?.color.storedValue == "#FF8800", "a converted type round-trips")
check(try nested.count() == 1 && (try colored.count()) == 1 && (try mine.count()) == 1 && (try nestedBySelector.count()) == 1, "document paths")
check(try query.count() == 1 && (try sameThing.count()) == 1, "embedded leaves")
try store.close()
try leaveWorkplace()
