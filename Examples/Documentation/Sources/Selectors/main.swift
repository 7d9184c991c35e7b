// The Selector Queries article's example: the Cloudant guide's friends.
import Coffer
import DocSupport
import Foundation

struct Pal: Entity {
    var id: Id = 0
    var name: String
    var age: Int
    var pets: [String] = []
    var town: String?
}

try enterWorkplace("Selectors")
let store = try Store(directory: "pals.coffer")
let pals = store.box(for: Pal.self)
var friends = [
    Pal(name: "mike", age: 12, pets: ["cat", "dog"], town: "Bristol"),
    Pal(name: "fred", age: 11, pets: ["fish"], town: "London"),
    Pal(name: "john", age: 34, pets: ["cat"], town: "Bristol"),
]
try pals.put(&friends)

let query = try pals.query(
    selector: #"{"age": {"$gt": 7, "$lt": 14}, "$or": [{"town": "Bristol"}, {"pets": {"$size": 1}}]}"#,
    sort: [("name", .ascending), ("age", .descending)], skip: 0, limit: 10
).build()
let page = try query.find()            // skip and limit apply to find(), findFirst(), findIds()
let total = try query.count()          // every match

check(page.map(\.name) == ["fred", "mike"] && total == 2, "the selector, sorted and paged")
try store.close()
try leaveWorkplace()
